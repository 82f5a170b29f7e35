import { existsSync } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../core/effects.js';
import { NOTES_REF } from '../core/handoff.js';
import { Git } from '../git/git.js';
import type { Ledger } from '../ledger/types.js';
import { createEnveloper } from './event-stream.js';
import type { GitRun } from './git-run.js';

/**
 * Removes the git lock files a run that was killed in the middle of a git operation (`kill -9`
 * of Ratchet or of a git it spawned) left behind, so that resuming does not fail on "Unable to
 * create '.../index.lock': File exists". Only the run's own files go: the `index.lock`,
 * `HEAD.lock` and `ORIG_HEAD.lock` of its worktree's private git directory and the locks of its
 * branch and of the handoff notes ref (`Git.findLockFiles`); never the main checkout's.
 *
 * Call it only while holding the repository lock (`acquireRepoLock`): no other Ratchet process
 * can then be running git on this run, so its lock files can only be leftovers. A git that a
 * killed Ratchet spawned may still be finishing, though (Ratchet's children run in their own
 * process groups and outlive it): a lock file younger than `graceMs` is given until that age to
 * go away by itself before it is removed. Returns the removed paths (absolute), in the order found. `ratchet resume`, `rollback`, `repair-notes` and
 * `ratchet tdd` (for the notes ref every run shares) call it.
 */
export async function clearStaleGitLocks(
  repoRoot: string,
  run: GitRun,
  options: { graceMs?: number; now?: () => number } = {},
): Promise<string[]> {
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const now = options.now ?? Date.now;
  const repo = new Git(repoRoot);
  const repoDirs = await repo.gitDirs();
  const found = await repo.findLockFiles([`refs/heads/${run.branch}`, NOTES_REF], repoDirs);
  if (existsSync(run.worktree)) {
    const worktree = new Git(run.worktree);
    const dirs = await worktree.gitDirs().catch(() => null); // null: not in any repository
    // A worktree whose `.git` file is broken resolves to some other repository (or the main
    // checkout, whose own files findLockFiles never lists): only our worktree's files count.
    if (dirs?.commonDir === repoDirs.commonDir) found.push(...(await worktree.findLockFiles([], dirs)));
  }
  const removed: string[] = [];
  for (const file of new Set(found)) {
    if (!(await outlivesGrace(file, graceMs, now))) continue; // Its git finished after all.
    await rm(file, { force: true });
    removed.push(file);
  }
  return removed;
}

/** A lock file younger than this may still belong to a git that is finishing its work. */
const DEFAULT_GRACE_MS = 3000;
const POLL_MS = 100;

/**
 * True when `file` still exists once it is at least `graceMs` old, or after waiting `graceMs` at
 * most (a modification time in the future does not hold it forever); false when it went away.
 */
async function outlivesGrace(file: string, graceMs: number, now: () => number): Promise<boolean> {
  const deadline = now() + graceMs;
  for (;;) {
    let modified: number;
    try {
      modified = (await stat(file)).mtimeMs;
    } catch {
      return false;
    }
    const at = now();
    if (at - modified >= graceMs || at >= deadline) return true;
    await sleep(POLL_MS);
  }
}

/**
 * Records the removal in the run's ledger as a `git-lock-remove` event, for the commands that do
 * not stream events (`rollback`, `repair-notes`, `accept`, `reject`). Nothing is recorded when
 * nothing was removed.
 */
export async function recordGitLockRemoval(
  ledger: Ledger,
  run: GitRun,
  files: readonly string[],
  clock: Clock,
): Promise<void> {
  if (files.length === 0) return;
  const envelope = createEnveloper(run.id, clock, await ledger.lastEventNumber(run.id));
  await ledger.record(envelope({ type: 'git-lock-remove', files: [...files] }));
}
