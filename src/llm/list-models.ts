/**
 * Lists an HTTP provider's models: the one request that proves an endpoint and its key work
 * without spending tokens (`ratchet doctor`). The request is the provider's own:
 *
 * | provider | request | key |
 * | --- | --- | --- |
 * | anthropic | `GET <base>/v1/models?limit=1000` (Models API) | `x-api-key`, with `anthropic-version: 2023-06-01` |
 * | openai, openai-compatible, ollama | `GET <base>/models` (`<base>` ends in `/v1`) | `Authorization: Bearer` |
 *
 * `baseUrl` is in the provider's convention (`ResolvedEndpoint.baseUrl`, `endpointOf`). The key
 * is sent as the model client sends it, never put in the result: server messages are redacted.
 */
import { z } from 'zod';
import { createRedactor, REDACTED } from '../core/redact.js';
import { cleanServerMessage } from './server-message.js';

export interface ListModelsOptions {
  provider: 'anthropic' | 'openai' | 'openai-compatible' | 'ollama';
  /** In the provider's convention: Anthropic without `/v1`, the others with it. */
  baseUrl: string;
  /** Undefined sends no credentials (a key that is not set). */
  apiKey: string | undefined;
  fetch: typeof fetch;
  /** The whole exchange, answer included, must finish within this. */
  timeoutMs: number;
}

/** What the endpoint answered; `url` is the models URL without its query. */
export type ModelListing =
  /** 2xx with a model list (`data[].id`); `hasMore`: more pages follow (Anthropic). */
  | { kind: 'listed'; url: string; status: number; ids: string[]; hasMore: boolean }
  /** 2xx whose body is not a model list (a web page, another API). */
  | { kind: 'not-a-list'; url: string; status: number }
  /** Any other HTTP status, with the error type and message when the body has them (redacted). */
  | { kind: 'status'; url: string; status: number; errorType?: string; message?: string; location?: string }
  /** No HTTP answer: refused, unknown host, reset, or silence past the timeout. */
  | { kind: 'unreachable'; url: string; reason: string };

/** Pinned like the official clients pin it; the Models API needs it as every Anthropic route does. */
const ANTHROPIC_VERSION = '2023-06-01';

/** How much of a server message is kept. */
const MAX_MESSAGE = 200;

const listSchema = z.looseObject({
  data: z.array(z.looseObject({ id: z.string() })),
  has_more: z.boolean().optional(),
});

/** `{error: {type?, message}}` (Anthropic, OpenAI, vLLM), `{error: "..."}` (Ollama), `{message}`. */
const errorSchema = z.union([
  z
    .looseObject({ error: z.looseObject({ message: z.string(), type: z.string().nullish() }) })
    .transform(({ error }) => ({ message: error.message, type: error.type ?? undefined })),
  z.looseObject({ error: z.string() }).transform(({ error }) => ({ message: error, type: undefined })),
  z.looseObject({ message: z.string() }).transform(({ message }) => ({ message, type: undefined })),
]);

/** Sends the provider's list-models request and reports what came back. Never throws. */
export async function listModels(options: ListModelsOptions): Promise<ModelListing> {
  const anthropic = options.provider === 'anthropic';
  const url = anthropic ? `${options.baseUrl}/v1/models` : `${options.baseUrl}/models`;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (anthropic) {
    headers['anthropic-version'] = ANTHROPIC_VERSION;
    if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
  } else if (options.apiKey !== undefined) {
    headers.authorization = `Bearer ${options.apiKey}`;
  }
  const redact = keyRedactor(options.apiKey);
  try {
    // `manual`: a redirect is reported, not followed, so the key goes nowhere but the endpoint.
    const response = await options.fetch(anthropic ? `${url}?limit=1000` : url, {
      method: 'GET',
      headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const text = await response.text();
    const body = parseJson(text);
    if (response.status >= 200 && response.status < 300) {
      const list = listSchema.safeParse(body);
      return list.success
        ? {
            kind: 'listed',
            url,
            status: response.status,
            ids: list.data.data.map((model) => model.id),
            hasMore: list.data.has_more === true,
          }
        : { kind: 'not-a-list', url, status: response.status };
    }
    const error = errorSchema.safeParse(body);
    const location = response.headers.get('location') ?? undefined;
    return {
      kind: 'status',
      url,
      status: response.status,
      ...(error.success && error.data.type !== undefined ? { errorType: redact(error.data.type) } : {}),
      ...(error.success ? { message: cleanServerMessage(error.data.message, redact, MAX_MESSAGE) } : {}),
      ...(location === undefined ? {} : { location: redact(location) }),
    };
  } catch (error) {
    return { kind: 'unreachable', url, reason: redact(reasonOf(error, options.timeoutMs)) };
  }
}

/** The redactor's key shapes, plus this key however short it is (the redactor skips short ones). */
function keyRedactor(apiKey: string | undefined): (text: string) => string {
  const redact = createRedactor(apiKey === undefined ? [] : [apiKey]);
  return (text) => redact(apiKey === undefined || apiKey.length < 4 ? text : text.split(apiKey).join(REDACTED));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function reasonOf(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer within ${timeoutMs / 1000} s`;
  }
  if (error instanceof Error && error.cause instanceof Error) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}
