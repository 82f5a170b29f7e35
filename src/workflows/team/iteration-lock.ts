/**
 * One command at a time works on an iteration's conversation: a session (CLI or TUI) and
 * `advance` hold `.team/locks/<id>/ratchet.lock` (the repository lock's file format and stale
 * handling: a lock whose process is gone is taken over), so two sessions never interleave their
 * turns and no phase changes under a running conversation.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import { acquireRepoLock, type RepoLock } from '../../git/repo-lock.js';
import type { TeamEvent } from './events.js';

export async function lockIteration(teamDir: string, iterationId: string): Promise<RepoLock> {
  const dir = join(teamDir, 'locks', iterationId);
  await mkdir(dir, { recursive: true });
  try {
    return await acquireRepoLock(dir, { runId: `team ${iterationId}` });
  } catch (error) {
    if (error instanceof RatchetError && error.code === 'locked')
      throw new RatchetError('locked', `Another ratchet team command is working on ${iterationId} right now.`, {
        hint: `Wait for it to finish, or stop it; its lock is in ${dir}.`,
        cause: error,
      });
    throw error;
  }
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
