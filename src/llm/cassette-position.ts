import type { RatchetEvent } from '../core/events.js';

/** The ledger events `cassettePositionAt` and `cassettePositionAfterFailure` read. */
export const CASSETTE_POSITION_EVENTS = [
  'run-start',
  'checkpoint-create',
  'checkpoint-rollback',
  'note-write',
  'model-call',
  'run-end',
] as const;

/**
 * Where the replay cassette `file` stood at checkpoint `commit` of a run: how many of its
 * entries the run had played when it made that checkpoint, read from the run's ledger events
 * (oldest first). `ratchet resume` starts the cassette there after a kill or an interruption, so
 * it answers the stage after the checkpoint, which starts again, with the entry recorded for it,
 * however often the run was killed and resumed (a run that ended failed continues after the
 * entries it played instead, see `cassettePositionAfterFailure`).
 *
 * - A `checkpoint-create` of `commit` records the position; so does a `run-start` of a process
 *   that resumed from it.
 * - A cassette this run never played starts at its first entry; so does the run's base commit.
 * - A checkpoint whose `checkpoint-create` never reached the ledger (the process was killed
 *   right after the commit) was made by the last process of the run: its position is the last
 *   one that process recorded plus the replayed model calls it made since.
 *
 * Null when the position cannot be known (the checkpoint was made by a process on another
 * provider or cassette).
 */
export function cassettePositionAt(
  events: readonly RatchetEvent[],
  commit: string,
  file: string,
  baseCommit: string,
): number | null {
  let recorded: number | null = null;
  let played = false;
  let known = false;
  for (const event of events) {
    if (event.type === 'checkpoint-create') {
      if (event.commit === commit) known = true;
      if (event.cassette?.file !== file) continue;
      played = true;
      if (event.commit === commit) recorded = event.cassette.position;
    } else if (event.type === 'run-start' && event.cassette?.file === file) {
      played = true;
      if (event.cassette.commit === commit) recorded = event.cassette.position;
    }
  }
  if (recorded !== null) return recorded;
  if (!played || commit === baseCommit) return 0;
  if (known) return null;
  // The commit is not in the ledger at all: the last process made it, then died before recording it.
  return lastProcess(events, file).position;
}

/**
 * Where the replay cassette `file` stood when the run's last process ended on a failure (its
 * `run-end` says `failed`: a gate failed its last attempt, the cassette had no answer left, a
 * git error...), and the checkpoint that process left the run on: the one its failure note was
 * written on, else its last checkpoint, else the one it started from. The answers it played
 * were used (the failed stage judged them), so a resume from that checkpoint continues after
 * them, as the process that recorded the cassette did: a recorded session that failed and was
 * resumed replays the same way, failure and resume included. (After a kill or an interruption
 * the stage after the checkpoint starts again, with the answers recorded for it: see
 * `cassettePositionAt`.)
 *
 * Null when the last process did not end failed, or was not replaying `file`.
 */
export function cassettePositionAfterFailure(
  events: readonly RatchetEvent[],
  file: string,
): { commit: string; position: number } | null {
  const last = lastProcess(events, file);
  if (last.ended !== 'failed' || last.position === null || last.commit === null) return null;
  return { commit: last.commit, position: last.position };
}

/**
 * The last process of the run (its events from the last `run-start` on): the cassette position
 * it reached (the last one it recorded plus the replayed model calls that answered since; null
 * once it was not replaying `file`), the checkpoint it last stood on, and how it ended (null
 * when it has no `run-end`: killed, or still running).
 */
function lastProcess(
  events: readonly RatchetEvent[],
  file: string,
): { position: number | null; commit: string | null; ended: string | null } {
  let lastStart = -1;
  events.forEach((event, index) => {
    if (event.type === 'run-start') lastStart = index;
  });
  let position: number | null = null;
  let commit: string | null = null;
  let ended: string | null = null;
  for (const event of events.slice(Math.max(lastStart, 0))) {
    if (event.type === 'run-start') {
      position = event.cassette?.file === file ? event.cassette.position : null;
      commit = event.cassette?.commit ?? null;
    } else if (event.type === 'checkpoint-create') {
      position = event.cassette?.file === file ? event.cassette.position : null;
      commit = event.commit;
    } else if (event.type === 'note-write') {
      commit = event.commit;
    } else if (event.type === 'checkpoint-rollback') {
      commit = event.to;
    } else if (event.type === 'run-end') {
      ended = event.status;
    } else if (
      event.type === 'model-call' &&
      position !== null &&
      event.provider === 'replay' &&
      event.response !== null
    ) {
      position += 1;
    }
  }
  return { position, commit, ended };
}
