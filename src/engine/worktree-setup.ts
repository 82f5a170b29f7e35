import { constants, existsSync } from 'node:fs';
import { access, mkdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { RatchetError } from '../core/errors.js';
import type { Git } from '../git/git.js';
import { shareNodeModules } from './share-node-modules.js';

/** What a run keeps in the repository but out of git (added to `.git/info/exclude`). */
export const RATCHET_EXCLUDES = ['/.ratchet/'];

/**
 * Ignored dependency folders shared into a run's worktree by symlink, so tests can run there (a
 * workspace's `node_modules` as a folder of links, see `shareNodeModules`).
 */
export const SHARED_DIRECTORIES = ['node_modules', '.venv', 'venv'];

/**
 * Symlinks the checkout's dependency folders into a run's worktree, and excludes the links from
 * git. A `.gitignore` entry such as `node_modules/` matches a directory but not a symlink, so
 * without the exclude `git add -A` would commit the link, and accepting the run would replace
 * the user's real `node_modules` with a link to itself (and `git clean` on resume would delete it).
 * The patterns have no trailing slash (they must match the link) and are anchored at the root;
 * tracked files are never affected by an exclude.
 */
export async function shareDependencies(source: string, worktree: string, git: Git): Promise<void> {
  const shared = SHARED_DIRECTORIES.filter((name) => existsSync(join(source, name)));
  if (shared.length === 0) return;
  await git.addInfoExclude(shared.map((name) => `/${name}`));
  for (const name of shared) {
    const to = join(worktree, name);
    if (existsSync(to)) continue;
    // A workspace's node_modules links its own packages: those must be the worktree's.
    if (name === 'node_modules') await shareNodeModules(join(source, name), to, source, worktree);
    else await symlink(join(source, name), to, 'dir');
  }
}

/**
 * Makes sure `$RATCHET_HOME` (worktrees, backups and copies of runs live there) is a directory
 * Ratchet can write, creating it when missing. A home that cannot be used is a configuration
 * error, raised before any branch, worktree or run exists.
 */
export async function requireWritableHome(home: string): Promise<void> {
  try {
    await mkdir(home, { recursive: true });
    await access(home, constants.W_OK);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RatchetError('config', `Ratchet's home ${home} is not a writable directory (${reason}).`, {
      cause: error,
      hint: 'Set RATCHET_HOME to a writable directory (it is created when missing), or unset it to use ~/.ratchet.',
      details: { env: 'RATCHET_HOME' },
    });
  }
}

/** A run starts from a commit: refuses a repository whose branch has none yet (a usage error). */
export async function requireCommit(git: Git, repoRoot: string): Promise<void> {
  if ((await git.revParse('HEAD')) !== null) return;
  throw new RatchetError('usage', `${repoRoot} has no commits yet: a run starts from a commit.`, {
    hint: 'Commit your project first (git add -A && git commit -m "initial"), then start the run.',
  });
}

/**
 * Creates the run's branch `branch` at `startPoint` and its worktree at `worktree`. When that
 * fails half-way (git may have made the branch before failing to make the directory), what it
 * made is removed again, so no branch is left behind that no run tracks; the error is rethrown.
 */
export async function addRunWorktree(
  git: Git,
  worktree: string,
  branch: string,
  startPoint: string,
  /** Whether the branch exists, when the caller has just asked git (one process less). */
  known?: { branchExists: boolean },
): Promise<void> {
  // A branch of that name that was there before is not ours to remove (git refuses to reuse it).
  const existed = known?.branchExists ?? (await git.branchExists(branch));
  try {
    await git.addWorktree(worktree, branch, startPoint);
  } catch (error) {
    if (!existed) {
      // Each step on its own: the error to report is git's first one, not a cleanup's.
      const quietly = (step: Promise<unknown>): Promise<unknown> => step.catch(() => undefined);
      if (existsSync(worktree)) await quietly(git.removeWorktree(worktree, { force: true }));
      await quietly(git.pruneWorktrees());
      if (await git.branchExists(branch).catch(() => false)) await quietly(git.deleteBranch(branch, { force: true }));
    }
    throw error;
  }
}

/** Removes a run's worktree, as far as it exists, and keeps its branch. */
export async function releaseRunWorktree(git: Git, worktree: string): Promise<void> {
  if (existsSync(worktree)) await git.removeWorktree(worktree, { force: true });
  await git.pruneWorktrees();
}

/**
 * Removes what a run made beside its branch and worktree: the branches named `<branch>-...` (a
 * tasks run's `ratchet/<run-id>-<key>-<attempt>`) with the handoff notes of their own commits,
 * and the folder of their worktrees `<worktree>-tasks`. With `keepUnmergedInto`, a branch whose
 * tip that commit does not contain is kept (a failed task's work, after `accept --force`);
 * returns the branches kept.
 */
export async function discardSideBranches(
  git: Git,
  run: { branch: string; worktree: string; baseCommit: string },
  options: { keepUnmergedInto?: string; notesRef: string },
): Promise<string[]> {
  const folder = `${run.worktree}-tasks`;
  for (const worktree of await git.listWorktrees())
    if (worktree.path.startsWith(`${folder}/`)) await git.removeWorktree(worktree.path, { force: true });
  await rm(folder, { recursive: true, force: true });
  await git.pruneWorktrees();
  const kept: string[] = [];
  // for-each-ref matches a prefix only up to a slash: list the folder, then filter.
  const folderOfBranch = run.branch.slice(0, run.branch.lastIndexOf('/') + 1);
  const side = (await git.listBranches(folderOfBranch)).filter((branch) => branch.startsWith(`${run.branch}-`));
  for (const branch of side) {
    const keep = options.keepUnmergedInto !== undefined && !(await git.isAncestor(branch, options.keepUnmergedInto));
    if (keep) {
      kept.push(branch);
      continue;
    }
    if (options.keepUnmergedInto === undefined)
      for (const commit of await git.log(`${run.baseCommit}..${branch}`))
        await git.removeNote(options.notesRef, commit.sha);
    await git.deleteBranch(branch, { force: true });
  }
  return kept;
}

/** Removes a run's worktree and branch, as far as they exist. */
export async function discardRunWorktree(git: Git, worktree: string, branch: string): Promise<void> {
  if (existsSync(worktree)) await git.removeWorktree(worktree, { force: true });
  await git.pruneWorktrees();
  if (await git.branchExists(branch)) await git.deleteBranch(branch, { force: true });
}
