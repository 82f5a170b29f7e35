import { describe, expect, it } from 'vitest';
import { checkResult, modelRequest, modelResponse, testRunResult, useRunLedger } from './helpers.js';

const RUN = '20260101-000000-a1b2';

describe('recording events into typed tables', () => {
  const fixture = useRunLedger(RUN);

  it('stores model calls with the full request and response, and failed calls with their error', async () => {
    const { ledger, ev } = fixture;
    const request = modelRequest('Make the test pass');
    const response = modelResponse('Done.', { input: 1200, output: 300 }, 0.0081);
    await ledger.record(
      ev('model-call', {
        stage: 'GREEN',
        provider: 'anthropic',
        model: 'claude-test',
        request,
        response,
        error: null,
        latencyMs: 950,
      }),
    );
    await ledger.record(
      ev('model-call', {
        stage: null,
        provider: 'openai',
        model: 'gpt-test',
        request,
        response: null,
        error: { code: 'rate-limit', message: '429 Too Many Requests' },
        latencyMs: 40,
      }),
    );

    const calls = await ledger.modelCalls(RUN);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toEqual({
      id: expect.any(Number) as unknown,
      runId: RUN,
      seq: 1,
      stage: 'GREEN',
      provider: 'anthropic',
      model: 'claude-test',
      request,
      response,
      finishReason: 'stop',
      inputTokens: 1200,
      outputTokens: 300,
      costUsd: 0.0081,
      latencyMs: 950,
      errorCode: null,
      error: null,
      createdAt: '2026-01-01T00:00:11.000Z',
    });
    expect(calls[1]).toMatchObject({
      seq: 2,
      stage: null,
      response: null,
      inputTokens: null,
      costUsd: null,
      errorCode: 'rate-limit',
      error: '429 Too Many Requests',
    });
  });

  it('stores tool calls', async () => {
    const { ledger, ev } = fixture;
    const write = {
      stage: 'RED' as const,
      tool: 'Write',
      input: { file_path: 'test/a.test.ts', content: 'x' },
      output: 'Wrote 1 line',
      isError: false,
      durationMs: 3,
    };
    const bash = {
      stage: 'RED' as const,
      tool: 'Bash',
      input: { command: 'false' },
      output: 'exit 1',
      isError: true,
      durationMs: 25,
    };
    await ledger.record(ev('tool-call', write));
    await ledger.record(ev('tool-call', bash));
    // A stored row is the event's payload with the row's own keys.
    expect(await ledger.toolCalls(RUN)).toEqual([
      { id: expect.any(Number) as unknown, runId: RUN, seq: 1, ...write, createdAt: '2026-01-01T00:00:11.000Z' },
      { id: expect.any(Number) as unknown, runId: RUN, seq: 2, ...bash, createdAt: '2026-01-01T00:00:12.000Z' },
    ]);
  });

  it('stores test runs with counts and failing tests, and checks with ok', async () => {
    const { ledger, ev } = fixture;
    await ledger.record(
      ev('verify-end', {
        stage: 'RED',
        kind: 'test',
        result: testRunResult({
          collectionErrors: ['test/b.test.ts: SyntaxError'],
        }),
        outputFile: '.ratchet/runs/r/red-1.log',
      }),
    );
    await ledger.record(
      ev('verify-end', {
        stage: 'VERIFY',
        kind: 'lint',
        result: checkResult({ ok: false, exitCode: 1 }),
        outputFile: null,
      }),
    );
    await ledger.record(
      ev('verify-end', {
        stage: 'VERIFY',
        kind: 'typecheck',
        result: checkResult({
          name: 'tsc',
          command: 'npx tsc',
          exitCode: null,
          timedOut: true,
          ok: false,
        }),
        outputFile: null,
      }),
    );

    const [tests, lint, typecheck] = await ledger.verifications(RUN);
    expect(tests).toMatchObject({
      seq: 1,
      stage: 'RED',
      kind: 'test',
      command: 'npx vitest run',
      exitCode: 1,
      timedOut: false,
      durationMs: 1500,
      passed: 1,
      failed: 1,
      skipped: 1,
      total: 3,
      ok: null,
      failingTests: [
        {
          id: 'test/a.test.ts::adds',
          kind: 'assertion',
          message: 'expected 2 to be 3',
        },
      ],
      collectionErrors: ['test/b.test.ts: SyntaxError'],
      outputFile: '.ratchet/runs/r/red-1.log',
    });
    expect(lint).toMatchObject({
      kind: 'lint',
      command: 'npx eslint .',
      exitCode: 1,
      ok: false,
      passed: null,
      total: null,
      failingTests: [],
    });
    expect(typecheck).toMatchObject({
      kind: 'typecheck',
      exitCode: null,
      timedOut: true,
      ok: false,
    });
  });

  it('rejects a malformed verify-end result without storing anything of it', async () => {
    const { ledger, ev } = fixture;
    const bad = ev('verify-end', {
      stage: 'VERIFY',
      kind: 'test',
      result: testRunResult(),
      outputFile: null,
    });
    if (bad.type !== 'verify-end') throw new Error('unreachable');
    const broken = {
      ...bad,
      result: { ...bad.result, counts: { passed: -1 } },
    } as unknown as typeof bad;
    await expect(ledger.recordMany([ev('log', { message: 'before' }), broken])).rejects.toMatchObject({
      name: 'RatchetError',
      code: 'internal',
      message: expect.stringContaining('TestRunResult') as unknown,
    });
    expect(await ledger.events(RUN)).toEqual([]);
    expect(await ledger.verifications(RUN)).toEqual([]);
  });

  it('stores checkpoints', async () => {
    const { ledger, ev } = fixture;
    await ledger.record(
      ev('checkpoint-create', {
        stage: 'GREEN',
        phase: 'GREEN',
        commit: 'deadbeef',
        subject: 'feat: add sum',
      }),
    );
    expect(await ledger.checkpoints(RUN)).toEqual([
      {
        id: expect.any(Number) as unknown,
        runId: RUN,
        seq: 1,
        stage: 'GREEN',
        phase: 'GREEN',
        commitSha: 'deadbeef',
        subject: 'feat: add sum',
        createdAt: '2026-01-01T00:00:11.000Z',
      },
    ]);
  });
});
