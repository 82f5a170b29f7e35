import { describe, expect, it } from 'vitest';
import { RatchetError } from '../../src/core/errors.js';
import type { ModelClient, ModelRequest, ModelResponse } from '../../src/core/model.js';
import { parseRetryAfterMs } from '../../src/llm/provider-errors.js';
import { retryCapNote, retryDelayMs, withRetry, type RetryInfo } from '../../src/llm/retry.js';
import { recordingSleep, rejectionOf, userRequest } from './model-fixtures.js';

const overloaded = (retryAfterMs?: number) => new RatchetError('overloaded', 'busy', { retryable: true, retryAfterMs });

function response(text: string): ModelResponse {
  return {
    text,
    toolCalls: [],
    finishReason: 'stop',
    usage: { inputTokens: 1, outputTokens: 1 },
    costUsd: null,
    model: 'scripted',
    provider: 'scripted',
    latencyMs: 0,
  };
}

/** A client that throws or answers from a script, one step per call. */
function scriptedClient(steps: Array<Error | string>): ModelClient & { calls: ModelRequest[] } {
  const calls: ModelRequest[] = [];
  return {
    specificationVersion: 'ratchet-model-v1',
    provider: 'scripted',
    modelId: 'scripted',
    calls,
    generate(request) {
      calls.push(request);
      const step = steps.shift();
      if (step === undefined) return Promise.reject(new Error('script exhausted'));
      return step instanceof Error ? Promise.reject(step) : Promise.resolve(response(step));
    },
  };
}

describe('retryDelayMs', () => {
  it('doubles from the base: 1 s, 2 s, 4 s, 8 s', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(attempt, overloaded()))).toEqual([1000, 2000, 4000, 8000]);
    expect(retryDelayMs(2, overloaded(), 250)).toBe(500);
  });

  it("uses the server's retry-after and caps every wait at 60 s", () => {
    expect(retryDelayMs(1, overloaded(2500))).toBe(2500);
    expect(retryDelayMs(3, overloaded(0))).toBe(0);
    expect(retryDelayMs(1, overloaded(600_000))).toBe(60_000);
    expect(retryDelayMs(10, overloaded())).toBe(60_000);
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it.each([
    [{ 'retry-after': '3' }, 3000],
    [{ 'retry-after': '0.5' }, 500],
    [{ 'Retry-After': '2' }, 2000],
    [{ 'retry-after-ms': '1234', 'retry-after': '9' }, 1234],
    [{ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }, 5000],
    [{ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }, 0],
    [{ 'retry-after': 'soon' }, undefined],
    [{}, undefined],
  ])('%j -> %s', (headers, expected) => {
    expect(parseRetryAfterMs(headers, now)).toBe(expected);
  });
});

describe('withRetry', () => {
  it('retries retryable errors and reports each retry', async () => {
    const inner = scriptedClient([overloaded(), overloaded(3000), 'done']);
    const { delays, sleep } = recordingSleep();
    const seen: RetryInfo[] = [];
    const client = withRetry(inner, { sleep, onRetry: (info) => seen.push(info) });
    expect((await client.generate(userRequest('x'))).text).toBe('done');
    expect(delays).toEqual([1000, 3000]);
    expect(seen.map((info) => [info.attempt, info.delayMs, info.error.code])).toEqual([
      [1, 1000, 'overloaded'],
      [2, 3000, 'overloaded'],
    ]);
    expect(client).toMatchObject({
      provider: 'scripted',
      modelId: 'scripted',
      specificationVersion: 'ratchet-model-v1',
    });
  });

  it('reports a retry-after longer than the cap as capped', async () => {
    const inner = scriptedClient([overloaded(600_000), overloaded(60_000), 'done']);
    const { delays, sleep } = recordingSleep();
    const seen: RetryInfo[] = [];
    const client = withRetry(inner, { sleep, onRetry: (info) => seen.push(info) });
    expect((await client.generate(userRequest('x'))).text).toBe('done');
    expect(delays).toEqual([60_000, 60_000]);
    expect(seen.map((info) => info.cappedRetryAfterMs)).toEqual([600_000, undefined]);
    expect(seen.map(retryCapNote)).toEqual([' (the server asked to wait 600 s; waiting at most 60 s)', '']);
  });

  it('fails fast on non-retryable errors', async () => {
    const auth = new RatchetError('auth', 'bad key');
    const inner = scriptedClient([auth, 'never']);
    const { delays, sleep } = recordingSleep();
    expect(await rejectionOf(withRetry(inner, { sleep }).generate(userRequest('x')))).toBe(auth);
    expect(inner.calls).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it('re-throws the last error after maxRetries', async () => {
    const last = new RatchetError('rate-limit', 'last', { retryable: true });
    const inner = scriptedClient([overloaded(), overloaded(), last, 'never']);
    const { delays, sleep } = recordingSleep();
    expect(await rejectionOf(withRetry(inner, { sleep, maxRetries: 2 }).generate(userRequest('x')))).toBe(last);
    expect(inner.calls).toHaveLength(3);
    expect(delays).toEqual([1000, 2000]);
  });

  it('wraps foreign errors as non-retryable internal errors', async () => {
    const inner = scriptedClient([new TypeError('boom'), 'never']);
    const error = await rejectionOf(withRetry(inner, recordingSleep()).generate(userRequest('x')));
    expect(error).toMatchObject({ code: 'internal', message: 'boom', retryable: false });
  });

  it('stops waiting when the signal is aborted', async () => {
    const controller = new AbortController();
    const inner = scriptedClient([overloaded(), 'never']);
    const client = withRetry(inner, {
      sleep: () => {
        controller.abort();
        return Promise.resolve();
      },
    });
    expect(await rejectionOf(client.generate(userRequest('x'), { signal: controller.signal }))).toMatchObject({
      code: 'interrupted',
    });
    expect(inner.calls).toHaveLength(1);
  });
});
