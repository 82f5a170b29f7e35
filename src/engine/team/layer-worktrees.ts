/**
 * `ratchet team worktrees setup|review|merge`: the implementation phase's per-task worktrees for
 * the iteration's current dependency layer (seed 001, worktree management; R3's
 * `auto_commit_layer_worktrees`). Nothing here touches the user's checkout or branch: the
 * iteration has a branch of its own (`ratchet/team-<iteration>`) and a worktree under
 * `$RATCHET_HOME`, each task of a layer a branch and worktree started from the iteration's branch,
 * and `merge` merges the layer into the iteration's branch, verifies it, and only then says the
 * next layer may start. The user takes the iteration's branch into theirs with git when done.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ResolvedConfig } from '../../config/resolved.js';
import { RatchetError } from '../../core/errors.js';
import type { UnsafeEntry } from '../../core/unsafe-entry.js';
import { Git } from '../../git/git.js';
import { acquireRepoLock } from '../../git/repo-lock.js';
import type { DiffStat } from '../../git/types.js';
import { unsafeChanges, unsafeUncommitted } from '../../git/unsafe-entries.js';
import type { ProcessRunner } from '../../process/types.js';
import {
  iterationBranch,
  layerBaseRef,
  layerCount,
  requireSafeId,
  taskBranch,
  tasksOfLayer,
  type LayerTask,
  type LayerTaskInput,
} from '../../workflows/team/layers/layer-plan.js';
import { homeFolderOf } from '../project-folders.js';
import { addRunWorktree, requireCommit, shareDependencies } from '../worktree-setup.js';
import { verifyLayer, type LayerVerification } from './layer-verifier.js';

/** The iteration and layer the commands work on, as the team's stores hold them. */
export interface TeamLayerTarget {
  /** The user's repository (its root). */
  repoRoot: string;
  /** `$RATCHET_HOME`: the worktrees live under it. */
  home: string;
  iterationId: string;
  /** The iteration's `current_layer`. */
  layer: number;
  /** The iteration's `tasks.json`. */
  tasks: readonly LayerTaskInput[];
}

/** Where a task of the layer works. */
export interface LayerTaskSpace {
  id: string;
  branch: string;
  worktree: string;
}

export interface LayerSetup {
  iterationBranch: string;
  iterationWorktree: string;
  /** The commit every task branch of the layer started from. */
  base: string;
  tasks: Array<LayerTaskSpace & { made: 'created' | 'reattached' | 'existing' }>;
}

/** One task's branch as `review` shows it. */
export type LayerTaskReview = LayerTaskSpace &
  (
    | { status: 'missing' }
    | {
        /** `empty`: no commit and no change yet; `merged`: in the iteration's branch; `ready`: commits to merge. */
        status: 'empty' | 'ready' | 'merged';
        /** Committed changes since the layer's base. */
        diff: string;
        stat: DiffStat;
        /** Files changed in the worktree but not committed (`merge` commits them first). */
        uncommitted: string[];
      }
  );

export interface LayerReview {
  iterationBranch: string;
  layer: number;
  base: string;
  tasks: LayerTaskReview[];
}

/** How `merge` ended. In every case but `merged`, the iteration's branch is as it was before. */
export type LayerMerge =
  | {
      outcome: 'merged';
      /** The tasks merged now (those merged before are left out). */
      merged: string[];
      head: string;
      verification: LayerVerification;
      /** The iteration's next `current_layer`. */
      nextLayer: number;
      /** Whether that is past the last layer (every task is merged). */
      done: boolean;
    }
  | { outcome: 'conflict'; task: string; branch: string; files: string[]; worktree: string }
  | { outcome: 'unsafe'; task: string; entries: UnsafeEntry[] }
  | { outcome: 'red'; verification: LayerVerification };

export interface LayerMergeOptions extends TeamLayerTarget {
  config: ResolvedConfig;
  runner: ProcessRunner;
  env: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
}

/**
 * `$RATCHET_HOME/worktrees/<repo>-<hash>/team-<iteration>/`: one folder per repository (two
 * repositories may both have an `iter-1`), the iteration's worktree and its tasks' inside.
 */
function iterationFolder(target: TeamLayerTarget): string {
  return join(
    homeFolderOf(target.home, 'worktrees', target.repoRoot),
    `team-${requireSafeId('iteration', target.iterationId)}`,
  );
}

function spaceOf(target: TeamLayerTarget, task: LayerTask): LayerTaskSpace {
  return {
    id: task.id,
    branch: taskBranch(target.iterationId, task),
    worktree: join(iterationFolder(target), `L${task.layer}-${task.id}`),
  };
}

/** The worktrees of the layer's tasks, whether made yet or not (the implementation phase's agents work in them). */
export function layerTaskSpaces(target: TeamLayerTarget): LayerTaskSpace[] {
  return layerTasks(target).map((task) => spaceOf(target, task));
}

/** The iteration's worktree, where the layers are merged and verified. */
export function iterationWorktree(target: TeamLayerTarget): string {
  return join(iterationFolder(target), 'iteration');
}

function layerTasks(target: TeamLayerTarget): LayerTask[] {
  const tasks = tasksOfLayer(target.tasks, target.layer);
  if (tasks.length > 0) return tasks;
  const count = layerCount(target.tasks);
  throw new RatchetError(
    'usage',
    count === 0
      ? `Iteration ${target.iterationId} has no tasks yet.`
      : target.layer >= count
        ? `Every layer of iteration ${target.iterationId} is merged (${count} layer${count === 1 ? '' : 's'}).`
        : `Layer ${target.layer} of iteration ${target.iterationId} has no tasks.`,
    {
      hint:
        count === 0
          ? "Tasks come from planning: run 'ratchet team advance' at the end of the planning phase."
          : `Its branch ${iterationBranch(target.iterationId)} holds the merged work: merge it into yours with git.`,
    },
  );
}

async function isWorktreeOf(git: Git, path: string): Promise<boolean> {
  const wanted = resolve(path);
  return (await git.listWorktrees()).some((info) => resolve(info.path) === wanted && !info.prunable);
}

/** Checks `branch` out at `path` unless it already is; creates the branch at `startPoint` when missing. */
async function ensureWorktree(
  git: Git,
  path: string,
  branch: string,
  startPoint: string,
): Promise<'created' | 'reattached' | 'existing'> {
  if (existsSync(path) && (await isWorktreeOf(git, path))) return 'existing';
  if (existsSync(path))
    throw new RatchetError('usage', `${path} exists but is not a worktree of this repository.`, {
      hint: 'Move or remove that directory, then run the command again.',
    });
  await git.pruneWorktrees();
  if (await git.branchExists(branch)) {
    await git.addWorktree(path, branch);
    return 'reattached';
  }
  await addRunWorktree(git, path, branch, startPoint);
  return 'created';
}

/**
 * Creates the iteration's branch (at the checkout's HEAD, the first time) and worktree, records
 * the layer's base (the iteration's branch as it is now, the first time), and one branch and
 * worktree per task of the layer from that base, with the checkout's dependency folders shared
 * in. Running it again makes only what is missing (a removed worktree comes back on its branch).
 */
export async function setupLayer(target: TeamLayerTarget): Promise<LayerSetup> {
  const tasks = layerTasks(target);
  const git = new Git(target.repoRoot);
  await requireCommit(git, target.repoRoot);
  // Branches and worktrees are made under the lock a run holds while it makes its own.
  await using _lock = await acquireRepoLock(await git.commonDir(), { runId: `team-${target.iterationId}` });
  const branch = iterationBranch(target.iterationId);
  const worktree = iterationWorktree(target);
  await mkdir(iterationFolder(target), { recursive: true });
  await ensureWorktree(git, worktree, branch, await git.head());
  await shareDependencies(target.repoRoot, worktree, new Git(worktree));
  const baseRef = layerBaseRef(target.iterationId, target.layer);
  let base = await git.revParse(baseRef);
  if (base === null) {
    base = await new Git(worktree).head();
    await git.updateRef(baseRef, base);
  }
  const made: LayerSetup['tasks'] = [];
  for (const task of tasks) {
    const space = spaceOf(target, task);
    const how = await ensureWorktree(git, space.worktree, space.branch, base);
    await shareDependencies(target.repoRoot, space.worktree, new Git(space.worktree));
    made.push({ ...space, made: how });
  }
  return { iterationBranch: branch, iterationWorktree: worktree, base, tasks: made };
}

async function requireBase(git: Git, target: TeamLayerTarget): Promise<string> {
  const base = await git.revParse(layerBaseRef(target.iterationId, target.layer));
  if (base !== null) return base;
  throw new RatchetError('usage', `Layer ${target.layer} of iteration ${target.iterationId} has no worktrees yet.`, {
    hint: "Run 'ratchet team worktrees setup' first.",
  });
}

/** Each task's branch of the layer: its diff against the layer's base, and whether it is merged. */
export async function reviewLayer(target: TeamLayerTarget): Promise<LayerReview> {
  const tasks = layerTasks(target);
  const git = new Git(target.repoRoot);
  const base = await requireBase(git, target);
  const branch = iterationBranch(target.iterationId);
  const reviews: LayerTaskReview[] = [];
  for (const task of tasks) {
    const space = spaceOf(target, task);
    const tip = await git.revParse(`refs/heads/${space.branch}`);
    if (tip === null) {
      reviews.push({ ...space, status: 'missing' });
      continue;
    }
    const uncommitted = existsSync(space.worktree)
      ? (await new Git(space.worktree).status({ untracked: 'normal' })).files.map((file) => file.path)
      : [];
    const status = tip === base ? 'empty' : (await git.isAncestor(tip, branch)) ? 'merged' : 'ready';
    reviews.push({
      ...space,
      status: status === 'empty' && uncommitted.length > 0 ? 'ready' : status,
      diff: await git.diff(base, tip),
      stat: await git.diffStat(base, tip),
      uncommitted,
    });
  }
  return { iterationBranch: branch, layer: target.layer, base, tasks: reviews };
}

/**
 * Merges the layer's task branches into the iteration's branch, in the order of `tasks.json`,
 * and runs the project's verifier on the result. First each task worktree's uncommitted changes
 * are committed on its branch (R3's auto-commit), refused when they hold what no branch may
 * (links leading outside, nested repositories, gitlinks). A conflict, an unsafe entry or a red
 * verifier puts the iteration's branch back where it was: the work stays on the task branches,
 * nothing is lost, and the result says which task and why. Green, the task worktrees are removed
 * (their branches stay) and the result names the next layer, which starts from the merged branch.
 */
export async function mergeLayer(options: LayerMergeOptions): Promise<LayerMerge> {
  const tasks = layerTasks(options);
  const git = new Git(options.repoRoot);
  const base = await requireBase(git, options);
  await using _lock = await acquireRepoLock(await git.commonDir(), { runId: `team-${options.iterationId}` });
  const worktree = iterationWorktree(options);
  if (!existsSync(worktree) || !(await isWorktreeOf(git, worktree)))
    throw new RatchetError('usage', `The iteration's worktree ${worktree} is gone.`, {
      hint: "Run 'ratchet team worktrees setup' again: it checks the iteration's branch out again.",
    });
  const iteration = new Git(worktree);
  if (await iteration.hasChanges())
    throw new RatchetError('usage', `The iteration's worktree ${worktree} has uncommitted changes.`, {
      hint: 'Commit or discard them there first: merge starts from a clean iteration branch.',
    });
  const spaces = tasks.map((task) => spaceOf(options, task));
  for (const space of spaces) {
    if (!(await git.branchExists(space.branch)))
      throw new RatchetError('usage', `Task ${space.id} has no branch ${space.branch}.`, {
        hint: "Run 'ratchet team worktrees setup' first.",
      });
    if (!existsSync(space.worktree)) continue;
    const taskGit = new Git(space.worktree);
    if (!(await taskGit.hasChanges())) continue;
    const unsafe = await unsafeUncommitted(taskGit);
    if (unsafe.length > 0) return { outcome: 'unsafe', task: space.id, entries: unsafe };
    await taskGit.commitAll(`team: ${space.id} (layer ${options.layer}), committed by merge`);
  }
  const before = await iteration.head();
  const merged: string[] = [];
  for (const space of spaces) {
    const tip = await git.revParse(`refs/heads/${space.branch}`);
    if (tip === null || (await git.isAncestor(tip, before))) continue;
    const unsafe = await unsafeChanges(git, base, tip);
    if (unsafe.length > 0) {
      await iteration.resetHard(before);
      return { outcome: 'unsafe', task: space.id, entries: unsafe };
    }
    try {
      await iteration.merge(space.branch, `team: merge ${space.id} (layer ${options.layer})`);
    } catch (error) {
      const details = error instanceof RatchetError ? error.details : undefined;
      await iteration.resetHard(before);
      if (details?.conflict !== true) throw error;
      const files = Array.isArray(details.files) ? details.files.filter((file) => typeof file === 'string') : [];
      return { outcome: 'conflict', task: space.id, branch: space.branch, files, worktree: space.worktree };
    }
    merged.push(space.id);
  }
  let verification: LayerVerification;
  try {
    verification = await verifyLayer({
      worktree,
      repoRoot: options.repoRoot,
      config: options.config,
      runner: options.runner,
      env: options.env,
      sandboxId: `team-${options.iterationId}`,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } catch (error) {
    // No test command, no sandbox, an interruption: the layer is not verified, so not merged.
    await iteration.resetHard(before);
    await iteration.clean();
    throw error;
  }
  // What the commands wrote (coverage, build output) is not part of the layer.
  await iteration.clean();
  if (!verification.decision.accepted) {
    await iteration.resetHard(before);
    return { outcome: 'red', verification };
  }
  for (const space of spaces) {
    if (existsSync(space.worktree)) await git.removeWorktree(space.worktree, { force: true });
  }
  await git.pruneWorktrees();
  const nextLayer = options.layer + 1;
  return {
    outcome: 'merged',
    merged,
    head: await iteration.head(),
    verification,
    nextLayer,
    done: nextLayer >= layerCount(options.tasks),
  };
}
