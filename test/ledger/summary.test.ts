import { describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/index.js';
import {
  checkResult,
  eventFactory,
  modelRequest,
  modelResponse,
  newRun,
  steppingClock,
  testRunResult,
} from './helpers.js';

const RUN = 'run-summary';

describe('run summary', () => {
  it('totals stage attempts, model calls, tokens, cost, tool calls, verifications and duration', async () => {
    // Clock: the run is created at 00:00:00; events are at 00:00:11, 00:00:12, ...
    await using ledger = await openLedger(':memory:', { secrets: [], now: steppingClock() });
    await ledger.createRun(newRun(RUN, { feature: 'sum' }));
    const ev = eventFactory(RUN);
    const request = modelRequest('go');
    const call = (response: ReturnType<typeof modelResponse> | null) =>
      ev('model-call', {
        stage: 'GREEN',
        provider: 'anthropic',
        model: 'm',
        request,
        response,
        error: response === null ? { code: 'overloaded', message: '529' } : null,
        latencyMs: 10,
      });

    await ledger.recordMany([
      ev('stage-start', { stage: 'GREEN', phase: 'GREEN', attempt: 1, cycle: 1 }),
      call(modelResponse('a', { input: 1000, output: 100 }, 0.01)),
      call(null),
      ev('tool-call', {
        stage: 'GREEN',
        tool: 'Edit',
        input: {},
        output: 'ok',
        isError: false,
        durationMs: 1,
      }),
      ev('tool-call', {
        stage: 'GREEN',
        tool: 'Edit',
        input: {},
        output: 'old_string not found',
        isError: true,
        durationMs: 1,
      }),
      ev('verify-end', {
        stage: 'GREEN',
        kind: 'test',
        result: testRunResult(),
        outputFile: null,
      }),
      ev('stage-end', { stage: 'GREEN', phase: 'GREEN', attempt: 1, cycle: 1, outcome: 'rejected' }),
      ev('stage-start', { stage: 'GREEN', phase: 'GREEN', attempt: 2, cycle: 1 }),
      ev('model-delta', { text: 'x' }),
      call(modelResponse('b', { input: 2000, output: 250 }, 0.025)),
      ev('verify-end', {
        stage: 'GREEN',
        kind: 'test',
        result: testRunResult({
          exitCode: 0,
          counts: { passed: 3, failed: 0, skipped: 0, total: 3 },
        }),
        outputFile: null,
      }),
      ev('verify-end', {
        stage: 'VERIFY',
        kind: 'lint',
        result: checkResult(),
        outputFile: null,
      }),
      ev('verify-end', {
        stage: 'VERIFY',
        kind: 'typecheck',
        result: checkResult({ timedOut: true, exitCode: null, ok: false }),
        outputFile: null,
      }),
      // Exit 0 with a failing test (a refactor batch that skipped a test): failing all the same.
      ev('verify-end', {
        stage: 'VERIFY',
        kind: 'test',
        result: testRunResult({ exitCode: 0, counts: { passed: 2, failed: 1, skipped: 0, total: 3 } }),
        outputFile: null,
      }),
      ev('stage-end', { stage: 'GREEN', phase: 'GREEN', attempt: 2, cycle: 1, outcome: 'accepted' }),
      ev('checkpoint-create', {
        stage: 'GREEN',
        phase: 'GREEN',
        commit: 'c2',
        subject: 'feat: sum',
      }),
      ev('stage-start', { stage: 'REFACTOR', phase: 'REFACTOR', attempt: 1, cycle: 1 }),
      ev('stage-end', { stage: 'REFACTOR', phase: 'REFACTOR', attempt: 1, cycle: 1, outcome: 'error', reason: 'boom' }),
      ev('stage-end', { stage: 'REFACTOR', phase: 'REFACTOR', attempt: 2, cycle: 1, outcome: 'skipped' }),
      ev('stage-start', { stage: 'PLAN', phase: 'PLAN', attempt: 1, cycle: 2 }),
    ]);

    const running = await ledger.summary(RUN);
    expect(running).toEqual({
      runId: RUN,
      status: 'running',
      stageAttempts: {
        total: 5,
        accepted: 1,
        rejected: 1,
        error: 1,
        skipped: 1,
        open: 1,
      },
      modelCalls: {
        total: 3,
        failed: 1,
        inputTokens: 3000,
        outputTokens: 350,
        unreportedUsageCalls: 0,
        costUsd: 0.035,
        costPartial: false,
        unpricedCalls: 0,
      },
      toolCalls: { total: 2, errors: 1 },
      verifications: { total: 5, failing: 3 },
      checkpoints: 1,
      // 19 built, minus the model-delta.
      events: 19,
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: null,
      // Still running: up to the latest event (the 19th built, at 00:00:29).
      durationMs: 30_000,
    });

    // A call without a known price makes the cost a lower bound.
    await ledger.record(call(modelResponse('c', { input: 10, output: 5 }, null)));
    const finished = await ledger.updateRun(RUN, {
      status: 'completed',
      finishedAt: '2026-01-01T00:05:00.000Z',
    });
    const done = await ledger.summary(RUN);
    expect(done.modelCalls).toEqual({
      total: 4,
      failed: 1,
      inputTokens: 3010,
      outputTokens: 355,
      unreportedUsageCalls: 0,
      costUsd: 0.035,
      costPartial: true,
      unpricedCalls: 1,
    });
    expect(done.status).toBe('completed');
    expect(done.finishedAt).toBe(finished.finishedAt);
    expect(done.durationMs).toBe(300_000);
  });

  it('is all zeros for a run without events', async () => {
    await using ledger = await openLedger(':memory:', { secrets: [], now: steppingClock() });
    await ledger.createRun(newRun(RUN, { feature: 'sum' }));
    const summary = await ledger.summary(RUN);
    expect(summary.stageAttempts.total).toBe(0);
    expect(summary.modelCalls).toEqual({
      total: 0,
      failed: 0,
      inputTokens: 0,
      outputTokens: 0,
      unreportedUsageCalls: 0,
      costUsd: 0,
      costPartial: false,
      unpricedCalls: 0,
    });
    expect(summary.durationMs).toBe(0);
  });

  it('says unknown (null), not 0, for a cost no call could be priced for and for token usage no server reported', async () => {
    await using ledger = await openLedger(':memory:', { secrets: [], now: steppingClock() });
    await ledger.createRun(newRun(RUN, { feature: 'sum' }));
    const ev = eventFactory(RUN);
    const call = (response: ReturnType<typeof modelResponse> | null) =>
      ev('model-call', {
        stage: 'GREEN',
        provider: 'openai-compatible',
        model: 'my-local-llm',
        request: modelRequest('go'),
        response,
        error: response === null ? { code: 'overloaded', message: '529' } : null,
        latencyMs: 10,
      });
    const noUsage = (text: string) => ({
      ...modelResponse(text, { input: 0, output: 0 }, null),
      usage: { inputTokens: null, outputTokens: null },
    });

    // Only failed calls: they cost nothing and used no tokens.
    await ledger.record(call(null));
    expect((await ledger.summary(RUN)).modelCalls).toMatchObject({
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      costPartial: false,
      unreportedUsageCalls: 0,
    });

    // Answered calls, none priced and none reporting usage: unknown, not 0 tokens and $0.
    await ledger.recordMany([call(noUsage('a')), call(noUsage('b'))]);
    expect((await ledger.summary(RUN)).modelCalls).toEqual({
      total: 3,
      failed: 1,
      inputTokens: null,
      outputTokens: null,
      unreportedUsageCalls: 2,
      costUsd: null,
      costPartial: false,
      unpricedCalls: 2,
    });

    // One priced call with its usage: the known sums, marked partial, the others counted.
    await ledger.record(call(modelResponse('c', { input: 100, output: 10 }, 0.5)));
    expect((await ledger.summary(RUN)).modelCalls).toEqual({
      total: 4,
      failed: 1,
      inputTokens: 100,
      outputTokens: 10,
      unreportedUsageCalls: 2,
      costUsd: 0.5,
      costPartial: true,
      unpricedCalls: 2,
    });
  });
});
