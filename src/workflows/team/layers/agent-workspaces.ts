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
import { basename, dirname, join } from 'node:path';
import { Git } from '../../../git/git.js';
import type { TeamTask } from '../types.js';
import type { IterationWorkspace } from '../workspace.js';
import {
  ALL_AGENTS,
  layerBaseRef,
  layerCount,
  layersOf,
  phaseTasks,
  REVIEW_FIXES_TASK,
  tasksFolder,
  tasksOfLayer,
  taskWorktree,
  type LayerTaskInput,
} from './layer-plan.js';

/** Where an agent works on one of its tasks: the task's worktree, or read-only with why. */
type TaskSpace = { task: string; worktree: string } & ({ readOnly?: undefined } | { readOnly: string });

/** One agent's place during the implementation phase: its tasks of the layer, in `tasks.json` order. */
export type AgentWorkspace =
  { kind: 'tasks'; tasks: TaskSpace[] } | { kind: 'read-only'; worktree: string; why: string };

/**
 * Each agent's workspace for the current layer, or null when all agents share the iteration's
 * workspace (before implementation, no tasks, or the layer not set up yet: what they write there
 * is committed into the layer's base by setup, and verified with the layer by merge). Once every
 * layer is merged no merge would verify the workspace again, so from then on (the rest of the
 * implementation phase, and code review until its fix worktree is set up) agents only read.
 */
export async function agentWorkspaces(input: {
  phase: string;
  layer: number;
  workspace: IterationWorkspace;
  tasks: readonly TeamTask[] | null;
  agents: readonly string[];
}): Promise<Map<string, AgentWorkspace> | null> {
  const all: LayerTaskInput[] | null = phaseTasks(input.tasks, input.phase, input.layer);
  if ((input.phase !== 'implementation' && input.phase !== 'code-review') || all === null) return null;
  const readOnly = (why: string): AgentWorkspace => ({ kind: 'read-only', worktree: input.workspace.workspace, why });
  const everyone = (why: string) =>
    new Map(input.agents.map((agent): [string, AgentWorkspace] => [agent, readOnly(why)]));
  const layerTasks = tasksOfLayer(all, input.layer);
  if (layerTasks.length === 0) {
    if (input.phase === 'code-review')
      return everyone(
        `Layer ${input.layer} is not merged yet, so the review's fixes have nowhere verified to go: ` +
          "the product manager merges it first ('ratchet team worktrees merge').",
      );
    return layerCount(all) > 0 && input.layer >= layerCount(all)
      ? everyone(
          "Every layer is merged, so nothing more is written in this phase: fixes go through the code review's fix worktree, verified on merge.",
        )
      : null;
  }
  const base = await new Git(input.workspace.workspace).revParse(layerBaseRef(input.workspace.branch, input.layer));
  if (base === null)
    return input.phase === 'code-review'
      ? everyone(
          "The review's fix worktree is not set up yet, so nothing can be written now: the product manager runs 'ratchet team worktrees setup' to open it (its changes are verified when 'ratchet team worktrees merge' merges them).",
        )
      : null;
  const assignee = new Map(all.map((task) => [task.id, task.assigned_to]));
  const spaces = new Map<string, AgentWorkspace>();
  for (const agent of input.agents) {
    const owned = layerTasks.filter((candidate) => {
      const owner = assignee.get(candidate.id);
      return owner === agent || owner === ALL_AGENTS;
    });
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
  // A review round's fix worktree (`phaseTasks`): its layer is any past the last.
  const folder = tasksFolder(workspace.workspace);
  if (dirname(worktree) === folder && new RegExp(`^L\\d+-${REVIEW_FIXES_TASK}$`).test(basename(worktree))) return true;
  if (tasks === null) return false;
  return layersOf(tasks).some((task) => taskWorktree(workspace.workspace, task) === worktree);
}
