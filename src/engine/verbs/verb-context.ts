import type { Clock } from '../../core/effects.js';
import type { Ledger } from '../../ledger/types.js';
import type { WorkflowRegistry } from '../registry.js';

/** What a command on a recorded run (accept, reject, rollback, repair-notes) gets. */
export interface RunVerbContext {
  ledger: Ledger;
  /** The workflows, to read the run's settings with its own. */
  registry: WorkflowRegistry;
  /** Timestamps of the events the command records (default: the system clock). */
  clock?: Clock;
}
