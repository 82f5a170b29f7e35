/**
 * A loopback fake of the OpenAI Chat Completions API (`POST /v1/chat/completions`), the dialect
 * OpenAI, Ollama, vLLM and llama.cpp share (see ../../../shared/PROTOCOLS.md). Real clients
 * (`@ai-sdk/openai` `.chat()`, `@ai-sdk/openai-compatible`, the `openai` package) can be
 * pointed at `url`, which already ends in `/v1` like `OPENAI_BASE_URL`.
 *
 * ```ts
 * const server = await startFakeOpenAiServer();
 * server.enqueue(
 *   { kind: 'message', toolCalls: [{ name: 'Bash', arguments: { command: 'ls' } }] },
 *   { kind: 'error', status: 429, headers: { 'retry-after': '1' } },
 *   { kind: 'message', text: 'done' },
 * );
 * ```
 *
 * Behaviour:
 * - Non-streaming: a `chat.completion` object. Streaming (`"stream": true`): `chat.completion.chunk`
 *   events — a role chunk, text split into content chunks, each tool call's id and name in one
 *   chunk and its `arguments` JSON split over later chunks, a chunk with `finish_reason`, a usage
 *   chunk (`choices: []`) only when `stream_options.include_usage` is true, then `data: [DONE]`.
 * - Errors in OpenAI's shape `{"error":{"message","type","param","code"}}`.
 * - `GET /v1/models` lists the `models` option's ids as `{object: 'list', data: [{id, object:
 *   'model', created, owned_by}]}` without consuming a reply (Ollama, vLLM and llama.cpp serve it
 *   too); `models: 'absent'` makes it a 404 and `models: {status}` an error.
 * - `Authorization: Bearer <key>` is required, on both routes, only when the `apiKey` option is
 *   set (local servers ignore keys); a wrong one gets 401 `invalid_api_key`, its message quoting the
 *   key masked but for its first 3 and last 4 characters, as OpenAI does.
 * - The response `model` echoes the requested model id exactly.
 */
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import {
  chunkText,
  estimateTokens,
  pause,
  writeSse,
  type CommonReply,
  type FakeServer,
  type RecordedRequest,
} from './fake-http-server.js';
import {
  sseSender,
  startProviderFake,
  type FakeErrorReply,
  type FakeFailureReply,
  type FakeProviderServerOptions,
  type RespondContext,
} from './fake-provider-server.js';

export type { CommonReply, RecordedRequest } from './fake-http-server.js';

export interface FakeOpenAiToolCall {
  id?: string;
  name: string;
  /** Serialised with JSON.stringify into `function.arguments`. */
  arguments: object;
}

/** What the fake answers to one `/v1/chat/completions` request. */
export type OpenAiReply = OpenAiChatReply | CommonReply;

/** The OpenAI replies (see `CommonReply` for `disconnect` and `raw`). */
export type OpenAiChatReply =
  | {
      kind: 'message';
      text?: string;
      toolCalls?: FakeOpenAiToolCall[];
      /** Default `tool_calls` when there are tool calls, else `stop`. */
      finishReason?: string;
      /**
       * Default: an estimate. `null`: no usage at all, as servers that ignore
       * `stream_options.include_usage` answer (no usage chunk, no `usage` in the body).
       */
      usage?: { inputTokens: number; outputTokens: number } | null;
      /** Wait before answering (and between streamed chunks when streaming). */
      delayMs?: number;
    }
  /** `errorType` defaults from the status, e.g. 429 `requests`, 500 `server_error`. */
  | (FakeErrorReply & {
      /** Default from the status, e.g. 401 `invalid_api_key`, 429 `rate_limit_exceeded`. */
      code?: string | null;
    })
  /** `stream-error` sends `data: {"error": {...}}` and closes the stream. */
  | FakeFailureReply;

/** The key goes in `Authorization: Bearer <apiKey>`; fragments are content / arguments chunks. */
export type StartFakeOpenAiServerOptions = FakeProviderServerOptions;

/** A running fake; `url` is `http://127.0.0.1:PORT/v1`. */
export type FakeOpenAiServer = FakeServer<OpenAiReply>;

const ERROR_DEFAULTS: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory', message: 'Forbidden' },
  404: {
    type: 'invalid_request_error',
    code: 'model_not_found',
    message: 'The model does not exist or you do not have access to it.',
  },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests' },
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request.' },
  503: { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later' },
};

const chatBodySchema = z.looseObject({
  model: z.string(),
  messages: z.array(z.unknown()),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
});

/** What `GET /v1/models` lists by default. */
const DEFAULT_MODELS = ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1'];

/** Starts the fake OpenAI-compatible server on 127.0.0.1. */
export async function startFakeOpenAiServer(options: StartFakeOpenAiServerOptions = {}): Promise<FakeOpenAiServer> {
  return startProviderFake<OpenAiChatReply>(options, {
    urlPath: '/v1',
    defaultReply: () => ({ kind: 'message', text: 'ok' }),
    reject: rejectRequest,
    respond,
  });
}

function rejectRequest(request: RecordedRequest, options: StartFakeOpenAiServerOptions): OpenAiReply | undefined {
  const keyRejected = options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`;
  if (request.method === 'GET' && request.path === '/v1/models' && options.models !== 'absent') {
    return keyRejected ? wrongKey(request) : listModels(options.models ?? DEFAULT_MODELS);
  }
  // Raw replies: `respond` needs a chat body, which these requests may not have.
  if (request.method !== 'POST' || request.path !== '/v1/chat/completions') {
    return {
      kind: 'raw',
      status: 404,
      body: errorBody(404, { code: null, message: `Unknown route ${request.method} ${request.path}` }),
    };
  }
  if (keyRejected) return wrongKey(request);
  const parsed = chatBodySchema.safeParse(request.body);
  if (!parsed.success) {
    return {
      kind: 'raw',
      status: 400,
      body: errorBody(400, { message: `Invalid request body: ${parsed.error.issues[0]?.message ?? ''}` }),
    };
  }
  return undefined;
}

/** 401 as OpenAI words it: the key that was sent, masked but for its first 3 and last 4 characters. */
function wrongKey(request: RecordedRequest): OpenAiReply {
  const given = request.headers.authorization?.replace(/^Bearer /, '') ?? '';
  const message =
    given === ''
      ? "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
      : `Incorrect API key provided: ${given.slice(0, 3)}${'*'.repeat(Math.max(0, given.length - 7))}${given.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`;
  return { kind: 'raw', status: 401, body: errorBody(401, { message }) };
}

/** `GET /v1/models`: every id (the list is not paginated), or the error for `status`. */
function listModels(models: readonly string[] | { status: number }): OpenAiReply {
  if ('status' in models) {
    return { kind: 'raw', status: models.status, body: errorBody(models.status, {}) };
  }
  const data = models.map((id, index) => ({
    id,
    object: 'model',
    created: 1_700_000_000 - index * 86_400,
    owned_by: 'system',
  }));
  return { kind: 'raw', status: 200, body: JSON.stringify({ object: 'list', data }) };
}

/** `{"error": {message, type, param, code}}`, each field defaulting from the status. */
function errorBody(status: number, reply: { message?: string; errorType?: string; code?: string | null }): string {
  const defaults = ERROR_DEFAULTS[status] ?? { type: 'server_error', code: null, message: 'Error' };
  return JSON.stringify({
    error: {
      message: reply.message ?? defaults.message,
      type: reply.errorType ?? defaults.type,
      param: null,
      code: reply.code === undefined ? defaults.code : reply.code,
    },
  });
}

async function respond(
  reply: OpenAiChatReply,
  request: RecordedRequest,
  res: ServerResponse,
  { chunkSize, id }: RespondContext,
): Promise<void> {
  const body = chatBodySchema.parse(request.body);
  const base = { id: `chatcmpl-fake-${id}`, created: 1_700_000_000 + id, model: body.model };
  switch (reply.kind) {
    case 'error':
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(errorBody(reply.status, reply));
      return;
    case 'malformed':
      if (body.stream === true) {
        startStream(res);
        writeSse(res, undefined, '{"id":"chatcmpl-fake","object":"chat.completion.chunk","choices":[{');
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id":"chatcmpl-fake","object":"chat.completion","choices":[{"index":0,"mess');
      }
      return;
    case 'stream-error':
      startStream(res);
      writeSse(res, undefined, JSON.stringify(chunk(base, { role: 'assistant', content: '' }, null)));
      writeSse(
        res,
        undefined,
        JSON.stringify({
          error: {
            message: reply.message ?? 'The server is overloaded',
            type: reply.errorType ?? 'server_error',
            param: null,
            code: null,
          },
        }),
      );
      res.end();
      return;
    case 'message': {
      const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
        id: call.id ?? `call_fake_${id}_${index}`,
        type: 'function' as const,
        function: { name: call.name, arguments: JSON.stringify(call.arguments) },
      }));
      const text = reply.text ?? '';
      const finishReason = reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
      const usage =
        reply.usage === null
          ? null
          : (reply.usage ?? {
              inputTokens: estimateTokens(body.messages),
              outputTokens: estimateTokens(text + JSON.stringify(toolCalls)),
            });
      const usageBody =
        usage === null
          ? null
          : {
              prompt_tokens: usage.inputTokens,
              completion_tokens: usage.outputTokens,
              total_tokens: usage.inputTokens + usage.outputTokens,
            };
      if (reply.delayMs !== undefined) await pause(reply.delayMs);
      if (body.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            ...base,
            object: 'chat.completion',
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content: text.length > 0 || toolCalls.length === 0 ? text : null,
                  ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
                },
                finish_reason: finishReason,
              },
            ],
            ...(usageBody === null ? {} : { usage: usageBody }),
          }),
        );
        return;
      }
      const sendEvent = sseSender(res, reply.delayMs ?? 0);
      const send = (data: object): Promise<void> => sendEvent(undefined, data);
      startStream(res);
      await send(chunk(base, { role: 'assistant', content: '' }, null));
      if (text.length > 0) {
        for (const content of chunkText(text, chunkSize)) await send(chunk(base, { content }, null));
      }
      for (const [index, call] of toolCalls.entries()) {
        await send(
          chunk(
            base,
            {
              tool_calls: [
                { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
              ],
            },
            null,
          ),
        );
        for (const fragment of chunkText(call.function.arguments, chunkSize)) {
          await send(chunk(base, { tool_calls: [{ index, function: { arguments: fragment } }] }, null));
        }
      }
      await send(chunk(base, {}, finishReason));
      if (body.stream_options?.include_usage === true && usageBody !== null) {
        await send({ ...base, object: 'chat.completion.chunk', choices: [], usage: usageBody });
      }
      writeSse(res, undefined, '[DONE]');
      res.end();
      return;
    }
  }
}

function chunk(base: object, delta: object, finishReason: string | null): object {
  return { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

function startStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}
