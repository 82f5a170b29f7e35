import { describe, expect, it } from 'vitest';
import { eventFactory, modelRequest, modelResponse, testRunResult, useRunLedger } from './helpers.js';

const RUN = '20260101-000000-a1b2';

describe('event stream', () => {
  const fixture = useRunLedger(RUN);

  it('keeps every event in recording order and returns it as recorded, except model-delta', async () => {
    const { ledger, ev } = fixture;
    const request = modelRequest('hi');
    const recorded = [
      ev('run-start', {
        workflow: 'tdd',
        feature: 'sum',
        branch: `ratchet/${RUN}`,
        worktree: '/w',
        baseCommit: 'abc',
        resumed: false,
      }),
      ev('cycle-start', { cycle: 1, test: 'adds two numbers' }),
      ev('plan-select', {
        cycle: 1,
        test: 'adds two numbers',
        testFile: 'test/sum.test.ts',
        implFile: 'src/sum.ts',
      }),
      ev('stage-start', { stage: 'RED', phase: 'RED', attempt: 1, cycle: 1 }),
      ev('model-delta', { text: 'Writ' }),
      ev('model-call', {
        stage: 'RED',
        provider: 'anthropic',
        model: 'm',
        request,
        response: modelResponse('ok', { input: 1, output: 2 }, null),
        error: null,
        latencyMs: 5,
      }),
      ev('model-retry', {
        provider: 'anthropic',
        model: 'm',
        attempt: 1,
        delayMs: 1000,
        reason: 'overloaded',
      }),
      ev('tool-call', {
        stage: 'RED',
        tool: 'Read',
        input: { file_path: 'a' },
        output: 'content',
        isError: false,
        durationMs: 1,
      }),
      ev('verify-end', {
        stage: 'RED',
        kind: 'test',
        result: testRunResult(),
        outputFile: null,
      }),
      ev('stage-end', {
        stage: 'RED',
        phase: 'RED',
        attempt: 1,
        cycle: 1,
        outcome: 'accepted',
      }),
      ev('checkpoint-create', {
        stage: 'RED',
        phase: 'RED',
        commit: 'c1',
        subject: 'test: adds',
      }),
      ev('note-write', {
        commit: 'c1',
        state: {
          phase: 'RED',
          nextPhase: 'GREEN',
          cycleNumber: 1,
          currentTest: null,
          completedTests: [],
          pendingTests: ['adds'],
          testResult: 'FAIL',
          error: null,
          errorDetails: null,
          retryCount: 0,
        },
      }),
      ev('checkpoint-rollback', {
        stage: 'REFACTOR',
        to: 'c1',
        reason: 'RE_VERIFY failed',
      }),
      ev('warning', { message: 'slow test suite', stage: 'VERIFY' }),
      ev('log', { message: 'done' }),
      ev('run-end', { status: 'completed' }),
    ];
    // Mixed single and batched writes keep the order of the calls.
    await ledger.record(recorded[0]!);
    await ledger.recordMany(recorded.slice(1, 9));
    for (const event of recorded.slice(9)) await ledger.record(event);

    const stored = await ledger.events(RUN);
    expect(stored).toEqual(recorded.filter((event) => event.type !== 'model-delta'));

    const selected = await ledger.events(RUN, {
      types: ['stage-start', 'stage-end', 'model-call'],
    });
    expect(selected.map((event) => event.type)).toEqual(['stage-start', 'model-call', 'stage-end']);
    expect(await ledger.events(RUN, { types: [] })).toEqual([]);
  });

  it('numbers events per run, independently of other runs', async () => {
    const { ledger, ev } = fixture;
    const other = eventFactory('other-run');
    await ledger.recordMany([
      ev('log', { message: 'a1' }),
      other('log', { message: 'b1' }),
      ev('log', { message: 'a2' }),
    ]);
    const glob = { stage: null, tool: 'Glob', input: { pattern: '*' }, output: '', isError: false, durationMs: 1 };
    await ledger.record(ev('tool-call', glob));
    await ledger.record(other('tool-call', glob));

    expect((await ledger.events(RUN)).map((event) => (event.type === 'log' ? event.message : event.type))).toEqual([
      'a1',
      'a2',
      'tool-call',
    ]);
    expect((await ledger.toolCalls(RUN)).map((call) => call.seq)).toEqual([3]);
    expect(await ledger.lastEventNumber(RUN)).toBe(3);
    expect(await ledger.lastEventNumber('other-run')).toBe(2);
    expect(await ledger.lastEventNumber('no-such-run')).toBe(0);
    // Numbers taken by events that were never stored (model-delta, say) are not reused.
    await ledger.record({ ...ev('log', { message: 'a4' }), id: `${RUN}:12` });
    expect(await ledger.lastEventNumber(RUN)).toBe(12);
    expect((await ledger.toolCalls('other-run')).map((call) => call.seq)).toEqual([2]);
  });
});
