import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { EventMap, EventType, RatchetEvent } from '../../src/core/events.js';
import type { CheckResult, TestRunResult } from '../../src/core/verification.js';
import type { ModelRequest, ModelResponse } from '../../src/core/model.js';
import { openLedger, type Ledger, type NewRun } from '../../src/ledger/index.js';

/** A fresh temporary directory, removed by the returned `cleanup`. */
async function tempDir(): Promise<{
  dir: string;
  cleanup: () => Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'ratchet-ledger-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A fresh temporary directory per test of the calling suite, removed after the test; read `dir`
 * inside a test.
 */
export function useTempDir(): { readonly dir: string } {
  let temp: { dir: string; cleanup: () => Promise<void> } | undefined;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp?.cleanup();
    temp = undefined;
  });
  return {
    get dir(): string {
      if (temp === undefined) throw new Error('The temporary directory is made in beforeEach.');
      return temp.dir;
    },
  };
}

/** A `tdd` run in `/repo` (the least `createRun` needs), with `fields` on top. */
export function newRun(id: string, fields: Partial<NewRun> = {}): NewRun {
  return { id, workflow: 'tdd', repoRoot: '/repo', feature: 'f', ...fields };
}

/**
 * Per test of the calling suite: a ledger at `file` (relative to a fresh temporary directory) on a
 * `steppingClock`, closed and removed after the test.
 */
export function useLedger(file = 'ledger.db'): { readonly dir: string; readonly ledger: Ledger } {
  const temp = useTempDir();
  let opened: Ledger | undefined;
  beforeEach(async () => {
    opened = await openLedger(join(temp.dir, file), { secrets: [], now: steppingClock() });
  });
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });
  return {
    get dir(): string {
      return temp.dir;
    },
    get ledger(): Ledger {
      if (opened === undefined) throw new Error('The ledger is opened in beforeEach.');
      return opened;
    },
  };
}

/**
 * `useLedger` holding the `tdd` run `runId` (feature `sum`), with a fresh `eventFactory` for it in
 * every test.
 */
export function useRunLedger(runId: string): { readonly ledger: Ledger; readonly ev: EventBuilder } {
  const fixture = useLedger();
  let ev: EventBuilder | undefined;
  beforeEach(async () => {
    await fixture.ledger.createRun(newRun(runId, { repoRoot: fixture.dir, feature: 'sum' }));
    ev = eventFactory(runId);
  });
  return {
    get ledger(): Ledger {
      return fixture.ledger;
    },
    get ev(): EventBuilder {
      if (ev === undefined) throw new Error('The event factory is made in beforeEach.');
      return ev;
    },
  };
}

/** A deterministic clock: each call is one second after the previous one. */
export function steppingClock(start = Date.parse('2026-01-01T00:00:00.000Z')): () => Date {
  let next = start;
  return () => {
    const now = new Date(next);
    next += 1000;
    return now;
  };
}

/** Builds one enveloped event of a run from its type and payload. */
export type EventBuilder = <K extends EventType>(type: K, payload: EventMap[K]) => RatchetEvent;

/** Builds enveloped events for one run with ids `<runId>:<n>` and timestamps 1 s apart. */
export function eventFactory(runId: string, start = Date.parse('2026-01-01T00:00:10.000Z')): EventBuilder {
  let n = 0;
  return (type, payload) => {
    n += 1;
    return {
      type,
      ...payload,
      id: `${runId}:${n}`,
      runId,
      timestamp: new Date(start + n * 1000).toISOString(),
    } as RatchetEvent;
  };
}

export function modelRequest(userText: string): ModelRequest {
  return {
    system: 'Stage: GREEN\nWrite the least code that passes.',
    messages: [
      { role: 'user', content: userText },
      {
        role: 'assistant',
        text: 'Reading.',
        toolCalls: [{ id: 't1', name: 'Read', input: { file_path: 'src/a.ts' } }],
      },
      {
        role: 'tool',
        results: [
          {
            toolCallId: 't1',
            toolName: 'Read',
            output: 'export const a = 1;',
            isError: false,
          },
        ],
      },
    ],
    tools: [
      {
        name: 'Read',
        description: 'Read a file',
        inputSchema: { type: 'object' },
      },
    ],
    maxOutputTokens: 4096,
  };
}

export function modelResponse(
  text: string,
  usage: { input: number; output: number },
  costUsd: number | null,
): ModelResponse {
  return {
    text,
    toolCalls: [],
    finishReason: 'stop',
    usage: { inputTokens: usage.input, outputTokens: usage.output },
    costUsd,
    model: 'claude-test',
    provider: 'anthropic',
    latencyMs: 120,
  };
}

export function testRunResult(overrides: Partial<TestRunResult> = {}): TestRunResult {
  return {
    command: 'npx vitest run',
    exitCode: 1,
    timedOut: false,
    durationMs: 1500,
    output: 'FAIL test/a.test.ts > adds\nAssertionError: expected 2 to be 3',
    tests: [
      {
        id: 'test/a.test.ts::adds',
        name: 'adds',
        file: 'test/a.test.ts',
        status: 'failed',
        failureKind: 'assertion',
        message: 'expected 2 to be 3',
      },
      {
        id: 'test/a.test.ts::subtracts',
        name: 'subtracts',
        file: 'test/a.test.ts',
        status: 'passed',
      },
      {
        id: 'test/a.test.ts::later',
        name: 'later',
        file: 'test/a.test.ts',
        status: 'skipped',
      },
    ],
    collectionErrors: [],
    source: 'jest-json',
    counts: { passed: 1, failed: 1, skipped: 1, total: 3 },
    ...overrides,
  };
}

export function checkResult(overrides: Partial<CheckResult> = {}): CheckResult {
  return {
    name: 'eslint',
    command: 'npx eslint .',
    exitCode: 0,
    timedOut: false,
    durationMs: 800,
    output: '',
    ok: true,
    ...overrides,
  };
}
