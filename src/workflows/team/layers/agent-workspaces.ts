/**
 * Where each agent's file tools work. In every phase but implementation, and in implementation
 * until `ratchet team worktrees setup` has made the current layer's worktrees, all agents share
 * the iteration's workspace. Once the layer is set up, an agent works in the worktree of its task
 * of that layer (`assigned_to`), so its writes land on the task's branch and `review` and `merge`
 * see them; an agent with no task in the layer (or whose task's worktree is gone) reads the
 * iteration's workspace and writes nothing: the seed gives unassigned work to no one, and a write
 * there would slip into the next layer's base unreviewed.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Git } from '../../../git/git.js';
import type { TeamTask } from '../types.js';
import type { IterationWorkspace } from '../workspace.js';
import { layerBaseRef, layersOf, tasksOfLayer, taskWorktree } from './layer-plan.js';

/** One agent's place during the implementation phase. */
export type AgentWorkspace =
  { kind: 'task'; task: string; worktree: string } | { kind: 'read-only'; worktree: string; why: string };

/**
 * Each agent's workspace for the current layer, or null when all agents share the iteration's
 * workspace (not the implementation phase, no tasks, or the layer not set up yet). An agent with
 * several tasks in one layer works in the first `tasks.json` lists.
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
    const task = layerTasks.find((candidate) => assignee.get(candidate.id) === agent);
    if (task === undefined) {
      spaces.set(
        agent,
        readOnly(
          `You have no task in layer ${input.layer}, so you may read the iteration's files but not write: ` +
            'review and advise the agents who implement it.',
        ),
      );
      continue;
    }
    const worktree = taskWorktree(input.workspace.workspace, task);
    // A worktree has a `.git` file; a directory without one is not the task's checkout.
    spaces.set(
      agent,
      existsSync(join(worktree, '.git'))
        ? { kind: 'task', task: task.id, worktree }
        : readOnly(
            `The worktree of your task ${task.id} is missing, so nothing can be written now: ` +
              "the product manager runs 'ratchet team worktrees setup' to make it again.",
          ),
    );
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
