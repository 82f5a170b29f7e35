/**
 * Retry policy for model calls, separate from classification: adapters mark errors `retryable`
 * (and carry the server's `retryAfterMs`) where the HTTP status is seen; this module only reads
 * those flags. Backoff is 1 s, 2 s, 4 s, ... or what the server asked for, capped at 60 s (a
 * longer `retry-after` is reported as capped, see `retryCapNote`).
 */
import { RatchetError, throwIfAborted, toRatchetError } from '../core/errors.js';
import type { GenerateOptions, ModelClient, ModelRequest, ModelResponse } from '../core/model.js';

/** Upper bound for any single wait, whatever the server asks. */
const MAX_RETRY_DELAY_MS = 60_000;

/**
 * Wait before retry number `attempt` (1-based): the server's `retryAfterMs` when given, else
 * `baseMs * 2^(attempt-1)`; never more than 60 s.
 */
export function retryDelayMs(attempt: number, error: RatchetError, baseMs = 1000): number {
  const delay =
    error.retryAfterMs !== undefined && Number.isFinite(error.retryAfterMs) && error.retryAfterMs >= 0
      ? error.retryAfterMs
      : baseMs * 2 ** Math.max(0, attempt - 1);
  return Math.min(delay, MAX_RETRY_DELAY_MS);
}

/** Reported before each wait. */
export interface RetryInfo {
  /** 1-based number of the retry about to happen. */
  attempt: number;
  delayMs: number;
  error: RatchetError;
  /** The server's `retry-after` when it asked for longer than the cap (`delayMs` is the cap then). */
  cappedRetryAfterMs?: number;
}

/**
 * What a retry's progress line adds when the server's `retry-after` was longer than Ratchet
 * waits: ` (the server asked to wait 600 s; waiting at most 60 s)`, else nothing.
 */
export function retryCapNote(info: Pick<RetryInfo, 'cappedRetryAfterMs' | 'delayMs'>): string {
  if (info.cappedRetryAfterMs === undefined) return '';
  const seconds = (ms: number): string => String(Math.round(ms / 100) / 10);
  return ` (the server asked to wait ${seconds(info.cappedRetryAfterMs)} s; waiting at most ${seconds(info.delayMs)} s)`;
}

export interface RetryOptions {
  /** Retries after the first attempt (default 3, so at most 4 calls). */
  maxRetries?: number;
  /** Waits `ms`; should reject when the signal fires (see `Clock.sleep`). */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  onRetry?: (info: RetryInfo) => void;
  /** First backoff step in milliseconds (default 1000). */
  baseDelayMs?: number;
}

/**
 * Wraps a client so `retryable` errors are repeated with backoff; other errors fail at once and
 * the last error is re-thrown after `maxRetries`. Streamed deltas of a failed attempt have
 * already been delivered: a retried attempt streams its text again from the start.
 */
export function withRetry(client: ModelClient, options: RetryOptions): ModelClient {
  const maxRetries = options.maxRetries ?? 3;
  return {
    specificationVersion: 'ratchet-model-v1',
    provider: client.provider,
    modelId: client.modelId,
    async generate(request: ModelRequest, generateOptions?: GenerateOptions): Promise<ModelResponse> {
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await client.generate(request, generateOptions);
        } catch (thrown) {
          const error = toRatchetError(thrown);
          if (!error.retryable || attempt > maxRetries) throw error;
          throwIfAborted(generateOptions?.signal);
          const delayMs = retryDelayMs(attempt, error, options.baseDelayMs);
          const capped =
            error.retryAfterMs !== undefined && Number.isFinite(error.retryAfterMs) && error.retryAfterMs > delayMs;
          options.onRetry?.({ attempt, delayMs, error, ...(capped ? { cappedRetryAfterMs: error.retryAfterMs } : {}) });
          await options.sleep(delayMs, generateOptions?.signal);
          throwIfAborted(generateOptions?.signal);
        }
      }
    },
  };
}
