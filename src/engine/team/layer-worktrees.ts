/**
 * `ratchet team worktrees setup|review|merge`: the implementation phase's per-task worktrees for
 * the iteration's current dependency layer (seed 001, worktree management; R3's
 * `auto_commit_layer_worktrees`). Nothing here touches the user's checkout or branch: the
 * iteration works on a branch of its own in a worktree under `$RATCHET_HOME` (its workspace,
 * made when the iteration starts); each task of a layer gets a branch and worktree beside it,
 * started from the iteration's branch, and `merge` merges the layer into the iteration's branch,
 * verifies it, and only then says the next layer may start. The user takes the iteration's
 * branch into theirs with git when done.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ResolvedConfig } from '../../config/resolved.js';
import { RatchetError } from '../../core/errors.js';
import { describeUnsafeEntries, type UnsafeEntry } from '../../core/unsafe-entry.js';
import { Git } from '../../git/git.js';
import { acquireRepoLock } from '../../git/repo-lock.js';
import type { DiffStat } from '../../git/types.js';
import { unsafeChanges, unsafeUncommitted } from '../../git/unsafe-entries.js';
import type { ProcessRunner } from '../../process/types.js';
import {
  layerBaseRef,
  layerCount,
  taskBranch,
  tasksFolder,
  tasksOfLayer,
  taskWorktree,
  type LayerTask,
  unassignedTasks,
  type LayerTaskInput,
} from '../../workflows/team/layers/layer-plan.js';
import { workspaceChanges } from '../../workflows/team/workspace.js';
import { addRunWorktree, shareDependencies } from '../worktree-setup.js';
import { verifyLayer, type LayerVerification } from './layer-verifier.js';

/** The iteration and layer the commands work on, as the team's stores hold them. */
export interface TeamLayerTarget {
  /** The user's repository (its root). */
  repoRoot: string;
  iterationId: string;
  /** The iteration's workspace: its branch and the worktree it is checked out in. */
  iteration: { branch: string; worktree: string };
  /** The iteration's `current_layer`. */
  layer: number;
  /** The iteration's `tasks.json`. */
  tasks: readonly LayerTaskInput[];
  /** The team's agents, when known: a task assigned to anyone else counts as unassigned. */
  agents?: readonly string[];
}

/** Where a task of the layer works. */
interface LayerTaskSpace {
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
  /** Tasks of the layer no agent implements (`unassignedTasks`): their worktrees stay empty. */
  unassigned: string[];
}

/** One task's branch as `review` shows it. */
type LayerTaskReview = LayerTaskSpace &
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
        /**
         * What those uncommitted changes are, for the reviewer: the diff against the branch's tip,
         * then new files whole (as the code-review prompts show them); '' when there are none.
         */
        pending: string;
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
      /** Each of those tasks' merge commit on the iteration's branch, with its subject (the ledger's checkpoints). */
      commits: { task: string; commit: string; subject: string }[];
      head: string;
      verification: LayerVerification;
      /** The iteration's next `current_layer`. */
      nextLayer: number;
      /** Whether that is past the last layer (every task is merged). */
      done: boolean;
    }
  | { outcome: 'conflict'; task: string; branch: string; files: string[]; worktree: string }
  | { outcome: 'unsafe'; task: string; entries: UnsafeEntry[] }
  /**
   * Tasks whose branch holds no change since the layer's base (nobody implemented them; those
   * assigned to no agent are in `unassigned`): nothing was merged, unless `allowEmpty`.
   */
  | { outcome: 'empty'; tasks: string[]; unassigned: string[] }
  | { outcome: 'red'; verification: LayerVerification };

export interface LayerMergeOptions extends TeamLayerTarget {
  /** Merge even when some task's branch holds no change (a task that needed none). */
  allowEmpty?: boolean;
  config: ResolvedConfig;
  runner: ProcessRunner;
  env: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
}

function spaceOf(target: TeamLayerTarget, task: LayerTask): LayerTaskSpace {
  return {
    id: task.id,
    branch: taskBranch(target.iteration.branch, task),
    worktree: taskWorktree(target.iteration.worktree, task),
  };
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
          : `Its branch ${target.iteration.branch} holds the merged work: merge it into yours with git.`,
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

/** The iteration's worktree, refused when it is gone (the iteration's branch is then all there is). */
async function requireIterationWorktree(git: Git, target: TeamLayerTarget): Promise<Git> {
  const { worktree, branch } = target.iteration;
  if (existsSync(worktree) && (await isWorktreeOf(git, worktree))) return new Git(worktree);
  throw new RatchetError('usage', `The iteration's workspace ${worktree} (branch ${branch}) is gone.`, {
    hint: `Check the branch out there again: git worktree add ${worktree} ${branch}`,
  });
}

/**
 * Commits what the team wrote in `git`'s worktree and did not commit, refusing what no branch
 * may hold (links leading outside, nested repositories, gitlinks): the entries, else null.
 */
async function commitPending(git: Git, message: string): Promise<UnsafeEntry[] | null> {
  if (!(await git.hasChanges())) return null;
  const unsafe = await unsafeUncommitted(git);
  if (unsafe.length > 0) return unsafe;
  await git.commitAll(message);
  return null;
}

/**
 * Records the layer's base (the iteration's branch as it is now, the first time, with what the
 * team wrote there committed), then makes one branch and worktree per task of the layer from
 * that base, with the checkout's dependency folders shared in. Running it again makes only what
 * is missing (a removed worktree comes back on its branch).
 */
export async function setupLayer(target: TeamLayerTarget): Promise<LayerSetup> {
  const tasks = layerTasks(target);
  const git = new Git(target.repoRoot);
  // Branches and worktrees are made under the lock a run holds while it makes its own.
  await using _lock = await acquireRepoLock(await git.commonDir(), { runId: `team-${target.iterationId}` });
  const iteration = await requireIterationWorktree(git, target);
  const baseRef = layerBaseRef(target.iteration.branch, target.layer);
  let base = await git.revParse(baseRef);
  if (base === null) {
    const unsafe = await commitPending(iteration, `team: ${target.iterationId} before layer ${target.layer}`);
    if (unsafe !== null)
      throw new RatchetError(
        'usage',
        `The iteration's workspace holds what no branch may take in:\n${describeUnsafeEntries(unsafe)}`,
        {
          hint: `Remove them from ${target.iteration.worktree}, then run setup again.`,
        },
      );
    base = await iteration.head();
    await git.updateRef(baseRef, base);
  }
  await mkdir(tasksFolder(target.iteration.worktree), { recursive: true });
  const made: LayerSetup['tasks'] = [];
  for (const task of tasks) {
    const space = spaceOf(target, task);
    const how = await ensureWorktree(git, space.worktree, space.branch, base);
    await shareDependencies(target.repoRoot, space.worktree, new Git(space.worktree));
    made.push({ ...space, made: how });
  }
  return {
    iterationBranch: target.iteration.branch,
    iterationWorktree: target.iteration.worktree,
    base,
    tasks: made,
    unassigned: unassignedTasks(target.tasks, target.layer, target.agents),
  };
}

async function requireBase(git: Git, target: TeamLayerTarget): Promise<string> {
  const base = await git.revParse(layerBaseRef(target.iteration.branch, target.layer));
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
  const branch = target.iteration.branch;
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
      // Agents write without committing: without this a review before the merge shows nothing.
      pending:
        uncommitted.length === 0
          ? ''
          : await workspaceChanges({ workspace: space.worktree, branch: space.branch, base_commit: 'HEAD' }),
    });
  }
  return { iterationBranch: branch, layer: target.layer, base, tasks: reviews };
}

/**
 * Merges the layer's task branches into the iteration's branch, in the order of `tasks.json`,
 * and runs the project's verifier on the result. First each task worktree's uncommitted changes
 * are committed on its branch (R3's auto-commit), refused when they hold what no branch may
 * (links leading outside, nested repositories, gitlinks). A task whose branch holds no change at
 * all is refused (`empty`) unless `allowEmpty`. A conflict, an unsafe entry or a red
 * verifier puts the iteration's branch back where it was: the work stays on the task branches,
 * nothing is lost, and the result says which task and why. Green, the task worktrees are removed
 * (their branches stay) and the result names the next layer, which starts from the merged branch.
 */
export async function mergeLayer(options: LayerMergeOptions): Promise<LayerMerge> {
  const tasks = layerTasks(options);
  const git = new Git(options.repoRoot);
  const base = await requireBase(git, options);
  await using _lock = await acquireRepoLock(await git.commonDir(), { runId: `team-${options.iterationId}` });
  const iteration = await requireIterationWorktree(git, options);
  const worktree = options.iteration.worktree;
  const pending = await commitPending(iteration, `team: ${options.iterationId} during layer ${options.layer}`);
  if (pending !== null) return { outcome: 'unsafe', task: '(the iteration workspace)', entries: pending };
  const spaces = tasks.map((task) => spaceOf(options, task));
  for (const space of spaces) {
    if (!(await git.branchExists(space.branch)))
      throw new RatchetError('usage', `Task ${space.id} has no branch ${space.branch}.`, {
        hint: "Run 'ratchet team worktrees setup' first.",
      });
    if (!existsSync(space.worktree)) continue;
    const unsafe = await commitPending(
      new Git(space.worktree),
      `team: ${space.id} (layer ${options.layer}), committed by merge`,
    );
    if (unsafe !== null) return { outcome: 'unsafe', task: space.id, entries: unsafe };
  }
  // A layer never merges green with a task nobody implemented without saying so: refused unless
  // the user says the task needed no change.
  if (options.allowEmpty !== true) {
    const empty: string[] = [];
    for (const space of spaces) if ((await git.revParse(`refs/heads/${space.branch}`)) === base) empty.push(space.id);
    if (empty.length > 0) {
      const unassigned = unassignedTasks(options.tasks, options.layer, options.agents);
      return { outcome: 'empty', tasks: empty, unassigned: empty.filter((id) => unassigned.includes(id)) };
    }
  }
  const before = await iteration.head();
  const commits: { task: string; commit: string; subject: string }[] = [];
  for (const space of spaces) {
    const tip = await git.revParse(`refs/heads/${space.branch}`);
    if (tip === null || (await git.isAncestor(tip, before))) continue;
    const unsafe = await unsafeChanges(git, base, tip);
    if (unsafe.length > 0) {
      await iteration.resetHard(before);
      return { outcome: 'unsafe', task: space.id, entries: unsafe };
    }
    const subject = `team: merge ${space.id} (layer ${options.layer})`;
    let commit: string;
    try {
      commit = await iteration.merge(space.branch, subject);
    } catch (error) {
      const details = error instanceof RatchetError ? error.details : undefined;
      await iteration.resetHard(before);
      if (details?.conflict !== true) throw error;
      const files = Array.isArray(details.files) ? details.files.filter((file) => typeof file === 'string') : [];
      return { outcome: 'conflict', task: space.id, branch: space.branch, files, worktree: space.worktree };
    }
    commits.push({ task: space.id, commit, subject });
  }
  let verification: LayerVerification;
  try {
    verification = await verifyLayer({
      worktree,
      repoRoot: options.repoRoot,
      config: options.config,
      runner: options.runner,
      env: options.env,
      sandboxId: `team-${options.iterationId}-layer-${options.layer}`,
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
    merged: commits.map((entry) => entry.task),
    commits,
    head: await iteration.head(),
    verification,
    nextLayer,
    done: nextLayer >= layerCount(options.tasks),
  };
}
