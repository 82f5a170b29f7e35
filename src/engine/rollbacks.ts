import type { Clock } from '../core/effects.js';
import { RatchetError } from '../core/errors.js';
import type { EventOf } from '../core/events.js';
import type { Ledger } from '../ledger/types.js';
import { systemClock } from './effects.js';
import { createEnveloper } from './event-stream.js';
import type { GitRun } from './git-run.js';

/** The run's `ratchet refactor rollback`s (`backup-restore` events), oldest first. */
export async function rollbacksOf(ledger: Ledger, runId: string): Promise<Array<EventOf<'backup-restore'>>> {
  return (await ledger.events(runId, { types: ['backup-restore'] })).flatMap((event) =>
    event.type === 'backup-restore' ? [event] : [],
  );
}

/** What a `ratchet refactor rollback` restored (see the `backup-restore` event). */
export interface BackupRestore {
  target: string;
  backup: string;
  safetyBackup: string;
  branch: string | null;
  /**
   * Set when the run was not the one named: it was accepted after that run started, and the
   * rollback of that run (`refactor rollback <id> --force`) undid it too.
   */
  undoneBy?: string;
}

/**
 * Records a `ratchet refactor rollback` of the run: a `backup-restore` event (as the commands
 * that do not stream events record theirs, see `recordGitLockRemoval`), and the run's status
 * `rolled-back`. Returns the event.
 */
export async function recordRollback(
  ledger: Ledger,
  run: GitRun,
  restore: BackupRestore,
  clock: Clock = systemClock,
): Promise<EventOf<'backup-restore'>> {
  const envelope = createEnveloper(run.id, clock, await ledger.lastEventNumber(run.id));
  const event = envelope({
    type: 'backup-restore',
    ...restore,
    previousStatus: run.status,
  }) as EventOf<'backup-restore'>;
  await ledger.record(event);
  await ledger.updateRun(run.id, { status: 'rolled-back' });
  return event;
}

/**
 * The refusal for a command on a run `ratchet refactor rollback` restored the repository from:
 * when it was rolled back, and where the state it replaced is kept.
 */
export async function rolledBackError(ledger: Ledger, run: GitRun, nothingLeft: string): Promise<RatchetError> {
  const last = (await rollbacksOf(ledger, run.id)).at(-1);
  const restored = last
    ? `${last.target} was restored from the run's backup`
    : "the repository was restored from the run's backup";
  return new RatchetError(
    'usage',
    `Run ${run.id} was rolled back at ${last?.timestamp ?? run.updatedAt} (\`ratchet refactor rollback\`): ${restored}; ${nothingLeft}.`,
    {
      hint: last
        ? `The state the rollback replaced is kept in ${last.safetyBackup}.`
        : 'See `ratchet status` for the run.',
    },
  );
}
