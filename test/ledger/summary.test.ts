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
        costUsd: 0.035,
        unpricedCalls: 0,
      },
      toolCalls: { total: 2, errors: 1 },
      verifications: { total: 4, failing: 2 },
      checkpoints: 1,
      // 19 built, minus the model-delta.
      events: 18,
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: null,
      // Still running: up to the latest event (the 19th built, at 00:00:29).
      durationMs: 29_000,
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
      costUsd: 0.035,
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
      costUsd: 0,
      unpricedCalls: 0,
    });
    expect(summary.durationMs).toBe(0);
  });
});
