import type { EventOf } from '../core/events.js';
import type { Checkpoint } from '../engine/checkpoints.js';
import type { RunSummary } from '../ledger/types.js';
import { priceOf } from '../llm/pricing.js';
import { replaysCassette } from '../llm/provider-kinds.js';

/**
 * The stage attempts by outcome, e.g. `18 accepted, 5 rejected, 1 error` (outcomes with none left
 * out but the first two). Shared by `ratchet status` and the reports.
 */
export function stageOutcomesText(stageAttempts: RunSummary['stageAttempts']): string {
  const { accepted, rejected, error, skipped, open } = stageAttempts;
  const others = Object.entries({ error, skipped, open })
    .filter(([, count]) => count > 0)
    .map(([outcome, count]) => `, ${count} ${outcome}`)
    .join('');
  return `${accepted} accepted, ${rejected} rejected${others}`;
}

/** Whether the run's calls have a price: a replayed cassette costs nothing, else the price table decides. */
function hasKnownPrice(provider: string | null, models: readonly string[]): boolean {
  if (replaysCassette(provider)) return true;
  return models.length > 0 && models.every((model) => priceOf(model) !== null);
}

/**
 * What a run's model calls cost in USD, as `ratchet status` (text and `--json`) and the reports
 * say it: null when it is unknown. `models` are the models the run called (its configured one, or
 * those its calls report). A failed call costs nothing for a priced model; for a model without a
 * known price its cost is unknown too, so a run whose calls all failed against such a model does
 * not claim 0. A call whose server reported no token usage has an unknown cost too
 * (`unpricedCalls`), whatever the model's price. With some calls priced and some not, the sum of
 * the priced ones (a lower bound: `costPartial`).
 */
export function runCostUsd(
  calls: RunSummary['modelCalls'],
  run: { provider: string | null; models: readonly string[] },
): number | null {
  const { total, failed, costUsd } = calls;
  if (total > 0 && costUsd === 0 && failed === total && !hasKnownPrice(run.provider, run.models)) return null;
  return costUsd;
}

/** The cost of a run's model calls in words (see `runCostUsd`), e.g. `$0.0123 + 2 calls without a known price`. */
export function costText(
  calls: RunSummary['modelCalls'],
  run: { provider: string | null; models: readonly string[] },
): string {
  const { total, failed, costUsd, unpricedCalls } = calls;
  if (total === 0) return '$0 (no model calls)';
  const priced = hasKnownPrice(run.provider, run.models);
  // A call to a priced model has no cost when the server reported no token usage (null, not 0).
  const noUsage = 'calls whose token usage the server did not report';
  if (costUsd === null) {
    return `unknown (${unpricedCalls} ${priced ? noUsage : 'calls to a model without a known price'})`;
  }
  if (runCostUsd(calls, run) === null) {
    const model = run.models.length > 0 ? run.models.join(', ') : 'the default model';
    return `unknown (${failed === 1 ? 'the only call' : `all ${failed} calls`} failed; no price known for ${model})`;
  }
  const unknown = priced ? noUsage : 'calls without a known price';
  return `$${costUsd.toFixed(4)}${unpricedCalls > 0 ? ` + ${unpricedCalls} ${unknown}` : ''}`;
}

/**
 * The tokens of a run's model calls, shared by `ratchet status` and the reports: `1200 in / 300
 * out tokens`, with how many answered calls reported no usage when some did not (the sums leave
 * them out: `... (+ 2 calls without reported usage)`), or `unknown tokens (...)` when none did.
 */
export function tokensText(calls: RunSummary['modelCalls'], words: { in: string; out: string }): string {
  const missing = calls.unreportedUsageCalls;
  const withoutUsage = `${missing} call${missing === 1 ? '' : 's'} without reported usage`;
  if (calls.inputTokens === null && calls.outputTokens === null) return `unknown tokens (${withoutUsage})`;
  const count = (tokens: number | null): string => (tokens === null ? 'unknown' : String(tokens));
  return `${count(calls.inputTokens)} ${words.in} / ${count(calls.outputTokens)} ${words.out} tokens${missing > 0 ? ` (+ ${withoutUsage})` : ''}`;
}

/**
 * Says that handoff notes shown come from the ledger because git no longer has them (`ratchet
 * reject` removes a run's notes); null when none do. Shared by `ratchet history` and the reports.
 */
export function ledgerNotesText(checkpoints: readonly Checkpoint[], status: string): string | null {
  const count = checkpoints.filter((checkpoint) => checkpoint.noteSource === 'ledger').length;
  if (count === 0) return null;
  const why =
    status === 'rejected'
      ? 'rejecting the run removed them'
      : status === 'rolled-back'
        ? 'rolling the run back removed them'
        : 'they are missing';
  const which = count === checkpoints.length ? 'These handoff notes are' : `${count} of these handoff notes are`;
  return `${which} no longer in git (${why}); shown as the ledger recorded them.`;
}

/** What a run was before its rollback, by its status then. */
const BEFORE_ROLLBACK: Partial<Record<string, string>> = {
  'rolled-back': 'again',
  completed: 'it had completed, never accepted',
  failed: 'it had failed, never accepted',
  partial: 'it had ended partial, never accepted',
  interrupted: 'it had been interrupted, never accepted',
  running: 'it was running, never accepted',
};

/**
 * One `ratchet refactor rollback` of a run, e.g. `rolled back at 2026-01-01T00:00:00.000Z (it was
 * accepted): /repo restored from /backups/x, branch main reset; the state it replaced is kept in
 * /backups/x/before-rollback-y`. Shared by `ratchet status`, `ratchet history` and the reports.
 */
export function rollbackText(event: EventOf<'backup-restore'>): string {
  const before =
    BEFORE_ROLLBACK[event.previousStatus] ?? (event.previousStatus ? `it was ${event.previousStatus}` : '');
  const by = event.undoneBy ? `, undone by the rollback of run ${event.undoneBy}` : '';
  return (
    `rolled back at ${event.timestamp}${before ? ` (${before})` : ''}${by}: ${event.target} restored from ${event.backup}` +
    `${event.branch ? `, branch ${event.branch} reset` : ''}; the state it replaced is kept in ${event.safetyBackup}`
  );
}

/** A run's status as the reports and `ratchet status` say it: `rolled back` for `rolled-back`. */
export function statusText(status: string): string {
  return status === 'rolled-back' ? 'rolled back' : status;
}
