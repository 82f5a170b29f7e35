/**
 * Where each agent's file tools work. In every phase but implementation, and in implementation
 * until `ratchet team worktrees setup` has made the current layer's worktrees, all agents share
 * the iteration's workspace. Once the layer is set up, an agent works in the worktrees of its
 * tasks of that layer (`assigned_to`), so its writes for a task land on that task's branch and
 * `review` and `merge` see them (an agent with several tasks names the task in each file tool
 * call: task-router.ts); an agent with no task in the layer reads the iteration's workspace and
 * writes nothing: the seed gives unassigned work to no one, and a write there would slip into
 * the next layer's base unreviewed. A task whose worktree is gone is read-only the same way.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Git } from '../../../git/git.js';
import type { TeamTask } from '../types.js';
import type { IterationWorkspace } from '../workspace.js';
import { layerBaseRef, layersOf, tasksOfLayer, taskWorktree } from './layer-plan.js';

/** Where an agent works on one of its tasks: the task's worktree, or read-only with why. */
export type TaskSpace = { task: string; worktree: string } & ({ readOnly?: undefined } | { readOnly: string });

/** One agent's place during the implementation phase: its tasks of the layer, in `tasks.json` order. */
export type AgentWorkspace =
  { kind: 'tasks'; tasks: TaskSpace[] } | { kind: 'read-only'; worktree: string; why: string };

/**
 * Each agent's workspace for the current layer, or null when all agents share the iteration's
 * workspace (not the implementation phase, no tasks, or the layer not set up yet).
 */
export async function agentWorkspaces(input: {
  phase: string;
  layer: number;
  workspace: IterationWorkspace;
  tasks: readonly TeamTask[] | null;
  agents: readonly string[];
}): Promise<Map<string, AgentWorkspace> | null> {
  if (input.phase !== 'implementation' || input.tasks === null) return null;
  const layerTasks = tasksOfLayer(input.tasks, input.layer);
  if (layerTasks.length === 0) return null;
  const base = await new Git(input.workspace.workspace).revParse(layerBaseRef(input.workspace.branch, input.layer));
  if (base === null) return null;
  const assignee = new Map(input.tasks.map((task) => [task.id, task.assigned_to]));
  const spaces = new Map<string, AgentWorkspace>();
  const readOnly = (why: string): AgentWorkspace => ({ kind: 'read-only', worktree: input.workspace.workspace, why });
  for (const agent of input.agents) {
    const owned = layerTasks.filter((candidate) => assignee.get(candidate.id) === agent);
    if (owned.length === 0) {
      spaces.set(
        agent,
        readOnly(
          `You have no task in layer ${input.layer}, so you may read the iteration's files but not write: ` +
            'review and advise the agents who implement it.',
        ),
      );
      continue;
    }
    const tasks = owned.map((task): TaskSpace => {
      const worktree = taskWorktree(input.workspace.workspace, task);
      // A worktree has a `.git` file; a directory without one is not the task's checkout.
      return existsSync(join(worktree, '.git'))
        ? { task: task.id, worktree }
        : {
            task: task.id,
            worktree: input.workspace.workspace,
            readOnly:
              `The worktree of your task ${task.id} is missing, so nothing can be written now: ` +
              "the product manager runs 'ratchet team worktrees setup' to make it again.",
          };
    });
    spaces.set(agent, { kind: 'tasks', tasks });
  }
  return spaces;
}

/**
 * Whether `worktree` is one an approval of this iteration may write into: its workspace or the
 * worktree of one of its tasks (an approval file names its target, and files can be edited).
 */
export function isIterationWorktree(
  worktree: string,
  workspace: IterationWorkspace,
  tasks: readonly TeamTask[] | null,
): boolean {
  if (worktree === workspace.workspace) return true;
  if (tasks === null) return false;
  return layersOf(tasks).some((task) => taskWorktree(workspace.workspace, task) === worktree);
}
