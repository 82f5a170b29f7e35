/**
 * The ledger run of the current team iteration (engine/team/iteration-ledger.ts) around a team
 * command's work, for the CLI's commands and the TUI alike: the work gets the `record` that its
 * sessions and extractions record their calls through, and the run then says how it ended.
 */
import type { ResolvedConfig } from '../config/resolved.js';
import { iterationLedgerRun } from '../engine/team/iteration-ledger.js';
import type { TeamRecord } from '../workflows/team/ledger-record.js';
import { openRepoLedger } from './context.js';

interface IterationLedgerTarget {
  repoRoot: string;
  teamDir: string;
  config: ResolvedConfig;
  /** The command's interruption: a failure after it counts as `interrupted`. */
  signal: AbortSignal;
}

/** Runs `work` (a function, or the events of a session) with the iteration's ledger run. */
export async function* withIterationLedger<T, E = never>(
  target: IterationLedgerTarget,
  work: (record: TeamRecord) => AsyncGenerator<E, T> | Promise<T>,
): AsyncGenerator<E, T> {
  await using ledger = await openRepoLedger(target.repoRoot);
  const run = iterationLedgerRun({ ledger, repoRoot: target.repoRoot, teamDir: target.teamDir, config: target.config });
  try {
    const started = work(run.record);
    const result = started instanceof Promise ? await started : yield* started;
    await run.finish('completed');
    return result;
  } catch (error) {
    await run.finish(
      target.signal.aborted ? 'interrupted' : 'failed',
      error instanceof Error ? error.message : String(error),
    );
    throw error;
  }
}

/** `withIterationLedger` for work that yields nothing. */
export async function recordingIteration<T>(
  target: IterationLedgerTarget,
  work: (record: TeamRecord) => Promise<T>,
): Promise<T> {
  const events = withIterationLedger<T>(target, work);
  const next = await events.next();
  if (next.done !== true) throw new Error('unreachable: the work yields nothing');
  return next.value;
}
