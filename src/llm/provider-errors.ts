/**
 * Maps what the AI SDK throws (or reports as a stream `error` part) to `RatchetError`, deciding
 * the code and retryability from the HTTP status, the error body's type or code, the stream error
 * metadata or the socket error code — not from message prose (the exceptions are undici's
 * `TypeError: terminated`, which carries no code of its own, and one @ai-sdk/anthropic error
 * without a cause, both only for wording or as a last resort). Keeps API keys out of every
 * message, masked ones included (`serverTextRedactor`).
 */
import { APICallError, JSONParseError, StreamProviderError, TypeValidationError } from 'ai';
import { z } from 'zod';
import { RatchetError } from '../core/errors.js';
import { serverTextRedactor, withoutFinalPeriod } from './server-message.js';

/** What the mapper needs to word errors and keep secrets out of them. */
export interface ProviderErrorContext {
  provider: string;
  modelId: string;
  /** Environment variable holding the key, named in the hint of `auth` errors. */
  keyVar?: string;
  /** True when that variable is not set (an OpenAI-compatible server called without a key). */
  keyMissing?: boolean;
  /** Strings (API keys) that must never appear in a message or hint. */
  secrets?: readonly string[];
  /** Clock for HTTP-date `retry-after` values. */
  now: () => number;
  signal?: AbortSignal;
  /** When the failed attempt started (a `now()` time): the error's `details.latencyMs` is its duration. */
  startedAt?: number;
  /** The call streamed its response (for the wording of an invalid response). */
  streaming?: boolean;
}

const MAX_CAUSE_DEPTH = 6;

/** Socket-level failure codes (Node and undici) that make a call worth repeating. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * undici's fetch rejects a body read with `TypeError: terminated` when the connection closes
 * mid-body; its cause (a `SocketError`, `UND_ERR_SOCKET`) usually names the code, not always.
 */
const BODY_TERMINATED = 'terminated';

/**
 * What @ai-sdk/anthropic throws, without a cause, when the first event of a stream cannot be
 * parsed (not JSON, or not a Messages API event). Only used to word the error.
 */
const ANTHROPIC_UNPARSABLE_FIRST_EVENT = 'Expected a normalized Anthropic stream error';

/** OpenAI's error type and code for a 429 that is a used-up quota (billing), not a rate limit. */
const QUOTA_EXCEEDED = 'insufficient_quota';

const OVERLOADED_STATUSES = new Set([408, 409, 500, 502, 503, 504, 529]);

/** An error body as servers send it. */
interface ServerError {
  message: string;
  type?: string;
  code?: string;
}

/** `type` / `code` as strings (vLLM uses integer codes); absent when null. */
const errorLabel = z
  .union([z.string(), z.number()])
  .nullish()
  .transform((value) => (value === null || value === undefined ? undefined : String(value)));

/** `{error: {message, type?, code?}}` (Anthropic, OpenAI, vLLM), `{error: "..."}` (Ollama), `{message}`. */
const errorBodySchema = z.union([
  z
    .object({ error: z.object({ message: z.string(), type: errorLabel, code: errorLabel }) })
    .transform(({ error }): ServerError => ({ message: error.message, type: error.type, code: error.code })),
  z.object({ error: z.string() }).transform((body): ServerError => ({ message: body.error })),
  z.object({ message: z.string() }).transform((body): ServerError => ({ message: body.message })),
]);

const codedSchema = z.looseObject({ code: z.string() });
const causedSchema = z.looseObject({ cause: z.unknown() });
const aggregateSchema = z.looseObject({ errors: z.array(z.unknown()) });

/** Turns anything the SDK raised during one model call into a `RatchetError`. */
export function toProviderError(error: unknown, context: ProviderErrorContext): RatchetError {
  if (error instanceof RatchetError) return error;
  if (context.signal?.aborted === true || (error instanceof Error && error.name === 'AbortError')) {
    return new RatchetError('interrupted', 'Interrupted', { cause: error });
  }
  if (APICallError.isInstance(error)) return fromApiCallError(error, context);
  if (StreamProviderError.isInstance(error)) return fromStreamError(error, context);
  const networkCode = findNetworkCode(error);
  if (networkCode !== undefined) return networkError(error, networkCode, undefined, context);
  return malformed(error, context);
}

/**
 * Milliseconds the server asked us to wait: `retry-after-ms`, else `retry-after` in seconds or as
 * an HTTP date. Undefined when absent or unparsable.
 */
export function parseRetryAfterMs(headers: Record<string, string> | undefined, now: number): number | undefined {
  if (headers === undefined) return undefined;
  const lookup = (name: string): string | undefined =>
    Object.entries(headers)
      .find(([key]) => key.toLowerCase() === name)?.[1]
      ?.trim();
  const ms = lookup('retry-after-ms');
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms));
  const after = lookup('retry-after');
  if (after === undefined || after === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(after)) return Math.round(Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function fromApiCallError(error: APICallError, context: ProviderErrorContext): RatchetError {
  const status = error.statusCode;
  if (status === undefined) {
    const code = findNetworkCode(error) ?? 'connection failed';
    return networkError(error, code, error.url, context);
  }
  if (status >= 200 && status < 300) {
    // The answer had begun when the connection broke (reset, closed by the other side): that is
    // a network failure, retried like any reset, not an invalid answer.
    const code = findNetworkCode(error);
    return code === undefined ? malformed(error, context) : brokenResponse(error, code, status, context);
  }
  const server = serverErrorOf(error.responseBody) ?? { message: error.message };
  const retryAfterMs = parseRetryAfterMs(error.responseHeaders, context.now());
  const requestId = error.responseHeaders?.['request-id'] ?? error.responseHeaders?.['x-request-id'];
  return fromStatus(status, server, retryAfterMs, error, context, requestId);
}

function fromStreamError(error: StreamProviderError, context: ProviderErrorContext): RatchetError {
  const status = error.statusCode;
  // A stream that already started answered 200; an `error` event in it is the server failing
  // mid-response, which is worth repeating unless it names a client-side problem.
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 409) {
    return fromStatus(status, { message: error.message, type: error.type }, undefined, error, context, undefined);
  }
  return build(
    'overloaded',
    `${context.provider} failed mid-stream${error.type === undefined ? '' : ` (${error.type})`}: ${withoutFinalPeriod(error.message)}`,
    { cause: error, retryable: true, details: details(context, { status, errorType: error.type }) },
    context,
  );
}

function fromStatus(
  status: number,
  server: ServerError,
  retryAfterMs: number | undefined,
  cause: unknown,
  context: ProviderErrorContext,
  requestId: string | undefined,
): RatchetError {
  const { provider, modelId } = context;
  // Server messages end our sentences (or are followed by `; retry 1 in 1.0 s`): no period of their own.
  const serverMessage = withoutFinalPeriod(server.message.trim());
  const info = details(context, { status, requestId, errorType: server.type, errorCode: server.code });
  if (status === 401 || status === 403) {
    return build(
      'auth',
      `${provider} rejected the credentials (HTTP ${status}): ${serverMessage}`,
      {
        cause,
        details: info,
        hint:
          context.keyVar === undefined
            ? `Check the API key configured for ${provider}.`
            : context.keyMissing === true
              ? `The server wants an API key, and ${context.keyVar} is not set: export ${context.keyVar} with the key it expects.`
              : `Check that ${context.keyVar} holds a valid API key for ${provider}.`,
      },
      context,
    );
  }
  if (status === 429 && (server.code === QUOTA_EXCEEDED || server.type === QUOTA_EXCEEDED)) {
    // Waiting does not bring a quota back: fail at once, as for a 402.
    return build(
      'provider',
      `${provider} refused the request: the account's quota is used up (HTTP 429 ${QUOTA_EXCEEDED}): ${serverMessage}`,
      {
        cause,
        details: info,
        hint: `Check the plan and billing details of the ${provider} account${context.keyVar === undefined ? '' : ` whose key is in ${context.keyVar}`}. This is not a rate limit, so it is not retried.`,
      },
      context,
    );
  }
  if (status === 429) {
    return build(
      'rate-limit',
      `${provider} rate limit reached (HTTP 429): ${serverMessage}`,
      { cause, details: info, retryable: true, retryAfterMs },
      context,
    );
  }
  if (OVERLOADED_STATUSES.has(status) || status >= 500) {
    return build(
      'overloaded',
      `${provider} is overloaded or failing (HTTP ${status}): ${serverMessage}`,
      { cause, details: info, retryable: true, retryAfterMs },
      context,
    );
  }
  const unchanged = `The configured model "${modelId}" was sent unchanged.`;
  const hints: Record<number, string> = {
    400: 'Check --model, --base-url and the request settings.',
    402: `Check the billing or credit balance of the ${provider} account.`,
    404: `Check --model (or the stage's model in config) and --base-url; Ratchet never substitutes a model.`,
    413: 'The request is too large: reduce the context (fewer or smaller files).',
  };
  const suffix = status === 400 || status === 404 ? ` ${unchanged}` : '';
  return build(
    'provider',
    `${provider} rejected the request for model "${modelId}" (HTTP ${status}): ${serverMessage}.${suffix}`,
    { cause, details: info, hint: hints[status] },
    context,
  );
}

const NETWORK_HINT =
  'Check the network connection and the base URL (--base-url or the provider environment variables).';

function networkError(
  cause: unknown,
  code: string,
  url: string | undefined,
  context: ProviderErrorContext,
): RatchetError {
  const where = url === undefined ? '' : ` at ${new URL(url).origin}`;
  return build(
    'network',
    `Cannot reach ${context.provider}${where} (${code})`,
    { cause, retryable: true, hint: NETWORK_HINT, details: details(context, { code }) },
    context,
  );
}

/** The server had answered (2xx) when the connection broke in the middle of the response. */
function brokenResponse(cause: unknown, code: string, status: number, context: ProviderErrorContext): RatchetError {
  return build(
    'network',
    `The connection to ${context.provider} broke while its response was arriving (${code})`,
    { cause, retryable: true, hint: NETWORK_HINT, details: details(context, { code, status }) },
    context,
  );
}

function malformed(cause: unknown, context: ProviderErrorContext): RatchetError {
  return build(
    'provider',
    `${context.provider} returned an invalid response for model "${context.modelId}": ${invalidReason(cause, context)}`,
    { cause, retryable: false, details: details(context, {}) },
    context,
  );
}

/** What was wrong with a 2xx answer, in words. */
function invalidReason(cause: unknown, context: ProviderErrorContext): string {
  const where = context.streaming === true ? 'the response stream carried' : 'the response body is';
  if (inCauseChain(cause, (error) => JSONParseError.isInstance(error))) {
    return context.streaming === true ? `${where} invalid JSON` : `${where} not valid JSON`;
  }
  if (cause instanceof Error && cause.message === ANTHROPIC_UNPARSABLE_FIRST_EVENT) {
    return 'the response stream carried invalid JSON (its first event could not be parsed as a Messages API event)';
  }
  if (inCauseChain(cause, (error) => TypeValidationError.isInstance(error))) {
    return context.streaming === true
      ? `${where} an event of a shape the API does not define`
      : `${where} not of the shape the API defines`;
  }
  return firstLine(cause instanceof Error ? cause.message : String(cause));
}

function build(
  code: 'auth' | 'provider' | 'rate-limit' | 'overloaded' | 'network',
  message: string,
  options: ConstructorParameters<typeof RatchetError>[2],
  context: ProviderErrorContext,
): RatchetError {
  const redact = serverTextRedactor(context.secrets ?? []);
  return new RatchetError(code, redact(message), {
    ...options,
    hint: options?.hint === undefined ? undefined : redact(options.hint),
  });
}

function details(context: ProviderErrorContext, extra: Record<string, unknown>): Record<string, unknown> {
  const latencyMs = context.startedAt === undefined ? undefined : Math.max(0, context.now() - context.startedAt);
  const entries = Object.entries({ ...extra, latencyMs }).filter(([, value]) => value !== undefined);
  return { provider: context.provider, model: context.modelId, ...Object.fromEntries(entries) };
}

function serverErrorOf(body: string | undefined): ServerError | undefined {
  if (body === undefined || body.trim() === '') return undefined;
  let json: unknown;
  try {
    json = JSON.parse(body) as unknown;
  } catch {
    return { message: firstLine(body).slice(0, 300) };
  }
  const parsed = errorBodySchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

/** Depth-first search of `cause` chains (and AggregateError members) for a socket error code. */
function findNetworkCode(error: unknown, depth = 0): string | undefined {
  if (depth > MAX_CAUSE_DEPTH || typeof error !== 'object' || error === null) return undefined;
  const coded = codedSchema.safeParse(error);
  if (coded.success && NETWORK_CODES.has(coded.data.code)) return coded.data.code;
  const aggregate = aggregateSchema.safeParse(error);
  if (aggregate.success) {
    for (const member of aggregate.data.errors) {
      const code = findNetworkCode(member, depth + 1);
      if (code !== undefined) return code;
    }
  }
  const caused = causedSchema.safeParse(error);
  const deeper = caused.success ? findNetworkCode(caused.data.cause, depth + 1) : undefined;
  if (deeper !== undefined) return deeper;
  return error instanceof TypeError && error.message === BODY_TERMINATED ? BODY_TERMINATED : undefined;
}

/** Whether `error` or one of its causes satisfies `test`. */
function inCauseChain(error: unknown, test: (error: unknown) => boolean, depth = 0): boolean {
  if (depth > MAX_CAUSE_DEPTH || typeof error !== 'object' || error === null) return false;
  if (test(error)) return true;
  const caused = causedSchema.safeParse(error);
  return caused.success && inCauseChain(caused.data.cause, test, depth + 1);
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? text;
}
