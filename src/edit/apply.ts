import { chmod, lstat, mkdir, readFile, readlink, rm, rmdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RatchetError, toRatchetError } from '../core/errors.js';
import type { Git } from '../git/git.js';
import type { StatusEntry } from '../git/types.js';
import { pathEscapeReason } from './patch-paths.js';
import { normaliseDiff, parseUnifiedDiff, touchedFiles } from './unified-diff.js';

/** Result of a successful `applyPatchAtomically`. */
export interface AppliedPatch {
  /** Every path the patch touched (both sides of renames), repository-relative. */
  files: string[];
}

type FileState =
  | { kind: 'absent' }
  | { kind: 'file'; content: Buffer; mode: number }
  | { kind: 'symlink'; target: string }
  /** A directory or special file: never written or removed by a restore. */
  | { kind: 'other' };

interface Snapshot {
  path: string;
  absolute: string;
  state: FileState;
  /** Ancestor directories (deepest first) that did not exist before the apply. */
  missingDirectories: string[];
}

/**
 * Applies a unified diff to `git`'s working tree (not the index) with `git apply`, after
 * normalising it (`normaliseDiff`). All or nothing: `git apply` checks every hunk before
 * writing, and should it still fail part-way, each touched path is restored from a snapshot
 * taken before (content, mode, absence; directories the apply created are removed) and
 * `git status` of those paths is compared with its state before. Uncommitted changes the tree
 * already had are kept.
 *
 * Throws `RatchetError` `git` when the patch does not apply (git's stderr in the message,
 * `details.restored === true`) or when the tree could not be restored (`details.restored ===
 * false`, `details.paths` the paths that differ); `internal` when the patch does not parse or
 * a path escapes the work tree, since callers admit patches with `admitPatch` first.
 */
export async function applyPatchAtomically(git: Git, patchText: string): Promise<AppliedPatch> {
  const patch = parseUnifiedDiff(patchText);
  if (patch.errors.length > 0) {
    throw new RatchetError('internal', `Cannot apply a patch that does not parse: ${patch.errors.join(' ')}`, {
      hint: 'Check patches with admitPatch before applying them.',
    });
  }
  const files = touchedFiles(patch);
  if (files.length === 0) return { files };
  for (const file of files) {
    const reason = pathEscapeReason(file);
    if (reason !== null) {
      throw new RatchetError('internal', `Refusing to apply a patch touching '${file}': ${reason}.`, {
        hint: 'Check patches with admitPatch before applying them.',
      });
    }
  }

  const statusBefore = touchedStatus(await git.status(), files);
  const snapshots = await Promise.all(files.map((file) => takeSnapshot(git.dir, file)));
  try {
    await git.apply(normaliseDiff(patch));
    return { files };
  } catch (error) {
    const cause = toRatchetError(error, 'git');
    const differing = await restore(git, snapshots, statusBefore, files);
    if (differing.length > 0) {
      throw new RatchetError(
        'git',
        `Patch failed to apply and ${differing.length} path(s) could not be restored: ${differing.join(', ')}`,
        {
          cause,
          details: { restored: false, paths: differing, files },
          hint: `Reset the work tree with 'git checkout -- <path>' / 'git clean' for those paths, or roll back to the last checkpoint.`,
        },
      );
    }
    throw new RatchetError('git', `Patch does not apply: ${cause.message}`, {
      cause,
      details: { restored: true, files, ...(cause.details ?? {}) },
    });
  }
}

/**
 * Discards every uncommitted change in `git`'s work tree: `git reset --hard HEAD`, then
 * `git clean -fd` (untracked files and directories; ignored files are kept).
 */
export async function revertWorkingTree(git: Git): Promise<void> {
  await git.resetHard('HEAD');
  await git.clean();
}

function touchedStatus(status: { files: StatusEntry[] }, files: readonly string[]): Map<string, string> {
  const result = new Map<string, string>();
  for (const entry of status.files) {
    for (const path of [entry.path, entry.origPath]) {
      if (path !== undefined && files.includes(path)) result.set(path, `${entry.index}${entry.worktree}`);
    }
  }
  return result;
}

async function takeSnapshot(root: string, path: string): Promise<Snapshot> {
  const absolute = join(root, path);
  const missingDirectories: string[] = [];
  for (let directory = dirname(absolute); directory.length > root.length; directory = dirname(directory)) {
    if ((await stateOf(directory)).kind === 'absent') missingDirectories.push(directory);
  }
  return { path, absolute, state: await readState(absolute), missingDirectories };
}

async function stateOf(absolute: string): Promise<{ kind: 'absent' | 'file' | 'symlink' | 'other'; mode: number }> {
  try {
    const stats = await lstat(absolute);
    const kind = stats.isSymbolicLink() ? 'symlink' : stats.isFile() ? 'file' : 'other';
    return { kind, mode: stats.mode & 0o7777 };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') {
      return { kind: 'absent', mode: 0 };
    }
    throw error;
  }
}

async function readState(absolute: string): Promise<FileState> {
  const { kind, mode } = await stateOf(absolute);
  if (kind === 'file') return { kind, mode, content: await readFile(absolute) };
  if (kind === 'symlink') return { kind, target: await readlink(absolute) };
  return { kind };
}

function sameState(a: FileState, b: FileState): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'file' && b.kind === 'file') return a.mode === b.mode && a.content.equals(b.content);
  if (a.kind === 'symlink' && b.kind === 'symlink') return a.target === b.target;
  return true;
}

/** Puts every snapshot back; returns the paths still differing afterwards (empty on success). */
async function restore(
  git: Git,
  snapshots: readonly Snapshot[],
  statusBefore: Map<string, string>,
  files: readonly string[],
): Promise<string[]> {
  for (const snapshot of snapshots) {
    try {
      if (!sameState(await readState(snapshot.absolute), snapshot.state)) await putBack(snapshot);
    } catch {
      // Reported below: the path will differ from its snapshot or its status.
    }
  }
  for (const directory of [...new Set(snapshots.flatMap((snapshot) => snapshot.missingDirectories))].sort(
    (a, b) => b.length - a.length,
  )) {
    await rmdir(directory).catch(() => undefined); // only succeeds when empty, as it should
  }
  const differing = new Set<string>();
  for (const snapshot of snapshots) {
    const now = await readState(snapshot.absolute).catch(() => null);
    if (now === null || !sameState(now, snapshot.state)) differing.add(snapshot.path);
  }
  const statusAfter = touchedStatus(await git.status(), files);
  for (const path of files) {
    if (statusAfter.get(path) !== statusBefore.get(path)) differing.add(path);
  }
  return [...differing];
}

async function putBack(snapshot: Snapshot): Promise<void> {
  const { absolute, state } = snapshot;
  if (state.kind === 'other') return;
  const current = await stateOf(absolute);
  if (current.kind === 'other') return; // never delete a directory that appeared in its place
  if (current.kind !== 'absent') await rm(absolute, { force: true });
  if (state.kind === 'absent') return;
  await mkdir(dirname(absolute), { recursive: true });
  if (state.kind === 'symlink') {
    await symlink(state.target, absolute);
  } else {
    await writeFile(absolute, state.content);
    await chmod(absolute, state.mode);
  }
}
