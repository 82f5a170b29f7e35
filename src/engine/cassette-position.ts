import type { RatchetEvent } from '../core/events.js';

/** The ledger events `cassettePositionAt` reads. */
export const CASSETTE_POSITION_EVENTS = ['run-start', 'checkpoint-create', 'model-call'] as const;

/**
 * Where the replay cassette `file` stood at checkpoint `commit` of a run: how many of its
 * entries the run had played when it made that checkpoint, read from the run's ledger events
 * (oldest first). `ratchet resume` starts the cassette there, so it answers the stage after the
 * checkpoint with the entry recorded for it, however often the run was killed and resumed.
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
  let lastStart = -1;
  events.forEach((event, index) => {
    if (event.type === 'run-start') lastStart = index;
  });
  let position: number | null = null;
  for (const event of events.slice(Math.max(lastStart, 0))) {
    if (event.type === 'run-start' || event.type === 'checkpoint-create') {
      position = event.cassette?.file === file ? event.cassette.position : null;
    } else if (
      event.type === 'model-call' &&
      position !== null &&
      event.provider === 'replay' &&
      event.response !== null
    ) {
      position += 1;
    }
  }
  return position;
}
