/**
 * Maps what the AI SDK throws (or reports as a stream `error` part) to `RatchetError`, deciding
 * the code and retryability from the HTTP status, the stream error metadata or the socket error
 * code — never from message text. Keeps API keys out of every message.
 */
import { APICallError, StreamProviderError } from 'ai';
import { z } from 'zod';
import { RatchetError } from '../core/errors.js';

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

const OVERLOADED_STATUSES = new Set([408, 409, 500, 502, 503, 504, 529]);

/** `{error: {message}}` (Anthropic, OpenAI, vLLM), `{error: "..."}` (Ollama), `{message}`. */
const errorBodySchema = z.union([
  z.object({ error: z.object({ message: z.string() }) }).transform((body) => body.error.message),
  z.object({ error: z.string() }).transform((body) => body.error),
  z.object({ message: z.string() }).transform((body) => body.message),
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
  if (status >= 200 && status < 300) return malformed(error, context);
  const serverMessage = serverMessageOf(error.responseBody) ?? error.message;
  const retryAfterMs = parseRetryAfterMs(error.responseHeaders, context.now());
  const requestId = error.responseHeaders?.['request-id'] ?? error.responseHeaders?.['x-request-id'];
  return fromStatus(status, serverMessage, retryAfterMs, error, context, requestId);
}

function fromStreamError(error: StreamProviderError, context: ProviderErrorContext): RatchetError {
  const status = error.statusCode;
  // A stream that already started answered 200; an `error` event in it is the server failing
  // mid-response, which is worth repeating unless it names a client-side problem.
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 409) {
    return fromStatus(status, error.message, undefined, error, context, undefined);
  }
  return build(
    'overloaded',
    `${context.provider} failed mid-stream${error.type === undefined ? '' : ` (${error.type})`}: ${error.message}`,
    { cause: error, retryable: true, details: details(context, { status, errorType: error.type }) },
    context,
  );
}

function fromStatus(
  status: number,
  serverMessage: string,
  retryAfterMs: number | undefined,
  cause: unknown,
  context: ProviderErrorContext,
  requestId: string | undefined,
): RatchetError {
  const { provider, modelId } = context;
  const info = details(context, { status, requestId });
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
    {
      cause,
      retryable: true,
      hint: 'Check the network connection and the base URL (--base-url or the provider environment variables).',
      details: details(context, { code }),
    },
    context,
  );
}

function malformed(cause: unknown, context: ProviderErrorContext): RatchetError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return build(
    'provider',
    `${context.provider} returned an invalid response for model "${context.modelId}": ${firstLine(reason)}`,
    { cause, retryable: false, details: details(context, {}) },
    context,
  );
}

function build(
  code: 'auth' | 'provider' | 'rate-limit' | 'overloaded' | 'network',
  message: string,
  options: ConstructorParameters<typeof RatchetError>[2],
  context: ProviderErrorContext,
): RatchetError {
  const redact = (text: string | undefined): string | undefined => {
    if (text === undefined) return undefined;
    let result = text;
    for (const secret of context.secrets ?? []) {
      if (secret.length >= 4) result = result.split(secret).join('[redacted]');
    }
    return result;
  };
  return new RatchetError(code, redact(message) ?? message, { ...options, hint: redact(options?.hint) });
}

function details(context: ProviderErrorContext, extra: Record<string, unknown>): Record<string, unknown> {
  const entries = Object.entries(extra).filter(([, value]) => value !== undefined);
  return { provider: context.provider, model: context.modelId, ...Object.fromEntries(entries) };
}

function serverMessageOf(body: string | undefined): string | undefined {
  if (body === undefined || body.trim() === '') return undefined;
  let json: unknown;
  try {
    json = JSON.parse(body) as unknown;
  } catch {
    return firstLine(body).slice(0, 300);
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
  return caused.success ? findNetworkCode(caused.data.cause, depth + 1) : undefined;
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? text;
}
