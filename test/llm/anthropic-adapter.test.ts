import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isRatchetError, RatchetError } from '../../src/core/errors.js';
import type { ModelRequest } from '../../src/core/model.js';
import { createRedactor } from '../../src/core/redact.js';
import { createModelClient } from '../../src/llm/providers.js';
import { withRetry } from '../../src/llm/retry.js';
import {
  startFakeAnthropicServer,
  type CommonReply,
  type FakeAnthropicServer,
} from '../support/fake-anthropic-server.js';
import { recordingSleep, rejectionOf, silenceSdkWarnings, userRequest } from './model-fixtures.js';

const API_KEY = 'sk-ant-test-secret-0123456789';
let server: FakeAnthropicServer;

beforeAll(async () => {
  silenceSdkWarnings();
  server = await startFakeAnthropicServer();
});
afterAll(() => server.close());
afterEach(() => {
  server.reset();
  vi.unstubAllEnvs();
});

function client(options: { model?: string; stream?: boolean; baseUrl?: string; env?: Record<string, string> } = {}) {
  return createModelClient({
    provider: 'anthropic',
    model: options.model ?? 'claude-sonnet-4-5',
    stream: options.stream,
    baseUrl: options.baseUrl,
    env: options.env ?? { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: API_KEY },
  });
}

type Body = { model: string; system?: unknown; messages: Array<{ role: string; content: unknown }>; stream?: boolean };
const bodyOf = (index: number): Body => server.requests[index]?.body as Body;

describe.each([
  ['streaming', true],
  ['non-streaming', false],
])('anthropic adapter (%s)', (_label, stream) => {
  it('returns text, usage and the model id exactly as configured', async () => {
    const text = 'Hello from the fake Anthropic server, streamed in pieces.';
    server.enqueue({
      kind: 'message',
      content: [{ type: 'text', text }],
      usage: { inputTokens: 42, outputTokens: 17 },
    });
    const deltas: string[] = [];
    const response = await client({ model: 'my-gateway/claude-x', stream }).generate(userRequest('hi'), {
      onTextDelta: (delta) => deltas.push(delta),
    });

    expect(response).toMatchObject({
      text,
      toolCalls: [],
      finishReason: 'stop',
      usage: { inputTokens: 42, outputTokens: 17 },
      costUsd: null,
      model: 'my-gateway/claude-x',
      provider: 'anthropic',
    });
    if (stream) {
      expect(deltas.length).toBeGreaterThan(3);
      expect(deltas.join('')).toBe(text);
    }
    const request = server.requests[0];
    expect(request?.path).toBe('/v1/messages');
    expect(request?.headers['x-api-key']).toBe(API_KEY);
    expect(bodyOf(0).model).toBe('my-gateway/claude-x');
    expect(bodyOf(0).stream === true).toBe(stream);
    expect(JSON.stringify(bodyOf(0).system)).toContain('Stage: RED');
  });

  it('parses tool calls and round-trips tool results (errors marked is_error)', async () => {
    server.enqueue(
      {
        kind: 'message',
        content: [
          { type: 'text', text: 'Reading both.' },
          { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'src/a.ts', offset: 3 } },
          { type: 'tool_use', id: 'toolu_2', name: 'Bash', input: { command: 'ls -la "dir"' } },
        ],
      },
      { kind: 'message', content: [{ type: 'text', text: 'Done.' }] },
    );
    const model = client({ stream });
    const first = await model.generate(userRequest('read a.ts'));
    expect(first.finishReason).toBe('tool-calls');
    expect(first.text).toBe('Reading both.');
    expect(first.toolCalls).toEqual([
      { id: 'toolu_1', name: 'Read', input: { file_path: 'src/a.ts', offset: 3 } },
      { id: 'toolu_2', name: 'Bash', input: { command: 'ls -la "dir"' } },
    ]);

    const followUp: ModelRequest = {
      ...userRequest('read a.ts'),
      messages: [
        { role: 'user', content: 'read a.ts' },
        { role: 'assistant', text: first.text, toolCalls: first.toolCalls },
        {
          role: 'tool',
          results: [
            { toolCallId: 'toolu_1', toolName: 'Read', output: 'export const a = 1;', isError: false },
            { toolCallId: 'toolu_2', toolName: 'Bash', output: 'ls: dir: No such file', isError: true },
          ],
        },
      ],
    };
    const second = await model.generate(followUp);
    expect(second.text).toBe('Done.');

    const messages = bodyOf(1).messages;
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[1]?.content).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'tool_use',
          id: 'toolu_1',
          name: 'Read',
          input: { file_path: 'src/a.ts', offset: 3 },
        }),
      ]),
    );
    const results = messages[2]?.content as Array<Record<string, unknown>>;
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_1' });
    expect(results[0]?.is_error).not.toBe(true);
    expect(JSON.stringify(results[0]?.content)).toContain('export const a = 1;');
    expect(results[1]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_2', is_error: true });
  });

  it('maps a 200 with malformed JSON to a non-retryable provider error that says so', async () => {
    server.enqueue({ kind: 'malformed' });
    const error = await rejectionOf(client({ stream }).generate(userRequest('hi')));
    expect(error).toBeInstanceOf(RatchetError);
    expect(error).toMatchObject({ code: 'provider', retryable: false });
    // Not the SDK's "Expected a normalized Anthropic stream error".
    expect((error as RatchetError).message).toBe(
      stream
        ? 'anthropic returned an invalid response for model "claude-sonnet-4-5": the response stream carried invalid JSON (its first event could not be parsed as a Messages API event)'
        : 'anthropic returned an invalid response for model "claude-sonnet-4-5": the response body is not valid JSON',
    );
  });

  it('retries a connection reset after the 200 answer began, like any reset (1 s, 2 s)', async () => {
    server.enqueue(resetMidBody(stream));
    const error = (await rejectionOf(client({ stream }).generate(userRequest('hi')))) as RatchetError;
    expect(error).toMatchObject({ code: 'network', retryable: true });
    expect(error.message).toMatch(
      /^The connection to anthropic broke while its response was arriving \((UND_ERR_SOCKET|ECONNRESET|terminated)\)$/,
    );

    server.enqueue(resetMidBody(stream), resetMidBody(stream), {
      kind: 'message',
      content: [{ type: 'text', text: 'third time lucky' }],
    });
    const { delays, sleep } = recordingSleep();
    const response = await withRetry(client({ stream }), { sleep }).generate(userRequest('hi'));
    expect(response.text).toBe('third time lucky');
    expect(delays).toEqual([1000, 2000]);
  });
});

/** The first events of an Anthropic stream, up to half a sentence of text: no `message_stop`. */
function halfStream(): string {
  const event = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
  return (
    event('message_start', {
      message: {
        id: 'm',
        type: 'message',
        role: 'assistant',
        model: 'x',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    }) +
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'half an ans' } })
  );
}

/** A 200 answer (SSE or JSON) whose connection is reset after its first bytes. */
function resetMidBody(stream: boolean): CommonReply {
  return stream
    ? { kind: 'reset-mid-body', status: 200, headers: { 'content-type': 'text/event-stream' }, body: halfStream() }
    : {
        kind: 'reset-mid-body',
        status: 200,
        headers: { 'content-type': 'application/json', 'content-length': '400' },
        body: '{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"half',
      };
}

describe('anthropic base URL', () => {
  it.each([
    ['no /v1', (url: string) => url],
    ['with /v1', (url: string) => `${url}/v1`],
    ['trailing slash', (url: string) => `${url}/`],
    ['/v1 and trailing slash', (url: string) => `${url}/v1/`],
  ])('ANTHROPIC_BASE_URL %s reaches the server', async (_label, form) => {
    // The SDK's own ANTHROPIC_BASE_URL lookup must not win over the normalised value.
    vi.stubEnv('ANTHROPIC_BASE_URL', 'http://127.0.0.1:9/unused');
    const response = await client({
      env: { ANTHROPIC_BASE_URL: form(server.url), ANTHROPIC_API_KEY: API_KEY },
    }).generate(userRequest('hi'));
    expect(response.text).toBe('ok');
    expect(server.requests.map((request) => request.path)).toEqual(['/v1/messages']);
  });

  it('--base-url wins over ANTHROPIC_BASE_URL', async () => {
    const response = await client({
      baseUrl: `${server.url}/`,
      env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', ANTHROPIC_API_KEY: API_KEY },
    }).generate(userRequest('hi'));
    expect(response.text).toBe('ok');
  });

  it('a missing ANTHROPIC_API_KEY is an auth error with a hint', () => {
    const error = (() => {
      try {
        client({ env: { ANTHROPIC_BASE_URL: server.url } });
      } catch (thrown) {
        return thrown;
      }
      return undefined;
    })();
    expect(error).toMatchObject({ code: 'auth', message: 'ANTHROPIC_API_KEY is not set' });
    expect((error as RatchetError).hint).toContain('ANTHROPIC_API_KEY');
  });
});

describe('anthropic cost', () => {
  it('prices a known dated model and leaves unknown models at null', async () => {
    server.enqueue(
      { kind: 'message', content: [{ type: 'text', text: 'a' }], usage: { inputTokens: 1000, outputTokens: 500 } },
      { kind: 'message', content: [{ type: 'text', text: 'b' }], usage: { inputTokens: 1000, outputTokens: 500 } },
    );
    const known = await client({ model: 'claude-sonnet-4-5-20250929' }).generate(userRequest('hi'));
    expect(known.costUsd).toBeCloseTo((1000 * 3 + 500 * 15) / 1e6, 10);
    const unknown = await client({ model: 'my-gateway/claude-x' }).generate(userRequest('hi'));
    expect(unknown.costUsd).toBeNull();
    expect(unknown.usage).toEqual({ inputTokens: 1000, outputTokens: 500 });
  });
});

describe('anthropic errors and retries', () => {
  it('honours retry-after on 429', async () => {
    server.enqueue(
      { kind: 'error', status: 429, headers: { 'retry-after': '7' } },
      { kind: 'message', content: [{ type: 'text', text: 'after wait' }] },
    );
    const { delays, sleep } = recordingSleep();
    const retried: string[] = [];
    const model = withRetry(client(), { sleep, onRetry: (info) => retried.push(info.error.code) });
    const response = await model.generate(userRequest('hi'));
    expect(response.text).toBe('after wait');
    expect(delays).toEqual([7000]);
    expect(retried).toEqual(['rate-limit']);
  });

  it('retries 529 overloaded with backoff, then succeeds', async () => {
    server.enqueue({ kind: 'error', status: 529 }, { kind: 'message', content: [{ type: 'text', text: 'recovered' }] });
    const { delays, sleep } = recordingSleep();
    const response = await withRetry(client({ stream: false }), { sleep }).generate(userRequest('hi'));
    expect(response.text).toBe('recovered');
    expect(delays).toEqual([1000]);
  });

  it('gives up on 500 after 3 retries and re-throws the last error', async () => {
    server.enqueue(...Array.from({ length: 4 }, () => ({ kind: 'error' as const, status: 500 })));
    const { delays, sleep } = recordingSleep();
    const error = await rejectionOf(withRetry(client(), { sleep, maxRetries: 3 }).generate(userRequest('hi')));
    expect(error).toMatchObject({ code: 'overloaded', retryable: true });
    expect(delays).toEqual([1000, 2000, 4000]);
    expect(server.requests).toHaveLength(4);
  });

  it('fails fast on 401 with an auth error naming the key variable, never the key', async () => {
    server.enqueue({ kind: 'error', status: 401, message: `invalid x-api-key: ${API_KEY}` });
    const { delays, sleep } = recordingSleep();
    const error = await rejectionOf(withRetry(client(), { sleep }).generate(userRequest('hi')));
    expect(isRatchetError(error, 'auth')).toBe(true);
    const ratchetError = error as RatchetError;
    expect(ratchetError.retryable).toBe(false);
    expect(ratchetError.hint).toContain('ANTHROPIC_API_KEY');
    // The hint reads the same once redacted for the ledger and --json ("KEY: it" would lose "it").
    expect(createRedactor([API_KEY])(ratchetError.hint ?? '')).toBe(ratchetError.hint);
    expect(ratchetError.message).not.toContain(API_KEY);
    expect(ratchetError.message).toContain('[REDACTED]');
    expect(JSON.stringify(ratchetError.details)).not.toContain(API_KEY);
    expect(delays).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('reports an unknown model with the server message and says the model was not changed', async () => {
    server.enqueue({ kind: 'error', status: 404, message: 'model: my-gateway/claude-x' });
    const error = await rejectionOf(client({ model: 'my-gateway/claude-x' }).generate(userRequest('hi')));
    expect(error).toMatchObject({ code: 'provider', retryable: false });
    expect((error as RatchetError).message).toContain('model: my-gateway/claude-x');
    expect((error as RatchetError).message).toContain('sent unchanged');
  });

  it('treats a mid-stream error event as retryable overload', async () => {
    server.enqueue({ kind: 'stream-error' });
    const first = await rejectionOf(client().generate(userRequest('hi')));
    expect(first).toMatchObject({ code: 'overloaded', retryable: true });
    const { delays, sleep } = recordingSleep();
    server.enqueue({ kind: 'stream-error' }, { kind: 'message', content: [{ type: 'text', text: 'second try' }] });
    const response = await withRetry(client(), { sleep }).generate(userRequest('hi'));
    expect(response.text).toBe('second try');
    expect(delays).toEqual([1000]);
  });

  it('maps a dropped connection and a refused connection to retryable network errors', async () => {
    server.enqueue({ kind: 'disconnect' });
    const dropped = await rejectionOf(client().generate(userRequest('hi')));
    expect(dropped).toMatchObject({ code: 'network', retryable: true });

    const closed = await startFakeAnthropicServer();
    const url = closed.url;
    await closed.close();
    const refused = await rejectionOf(
      client({ env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: API_KEY } }).generate(userRequest('hi')),
    );
    expect(refused).toMatchObject({ code: 'network', retryable: true, details: { code: 'ECONNREFUSED' } });
    expect((refused as RatchetError).message).not.toContain(API_KEY);
  });

  it('rejects a stream cut off before message_stop as a retryable network error', async () => {
    server.enqueue({ kind: 'raw', status: 200, headers: { 'content-type': 'text/event-stream' }, body: halfStream() });
    expect(await rejectionOf(client().generate(userRequest('hi')))).toMatchObject({ code: 'network', retryable: true });
  });

  it('stops with interrupted when the signal is aborted', async () => {
    const controller = new AbortController();
    server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'slow answer' }], delayMs: 200 });
    const pending = client().generate(userRequest('hi'), { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect(await rejectionOf(pending)).toMatchObject({ code: 'interrupted' });
  });
});
