import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RatchetError } from '../../src/core/errors.js';
import type { ModelRequest } from '../../src/core/model.js';
import { createModelClient, type CreateModelClientOptions } from '../../src/llm/providers.js';
import { withRetry } from '../../src/llm/retry.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../support/fake-openai-server.js';
import { recordingSleep, rejectionOf, silenceSdkWarnings, userRequest } from './model-fixtures.js';

const API_KEY = 'sk-openai-test-secret-987654321';
let server: FakeOpenAiServer;

beforeAll(async () => {
  silenceSdkWarnings();
  server = await startFakeOpenAiServer();
});
afterAll(() => server.close());
afterEach(() => server.reset());

function openai(options: Partial<CreateModelClientOptions> = {}) {
  return createModelClient({
    provider: 'openai',
    model: 'gpt-4o',
    env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: API_KEY },
    ...options,
  });
}

type ChatBody = {
  model: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages: Array<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }>;
};
const bodyOf = (index: number): ChatBody => server.requests[index]?.body as ChatBody;

describe.each([
  ['streaming', true],
  ['non-streaming', false],
])('openai adapter (%s)', (_label, stream) => {
  it('returns text and usage, sends the model id exactly as given', async () => {
    const text = 'A chat completion from the fake OpenAI server.';
    server.enqueue({ kind: 'message', text, usage: { inputTokens: 1000, outputTokens: 100 } });
    const deltas: string[] = [];
    const response = await openai({ stream }).generate(userRequest('hi'), {
      onTextDelta: (delta) => deltas.push(delta),
    });
    expect(response).toMatchObject({
      text,
      finishReason: 'stop',
      usage: { inputTokens: 1000, outputTokens: 100 },
      model: 'gpt-4o',
      provider: 'openai',
    });
    expect(response.costUsd).toBeCloseTo((1000 * 2.5 + 100 * 10) / 1e6, 10);
    if (stream) {
      expect(deltas.length).toBeGreaterThan(3);
      expect(deltas.join('')).toBe(text);
      expect(bodyOf(0).stream_options?.include_usage).toBe(true);
    }
    expect(server.requests[0]?.path).toBe('/v1/chat/completions');
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(bodyOf(0).messages[0]?.role).toBe('system');
    expect(bodyOf(0).messages[0]?.content).toContain('Stage: RED');
  });

  it('parses tool calls split across chunks and round-trips tool results', async () => {
    server.enqueue(
      {
        kind: 'message',
        toolCalls: [
          { id: 'call_a', name: 'Read', arguments: { file_path: 'src/index.ts', offset: 10 } },
          { id: 'call_b', name: 'Bash', arguments: { command: 'npm test -- --run "unit tests"' } },
        ],
      },
      { kind: 'message', text: 'All good.' },
    );
    const model = openai({ stream });
    const first = await model.generate(userRequest('look'));
    expect(first.finishReason).toBe('tool-calls');
    expect(first.toolCalls).toEqual([
      { id: 'call_a', name: 'Read', input: { file_path: 'src/index.ts', offset: 10 } },
      { id: 'call_b', name: 'Bash', input: { command: 'npm test -- --run "unit tests"' } },
    ]);
    const followUp: ModelRequest = {
      ...userRequest('look'),
      messages: [
        { role: 'user', content: 'look' },
        { role: 'assistant', text: '', toolCalls: first.toolCalls },
        {
          role: 'tool',
          results: [
            { toolCallId: 'call_a', toolName: 'Read', output: 'file body', isError: false },
            { toolCallId: 'call_b', toolName: 'Bash', output: 'exit 1', isError: true },
          ],
        },
      ],
    };
    expect((await model.generate(followUp)).text).toBe('All good.');
    const messages = bodyOf(1).messages;
    expect(messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    expect(messages[2]?.tool_calls).toMatchObject([
      { id: 'call_a', type: 'function', function: { name: 'Read' } },
      { id: 'call_b', type: 'function', function: { name: 'Bash' } },
    ]);
    expect(messages[3]).toMatchObject({ role: 'tool', tool_call_id: 'call_a' });
    expect(JSON.stringify(messages[3]?.content)).toContain('file body');
    expect(messages[4]).toMatchObject({ role: 'tool', tool_call_id: 'call_b' });
    expect(JSON.stringify(messages[4]?.content)).toContain('exit 1');
  });

  it('maps a 200 with malformed JSON to a non-retryable provider error', async () => {
    server.enqueue({ kind: 'malformed' });
    expect(await rejectionOf(openai({ stream }).generate(userRequest('hi')))).toMatchObject({
      code: 'provider',
      retryable: false,
    });
  });
});

describe('openai errors', () => {
  it('honours retry-after-ms on 429', async () => {
    server.enqueue(
      { kind: 'error', status: 429, headers: { 'retry-after-ms': '1500' } },
      { kind: 'message', text: 'ok now' },
    );
    const { delays, sleep } = recordingSleep();
    const response = await withRetry(openai(), { sleep }).generate(userRequest('hi'));
    expect(response.text).toBe('ok now');
    expect(delays).toEqual([1500]);
  });

  it('fails fast on 401 without leaking the key', async () => {
    server.enqueue({ kind: 'error', status: 401, message: `Incorrect API key provided: ${API_KEY}` });
    const { delays, sleep } = recordingSleep();
    const error = (await rejectionOf(withRetry(openai(), { sleep }).generate(userRequest('hi')))) as RatchetError;
    expect(error).toMatchObject({ code: 'auth', retryable: false });
    expect(error.hint).toContain('OPENAI_API_KEY');
    expect(error.message).not.toContain(API_KEY);
    expect(delays).toEqual([]);
  });

  it('reports an unknown model with the server message', async () => {
    server.enqueue({ kind: 'error', status: 404, message: 'The model `gpt-x` does not exist' });
    const error = (await rejectionOf(openai({ model: 'gpt-x' }).generate(userRequest('hi')))) as RatchetError;
    expect(error.code).toBe('provider');
    expect(error.message).toContain('The model `gpt-x` does not exist');
    expect(error.message).toContain('"gpt-x" was sent unchanged');
  });

  it('treats a mid-stream error as retryable', async () => {
    server.enqueue({ kind: 'stream-error' });
    expect(await rejectionOf(openai().generate(userRequest('hi')))).toMatchObject({
      code: 'overloaded',
      retryable: true,
    });
  });

  it('a missing OPENAI_API_KEY is an auth error', () => {
    expect(() => openai({ env: { OPENAI_BASE_URL: server.url } })).toThrow(
      expect.objectContaining({ code: 'auth', message: 'OPENAI_API_KEY is not set' }),
    );
  });
});

describe('openai-compatible and ollama', () => {
  it('openai-compatible uses --base-url, passes any model id through and requests streamed usage', async () => {
    server.enqueue({ kind: 'message', text: 'local answer', usage: { inputTokens: 12, outputTokens: 3 } });
    const model = createModelClient({
      provider: 'openai-compatible',
      model: 'Qwen/Qwen2.5-Coder-32B-Instruct',
      baseUrl: `${server.url}/`,
      env: {},
    });
    const response = await model.generate(userRequest('hi'));
    expect(response).toMatchObject({
      text: 'local answer',
      usage: { inputTokens: 12, outputTokens: 3 },
      costUsd: null,
      provider: 'openai-compatible',
      model: 'Qwen/Qwen2.5-Coder-32B-Instruct',
    });
    expect(bodyOf(0)).toMatchObject({
      model: 'Qwen/Qwen2.5-Coder-32B-Instruct',
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(server.requests[0]?.headers.authorization).toBe('Bearer none');
  });

  it('openai-compatible called without a key by a server that wants one: the hint says to set OPENAI_API_KEY', async () => {
    server.enqueue({ kind: 'error', status: 401, message: 'Missing API key' });
    const keyless = createModelClient({ provider: 'openai-compatible', model: 'm', baseUrl: server.url, env: {} });
    const error = (await rejectionOf(keyless.generate(userRequest('hi')))) as RatchetError;
    expect(error).toMatchObject({ code: 'auth', retryable: false });
    expect(error.hint).toBe(
      'The server wants an API key, and OPENAI_API_KEY is not set: export OPENAI_API_KEY with the key it expects.',
    );

    server.enqueue({ kind: 'error', status: 401 });
    const keyed = createModelClient({
      provider: 'openai-compatible',
      model: 'm',
      baseUrl: server.url,
      env: { OPENAI_API_KEY: API_KEY },
    });
    const rejected = (await rejectionOf(keyed.generate(userRequest('hi')))) as RatchetError;
    expect(rejected.hint).toBe('Check that OPENAI_API_KEY holds a valid API key for openai-compatible.');
  });

  it('openai-compatible without a base URL is a config error', () => {
    expect(() => createModelClient({ provider: 'openai-compatible', model: 'm', env: {} })).toThrow(
      expect.objectContaining({ code: 'config' }),
    );
  });

  it.each([
    ['host:port', (origin: string) => origin.replace('http://', '')],
    ['http://host:port', (origin: string) => origin],
    ['http://host:port/', (origin: string) => `${origin}/`],
  ])('ollama reaches the server with OLLAMA_HOST=%s', async (_label, form) => {
    server.enqueue({ kind: 'message', toolCalls: [{ name: 'Read', arguments: { file_path: 'x' } }] });
    const model = createModelClient({
      provider: 'ollama',
      model: 'qwen2.5-coder:7b',
      env: { OLLAMA_HOST: form(server.origin) },
    });
    const response = await model.generate(userRequest('hi'));
    expect(response.toolCalls).toEqual([expect.objectContaining({ name: 'Read', input: { file_path: 'x' } })]);
    expect(response.provider).toBe('ollama');
    expect(server.requests[0]?.path).toBe('/v1/chat/completions');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer ollama');
    expect(bodyOf(0).model).toBe('qwen2.5-coder:7b');
  });
});
