import { sql, type Kysely } from 'kysely';
import type { LedgerDatabase } from '../schema.js';
import type { RunRow, RunSummary } from '../types.js';

/** Totals for one run, from aggregate queries over the typed tables. */
export async function computeSummary(db: Kysely<LedgerDatabase>, run: RunRow): Promise<RunSummary> {
  const runId = run.id;
  const stageCounts = await db
    .selectFrom('stages')
    .where('run_id', '=', runId)
    .select((eb) => ['outcome', eb.fn.countAll<number>().as('n')])
    .groupBy('outcome')
    .execute();
  const stageAttempts = {
    total: 0,
    accepted: 0,
    rejected: 0,
    error: 0,
    skipped: 0,
    open: 0,
  };
  for (const { outcome, n } of stageCounts) {
    stageAttempts[outcome ?? 'open'] += n;
    stageAttempts.total += n;
  }

  const calls = await db
    .selectFrom('model_calls')
    .where('run_id', '=', runId)
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      sql<number>`coalesce(sum(response_json is null), 0)`.as('failed'),
      sql<number | null>`sum(input_tokens)`.as('inputTokens'),
      sql<number | null>`sum(output_tokens)`.as('outputTokens'),
      sql<number | null>`sum(cost_usd)`.as('costUsd'),
      sql<number>`coalesce(sum(response_json is not null and cost_usd is null), 0)`.as('unpricedCalls'),
      sql<number>`coalesce(sum(response_json is not null and (input_tokens is null or output_tokens is null)), 0)`.as(
        'unreportedUsageCalls',
      ),
      sql<number>`coalesce(sum(response_json is not null), 0)`.as('answered'),
    ])
    .executeTakeFirstOrThrow();
  // A sum over no known value is unknown (null) when calls answered without it, 0 when none answered.
  const known = (sum: number | null): number | null => sum ?? (calls.answered > 0 ? null : 0);
  const models: RunSummary['modelCalls'] = {
    total: calls.total,
    failed: calls.failed,
    inputTokens: known(calls.inputTokens),
    outputTokens: known(calls.outputTokens),
    unreportedUsageCalls: calls.unreportedUsageCalls,
    costUsd: known(calls.costUsd),
    costPartial: calls.costUsd !== null && calls.unpricedCalls > 0,
    unpricedCalls: calls.unpricedCalls,
  };

  const tools = await db
    .selectFrom('tool_calls')
    .where('run_id', '=', runId)
    .select((eb) => [eb.fn.countAll<number>().as('total'), sql<number>`coalesce(sum(is_error), 0)`.as('errors')])
    .executeTakeFirstOrThrow();

  const verifications = await db
    .selectFrom('verifications')
    .where('run_id', '=', runId)
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      // A suite that exits 0 with a failing test (a refactor batch that skipped one) fails too.
      sql<number>`coalesce(sum(exit_code is null or exit_code != 0 or timed_out != 0 or coalesce(failed, 0) > 0 or ok = 0), 0)`.as(
        'failing',
      ),
    ])
    .executeTakeFirstOrThrow();

  const checkpoints = await db
    .selectFrom('checkpoints')
    .where('run_id', '=', runId)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();

  const events = await db
    .selectFrom('events')
    .where('run_id', '=', runId)
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('timestamp').as('last')])
    .executeTakeFirstOrThrow();

  const end = run.finishedAt ?? latest(events.last, run.updatedAt);
  return {
    runId,
    status: run.status,
    stageAttempts,
    modelCalls: models,
    toolCalls: tools,
    verifications,
    checkpoints: checkpoints.n,
    events: events.n,
    startedAt: run.createdAt,
    finishedAt: run.finishedAt,
    durationMs: Math.max(0, Date.parse(end) - Date.parse(run.createdAt)),
  };
}

function latest(a: string | null, b: string): string {
  return a !== null && Date.parse(a) > Date.parse(b) ? a : b;
}
