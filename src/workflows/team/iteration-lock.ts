/**
 * One command at a time works on an iteration's conversation: a session (CLI or TUI) and
 * `advance` hold `.team/locks/<id>/ratchet.lock` (the repository lock's file format and stale
 * handling: a lock whose process is gone is taken over), so two sessions never interleave their
 * turns and no phase changes under a running conversation.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import { acquireRepoLock, runLockHeld, type RepoLock } from '../../git/repo-lock.js';
import type { TeamEvent } from './events.js';

const lockDir = (teamDir: string, iterationId: string): string => join(teamDir, 'locks', iterationId);
const lockOwner = (iterationId: string): string => `team ${iterationId}`;

export async function lockIteration(teamDir: string, iterationId: string): Promise<RepoLock> {
  const dir = lockDir(teamDir, iterationId);
  await mkdir(dir, { recursive: true });
  try {
    return await acquireRepoLock(dir, { runId: lockOwner(iterationId) });
  } catch (error) {
    if (error instanceof RatchetError && error.code === 'locked')
      throw new RatchetError('locked', `Another ratchet team command is working on ${iterationId} right now.`, {
        hint: `Wait for it to finish, or stop it; its lock is in ${dir}.`,
        cause: error,
      });
    throw error;
  }
}

/** Whether a live team command holds the iteration's lock (works on it now): its ledger run is live then. */
export function iterationLockHeld(teamDir: string, iterationId: string): Promise<boolean> {
  return runLockHeld(lockDir(teamDir, iterationId), lockOwner(iterationId));
}

/** `events`, with the iteration locked from the first event until the last (or an early stop). */
export async function* holdingIterationLock(
  teamDir: string,
  iterationId: string,
  events: AsyncGenerator<TeamEvent, void>,
): AsyncGenerator<TeamEvent, void> {
  const lock = await lockIteration(teamDir, iterationId);
  try {
    yield* events;
  } finally {
    await lock.release();
  }
}
