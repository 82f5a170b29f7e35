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

  const models = await db
    .selectFrom('model_calls')
    .where('run_id', '=', runId)
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      sql<number>`coalesce(sum(response_json is null), 0)`.as('failed'),
      sql<number>`coalesce(sum(input_tokens), 0)`.as('inputTokens'),
      sql<number>`coalesce(sum(output_tokens), 0)`.as('outputTokens'),
      sql<number>`coalesce(sum(cost_usd), 0)`.as('costUsd'),
      sql<number>`coalesce(sum(response_json is not null and cost_usd is null), 0)`.as('unpricedCalls'),
    ])
    .executeTakeFirstOrThrow();

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
      sql<number>`coalesce(sum(exit_code is null or exit_code != 0 or timed_out != 0), 0)`.as('failing'),
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
