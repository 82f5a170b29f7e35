/**
 * Which tasks of an iteration's `tasks.json` make up a dependency layer, and the git names their
 * worktrees get. Pure: `ratchet team worktrees setup|review|merge` (engine/team/) reads the files
 * and runs git, and the implementation phase's sessions route each agent's file tools to its
 * task's worktree (agent-workspaces.ts); this decides the names both use.
 */
import { join, resolve } from 'node:path';
import { RatchetError } from '../../../core/errors.js';

/** What the layer commands read of a task (the rest of `tasks.json` is the conversation's). */
export interface LayerTaskInput {
  id: string;
  /** Written by the planning extraction; computed from `depends_on` when missing. */
  layer?: number | undefined;
  depends_on?: readonly string[] | undefined;
  /** The agent who implements it; empty or missing: nobody (see `unassignedTasks`). */
  assigned_to?: string | undefined;
}

/** A task of the layer at hand, with the names of its branch. */
export interface LayerTask {
  id: string;
  layer: number;
}

/**
 * Task and iteration ids end up in branch names and directory names, and a model wrote them (the
 * planning extraction): only letters, digits, `_`, `-` and single dots inside, so that no id can
 * climb out of a directory (`..`), start an option (`-`), or make a ref git refuses.
 */
const SAFE_ID = /^[A-Za-z0-9](?:[A-Za-z0-9_-]|\.(?![.]|lock$|$)){0,63}$/;

export function requireSafeId(kind: 'task' | 'iteration', id: string): string {
  if (SAFE_ID.test(id)) return id;
  throw new RatchetError('usage', `The ${kind} id ${JSON.stringify(id)} cannot name a branch or a directory.`, {
    hint: `A ${kind} id is letters, digits, '-', '_' and single dots inside (at most 64 characters): fix it in ${kind === 'task' ? 'tasks.json' : 'iteration.json'}.`,
  });
}

/**
 * Each task's layer: its own `layer` when the extraction wrote one, else 0 without dependencies
 * and one more than its deepest dependency otherwise (seed 001, tasks.py `compute_layers`).
 * Refuses an unknown dependency, a cycle, a duplicate id and an unsafe id.
 */
export function layersOf(tasks: readonly LayerTaskInput[]): LayerTask[] {
  const byId = new Map<string, LayerTaskInput>();
  for (const task of tasks) {
    requireSafeId('task', task.id);
    if (byId.has(task.id))
      throw new RatchetError('usage', `tasks.json lists task ${task.id} twice.`, {
        hint: 'Give each task its own id.',
      });
    byId.set(task.id, task);
  }
  const layers = new Map<string, number>();
  const visiting = new Set<string>();
  const layerOf = (id: string): number => {
    const known = layers.get(id);
    if (known !== undefined) return known;
    const task = byId.get(id);
    if (task === undefined) throw new RatchetError('internal', `No task ${id}.`);
    if (task.layer !== undefined) {
      layers.set(id, task.layer);
      return task.layer;
    }
    if (visiting.has(id))
      throw new RatchetError('usage', `The dependencies of task ${id} form a cycle.`, {
        hint: 'Fix depends_on in tasks.json so that no task depends on itself through others.',
      });
    visiting.add(id);
    let layer = 0;
    for (const dependency of task.depends_on ?? []) {
      if (!byId.has(dependency))
        throw new RatchetError('usage', `Task ${id} depends on ${dependency}, which tasks.json does not list.`, {
          hint: 'Fix depends_on in tasks.json.',
        });
      layer = Math.max(layer, layerOf(dependency) + 1);
    }
    visiting.delete(id);
    layers.set(id, layer);
    return layer;
  };
  return tasks.map((task) => ({ id: task.id, layer: layerOf(task.id) }));
}

/** The `assigned_to` of a task every agent of the team works on (the review's fix task). */
export const ALL_AGENTS = '*';

/** The id of the code review's fix task (one per review round, each a layer of its own). */
export const REVIEW_FIXES_TASK = 'code-review-fixes';

/**
 * The tasks the layer commands and the agents' file tools work with in `phase`: `tasks.json`'s,
 * and in code review, once every layer is merged (`layer` past the last), the fix task of the
 * review round at `layer`, which every agent writes in. Fixes found in review so go through a
 * worktree and `merge` with its verifier like any layer: after the last layer is merged nothing
 * reaches the iteration's branch unverified.
 */
export function phaseTasks<T extends LayerTaskInput>(
  tasks: readonly T[] | null,
  phase: string,
  layer: number,
): Array<T | LayerTaskInput> | null {
  if (phase !== 'code-review') return tasks === null ? null : [...tasks];
  const all = tasks ?? [];
  if (layer < layerCount(all)) return [...all];
  return [...all, { id: REVIEW_FIXES_TASK, layer, depends_on: [], assigned_to: ALL_AGENTS }];
}

/** The tasks of `layer`, in the order `tasks.json` lists them (the order `merge` merges them in). */
export function tasksOfLayer(tasks: readonly LayerTaskInput[], layer: number): LayerTask[] {
  return layersOf(tasks).filter((task) => task.layer === layer);
}

/**
 * The tasks of `layer` nobody implements: no `assigned_to`, or one that names no agent of the
 * team (`agents`; a hand-edited tasks.json can name anyone). No agent's file tools write in
 * their worktrees, so `merge` would take them in empty.
 */
export function unassignedTasks(tasks: readonly LayerTaskInput[], layer: number, agents?: readonly string[]): string[] {
  const owner = new Map(tasks.map((task) => [task.id, task.assigned_to?.trim() ?? '']));
  return tasksOfLayer(tasks, layer)
    .filter((task) => {
      const agent = owner.get(task.id) ?? '';
      if (agent === ALL_AGENTS) return false;
      return agent === '' || (agents !== undefined && !agents.includes(agent));
    })
    .map((task) => task.id);
}

/** The number of layers (one more than the highest); 0 without tasks. */
export function layerCount(tasks: readonly LayerTaskInput[]): number {
  return Math.max(-1, ...layersOf(tasks).map((task) => task.layer)) + 1;
}

/** A task's branch in a layer: beside the iteration's (`<iteration branch>-L<layer>-<task>`). */
export function taskBranch(iterationBranch: string, task: LayerTask): string {
  return `${iterationBranch}-L${task.layer}-${requireSafeId('task', task.id)}`;
}

/**
 * The folder of an iteration's task worktrees: `<iteration worktree>-tasks/`, beside the
 * iteration's worktree (so as unique as it is) and outside it, so that no file tool rooted in
 * one of them reaches another.
 */
export function tasksFolder(iterationWorktree: string): string {
  return `${resolve(iterationWorktree)}-tasks`;
}

/** A task's worktree in its layer: `<tasks folder>/L<layer>-<task>`. */
export function taskWorktree(iterationWorktree: string, task: LayerTask): string {
  return join(tasksFolder(iterationWorktree), `L${task.layer}-${requireSafeId('task', task.id)}`);
}

/**
 * The ref that records the commit a layer's task branches started from (what `review` diffs
 * against): outside `refs/heads/`, so no one takes it for a branch.
 */
export function layerBaseRef(iterationBranch: string, layer: number): string {
  return `refs/ratchet-team/${iterationBranch}/layer-${layer}-base`;
}
