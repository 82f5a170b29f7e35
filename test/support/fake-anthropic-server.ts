/**
 * A loopback fake of the Anthropic Messages API (`POST /v1/messages`), speaking the real wire
 * format (see ../../../shared/PROTOCOLS.md) so real clients can be tested against it: the AI SDK
 * adapter, `@anthropic-ai/sdk`, and the real `claude` binary (`ANTHROPIC_BASE_URL=<url>`).
 *
 * ```ts
 * const server = await startFakeAnthropicServer();
 * server.enqueue(
 *   { kind: 'message', content: [{ type: 'tool_use', name: 'Read', input: { file_path: 'a.ts' } }] },
 *   { kind: 'error', status: 529 },
 *   { kind: 'message', content: [{ type: 'text', text: 'done' }] },
 * );
 * // ... point a client at server.url (no /v1), then inspect server.requests ...
 * await server.close();
 * ```
 *
 * Behaviour:
 * - `POST /v1/messages` (any query such as `?beta=true`) answers with the next queued reply, else
 *   the fallback, else a text message "ok". A request with `"stream": true` gets SSE:
 *   `message_start`, per block `content_block_start` / `content_block_delta` (text split into
 *   `text_delta` chunks; tool input as `input_json_delta` fragments, the first one empty) /
 *   `content_block_stop`, `ping` events in between, `message_delta` (stop reason, cumulative usage)
 *   and `message_stop`. Otherwise a JSON message.
 * - `POST /v1/messages/count_tokens` answers `{input_tokens}` without consuming a reply.
 * - `GET /v1/models` (the Models API, `?limit=` 1..1000, default 20, and `?after_id=`) lists the
 *   `models` option's ids, newest first, as `{data: [{type: 'model', id, display_name,
 *   created_at}], has_more, first_id, last_id}`, without consuming a reply; `models: 'absent'`
 *   makes it a 404 and `models: {status}` an error.
 * - Credentials (messages and models alike): `x-api-key` or `authorization: Bearer` must be
 *   present (401 `authentication_error` otherwise); when the `apiKey` option is set they must
 *   equal it.
 * - Unknown body keys (`thinking`, `context_management`, `output_config`, ...) and
 *   `{"role":"system"}` entries inside `messages` are accepted and ignored.
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

export type AnthropicContentBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; id?: string; name: string; input: unknown };

export interface FakeUsage {
  inputTokens: number;
  outputTokens: number;
}

/** What the fake answers to one `/v1/messages` request. */
export type AnthropicReply = AnthropicMessagesReply | CommonReply;

/** The Anthropic replies (see `CommonReply` for `disconnect` and `raw`). */
export type AnthropicMessagesReply =
  | {
      kind: 'message';
      content: AnthropicContentBlock[];
      /** Default `tool_use` when the content has a tool_use block, else `end_turn`. */
      stopReason?: string;
      /** Default: a deterministic estimate from the request and content sizes. */
      usage?: FakeUsage;
      /** Wait before answering (and between streamed events when streaming). */
      delayMs?: number;
      /** Answer only once this settles: a test holds a reply until something else has happened. */
      after?: Promise<unknown>;
    }
  /** `errorType` defaults from the status: 429 rate_limit_error, 529 overloaded_error, ... */
  | FakeErrorReply
  /** `stream-error` sends `event: error` with an error body. */
  | FakeFailureReply;

/** The key goes in `x-api-key` or as Bearer; fragments are `text_delta` / `input_json_delta`. */
export type StartFakeAnthropicServerOptions = FakeProviderServerOptions;

/** A running fake; `url` is `http://127.0.0.1:PORT` without `/v1`, like `ANTHROPIC_BASE_URL`. */
export type FakeAnthropicServer = FakeServer<AnthropicReply>;

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

const ERROR_MESSAGES: Record<string, string> = {
  invalid_request_error: 'Invalid request',
  authentication_error: 'invalid x-api-key',
  billing_error: 'Your credit balance is too low',
  permission_error: 'Your API key does not have permission to use the specified resource.',
  not_found_error: 'Not found',
  request_too_large: 'Request exceeds the maximum allowed number of bytes.',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit',
  api_error: 'Internal server error',
  overloaded_error: 'Overloaded',
};

const messagesBodySchema = z.looseObject({
  model: z.string(),
  max_tokens: z.number(),
  messages: z.array(z.unknown()),
  stream: z.boolean().optional(),
});

/** What `GET /v1/models` lists by default: dated snapshots, as the real API names them. */
const DEFAULT_MODELS = ['claude-opus-4-5-20251101', 'claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001'];

/** Starts the fake Anthropic server on 127.0.0.1. */
export async function startFakeAnthropicServer(
  options: StartFakeAnthropicServerOptions = {},
): Promise<FakeAnthropicServer> {
  return startProviderFake<AnthropicMessagesReply>(options, {
    urlPath: '',
    defaultReply: () => ({ kind: 'message', content: [{ type: 'text', text: 'ok' }] }),
    reject: rejectRequest,
    respond,
  });
}

function rejectRequest(request: RecordedRequest, options: StartFakeAnthropicServerOptions): AnthropicReply | undefined {
  if (request.method === 'POST' && request.path === '/v1/messages/count_tokens') {
    return { kind: 'raw', status: 200, body: JSON.stringify({ input_tokens: estimateTokens(request.body) }) };
  }
  if (request.method === 'GET' && request.path === '/v1/models' && options.models !== 'absent') {
    return keyRejection(request, options.apiKey) ?? listModels(request, options.models ?? DEFAULT_MODELS);
  }
  if (request.method !== 'POST' || request.path !== '/v1/messages') {
    return rawError(404, `No route for ${request.method} ${request.path}`);
  }
  const rejected = keyRejection(request, options.apiKey);
  if (rejected !== undefined) return rejected;
  const parsed = messagesBodySchema.safeParse(request.body);
  if (!parsed.success) {
    return rawError(400, `Invalid request body: ${parsed.error.issues[0]?.message ?? ''}`);
  }
  return undefined;
}

/** An error answered before any reply is taken (`respond` needs a messages body; these have none). */
function rawError(status: number, message?: string): CommonReply {
  const requestId = `req_fake_${status}`;
  return {
    kind: 'raw',
    status,
    headers: { 'content-type': 'application/json', 'request-id': requestId },
    body: errorBody(ERROR_TYPES[status] ?? 'api_error', message, requestId),
  };
}

/** 401 unless the request carries a key (`x-api-key` or Bearer), and `apiKey` when that is set. */
function keyRejection(request: RecordedRequest, apiKey: string | undefined): CommonReply | undefined {
  const key = request.headers['x-api-key'];
  const bearer = request.headers.authorization;
  const given = typeof key === 'string' ? key : bearer?.startsWith('Bearer ') ? bearer.slice(7) : undefined;
  return given === undefined || (apiKey !== undefined && given !== apiKey) ? rawError(401) : undefined;
}

/** `GET /v1/models`: one page of `ids` (or the configured error), in the Models API's shape. */
function listModels(request: RecordedRequest, models: readonly string[] | { status: number }): AnthropicReply {
  if ('status' in models) return rawError(models.status);
  const requestId = 'req_fake_models';
  const query = new URLSearchParams(request.search);
  const limit = Math.min(1000, Math.max(1, Number(query.get('limit') ?? 20) || 20));
  const afterId = query.get('after_id');
  const start = afterId === null ? 0 : models.indexOf(afterId) + 1;
  const page = models.slice(start, start + limit);
  const data = page.map((id, index) => ({
    type: 'model',
    id,
    display_name: id,
    created_at: new Date(Date.UTC(2025, 11, 1) - (start + index) * 86_400_000).toISOString().replace('.000Z', 'Z'),
  }));
  const body = {
    data,
    has_more: start + page.length < models.length,
    first_id: page[0] ?? null,
    last_id: page.at(-1) ?? null,
  };
  return {
    kind: 'raw',
    status: 200,
    headers: { 'content-type': 'application/json', 'request-id': requestId },
    body: JSON.stringify(body),
  };
}

function errorBody(errorType: string, message: string | undefined, requestId: string): string {
  return JSON.stringify({
    type: 'error',
    error: { type: errorType, message: message ?? ERROR_MESSAGES[errorType] ?? 'Error' },
    request_id: requestId,
  });
}

async function respond(
  reply: AnthropicMessagesReply,
  request: RecordedRequest,
  res: ServerResponse,
  context: RespondContext,
): Promise<void> {
  const body = messagesBodySchema.parse(request.body);
  const requestId = `req_fake_${context.id}`;
  switch (reply.kind) {
    case 'error': {
      const errorType = reply.errorType ?? ERROR_TYPES[reply.status] ?? 'api_error';
      res.writeHead(reply.status, { 'content-type': 'application/json', 'request-id': requestId, ...reply.headers });
      res.end(errorBody(errorType, reply.message, requestId));
      return;
    }
    case 'malformed':
      if (body.stream === true) {
        startStream(res, requestId);
        writeSse(res, 'message_start', '{"type":"message_start","message":{"id":');
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId });
        res.end('{"id":"msg_fake","type":"message","content":[{"type":"te');
      }
      return;
    case 'stream-error': {
      const errorType = reply.errorType ?? 'overloaded_error';
      startStream(res, requestId);
      writeSse(
        res,
        'message_start',
        JSON.stringify(messageStart(body.model, context.id, estimateTokens(body.messages))),
      );
      writeSse(res, 'ping', '{"type":"ping"}');
      writeSse(
        res,
        'error',
        JSON.stringify({
          type: 'error',
          error: { type: errorType, message: reply.message ?? ERROR_MESSAGES[errorType] ?? 'Error' },
          request_id: requestId,
        }),
      );
      res.end();
      return;
    }
    case 'message': {
      const content = reply.content.map((block, index) =>
        block.type === 'tool_use' ? { ...block, id: block.id ?? `toolu_fake_${context.id}_${index}` } : block,
      );
      const stopReason =
        reply.stopReason ?? (content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn');
      const usage = reply.usage ?? {
        inputTokens: estimateTokens(body.messages),
        outputTokens: estimateTokens(content),
      };
      if (reply.after !== undefined) await reply.after;
      if (reply.delayMs !== undefined) await pause(reply.delayMs);
      if (body.stream === true) {
        await streamMessage(
          res,
          { model: body.model, content, stopReason, usage, requestId, ...context },
          reply.delayMs ?? 0,
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId });
      res.end(
        JSON.stringify({
          id: `msg_fake_${context.id}`,
          type: 'message',
          role: 'assistant',
          model: body.model,
          content,
          stop_reason: stopReason,
          stop_sequence: null,
          usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens },
        }),
      );
      return;
    }
  }
}

function startStream(res: ServerResponse, requestId: string): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'request-id': requestId,
  });
}

function messageStart(model: string, id: number, inputTokens: number): object {
  return {
    type: 'message_start',
    message: {
      id: `msg_fake_${id}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: inputTokens, output_tokens: 1 },
    },
  };
}

interface StreamPlan {
  model: string;
  content: Array<{ type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown }>;
  stopReason: string;
  usage: FakeUsage;
  requestId: string;
  chunkSize: number;
  id: number;
}

async function streamMessage(res: ServerResponse, plan: StreamPlan, delayMs: number): Promise<void> {
  const send = sseSender(res, delayMs);
  startStream(res, plan.requestId);
  await send('message_start', messageStart(plan.model, plan.id, plan.usage.inputTokens));
  await send('ping', { type: 'ping' });
  for (const [index, block] of plan.content.entries()) {
    if (block.type === 'text') {
      await send('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      });
      for (const [position, text] of chunkText(block.text, plan.chunkSize).entries()) {
        await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
        if (position === 0) await send('ping', { type: 'ping' });
      }
    } else {
      await send('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      const fragments = ['', ...chunkText(JSON.stringify(block.input ?? {}), plan.chunkSize)];
      for (const partial_json of fragments) {
        await send('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json },
        });
      }
    }
    await send('content_block_stop', { type: 'content_block_stop', index });
  }
  await send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: plan.stopReason, stop_sequence: null },
    usage: { input_tokens: plan.usage.inputTokens, output_tokens: plan.usage.outputTokens },
  });
  await send('message_stop', { type: 'message_stop' });
  res.end();
}
