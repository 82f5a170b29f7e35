import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RatchetError } from '../../src/core/errors.js';
import type { ModelRequest } from '../../src/core/model.js';
import { createModelClient, type CreateModelClientOptions } from '../../src/llm/providers.js';
import { withRetry } from '../../src/llm/retry.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { startFakeOpenAiServer, type CommonReply, type FakeOpenAiServer } from '../support/fake-openai-server.js';
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
      message: `openai returned an invalid response for model "gpt-4o": ${stream ? 'the response stream carried invalid JSON' : 'the response body is not valid JSON'}`,
    });
  });

  it('retries a connection reset after the 200 answer began, like any reset', async () => {
    server.enqueue(resetMidBody(stream));
    const error = (await rejectionOf(openai({ stream }).generate(userRequest('hi')))) as RatchetError;
    expect(error).toMatchObject({ code: 'network', retryable: true });
    expect(error.message).toMatch(/^The connection to openai broke while its response was arriving \(\w+\)$/);

    server.enqueue(resetMidBody(stream), { kind: 'message', text: 'second try' });
    const { delays, sleep } = recordingSleep();
    const response = await withRetry(openai({ stream }), { sleep }).generate(userRequest('hi'));
    expect(response.text).toBe('second try');
    expect(delays).toEqual([1000]);
  });

  it('records usage the server did not report as unknown (null tokens, null cost), not 0', async () => {
    server.enqueue({ kind: 'message', text: 'no usage here', usage: null });
    const response = await openai({ stream }).generate(userRequest('hi'));
    expect(response.text).toBe('no usage here');
    expect(response.usage).toEqual({ inputTokens: null, outputTokens: null });
    // gpt-4o has a price: the cost is unknown only because the tokens are.
    expect(response.costUsd).toBeNull();
  });
});

/** A 200 answer (chunks or JSON) whose connection is reset after its first bytes. */
function resetMidBody(stream: boolean): CommonReply {
  const chunk = (delta: object) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
  return stream
    ? {
        kind: 'reset-mid-body',
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        body: chunk({ role: 'assistant', content: '' }) + chunk({ content: 'half an ans' }),
      }
    : {
        kind: 'reset-mid-body',
        status: 200,
        headers: { 'content-type': 'application/json', 'content-length': '400' },
        body: '{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"ind',
      };
}

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

  it('masks the key OpenAI quotes in a 401, and keeps the message free of stray periods', async () => {
    server.enqueue({
      kind: 'error',
      status: 401,
      message:
        'Incorrect API key provided: sk-proj-*********************E456. You can find your API key at https://platform.openai.com/account/api-keys.',
    });
    const error = (await rejectionOf(openai().generate(userRequest('hi')))) as RatchetError;
    expect(error.message).toBe(
      'openai rejected the credentials (HTTP 401): Incorrect API key provided: [REDACTED]. You can find your API key at https://platform.openai.com/account/api-keys',
    );
    expect(error.message).not.toContain('E456');
  });

  it('fails fast on a 429 insufficient_quota (billing, not a rate limit), exit 3', async () => {
    server.enqueue({
      kind: 'error',
      status: 429,
      errorType: 'insufficient_quota',
      code: 'insufficient_quota',
      message: 'You exceeded your current quota, please check your plan and billing details.',
    });
    const { delays, sleep } = recordingSleep();
    const error = (await rejectionOf(withRetry(openai(), { sleep }).generate(userRequest('hi')))) as RatchetError;
    expect(error).toMatchObject({ code: 'provider', retryable: false });
    expect(error.message).toBe(
      "openai refused the request: the account's quota is used up (HTTP 429 insufficient_quota): You exceeded your current quota, please check your plan and billing details",
    );
    expect(error.hint).toContain('billing');
    expect(exitCodeFor(error.code, false)).toBe(3);
    expect(delays).toEqual([]);
    expect(server.requests).toHaveLength(1);

    // An ordinary 429 is still a rate limit, waited out.
    server.enqueue({ kind: 'error', status: 429 }, { kind: 'message', text: 'ok now' });
    const limited = recordingSleep();
    expect((await withRetry(openai(), { sleep: limited.sleep }).generate(userRequest('hi'))).text).toBe('ok now');
    expect(limited.delays).toEqual([1000]);
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

  // A reasoning model without a reasoning parser (DeepSeek-R1 on Ollama) thinks inline; a draft
  // search/replace block or JSON in its thinking must not be taken for the answer.
  it.each([
    ['openai-compatible', true],
    ['openai-compatible', false],
    ['ollama', true],
    ['ollama', false],
  ] as const)('%s (stream %s) drops inline <think> reasoning from the answer', async (provider, stream) => {
    const draft = 'src/a.ts\n<<<<<<< SEARCH\nold\n=======\nwrong\n>>>>>>> REPLACE';
    server.enqueue({ kind: 'message', text: `<think>Maybe this:\n${draft}\nNo.</think>\n\nThe answer.` });
    const deltas: string[] = [];
    const model = createModelClient({
      provider,
      model: 'deepseek-r1:14b',
      stream,
      ...(provider === 'ollama' ? { env: { OLLAMA_HOST: server.url } } : { baseUrl: server.url, env: {} }),
    });
    const response = await model.generate(userRequest('hi'), { onTextDelta: (delta) => deltas.push(delta) });
    expect(response.text.trim()).toBe('The answer.');
    expect(deltas.join('')).not.toContain('SEARCH');
  });

  // Qwen or Hermes on a server without a tool-call parser: the calls arrive as text.
  it.each([true, false])(
    'reads <tool_call> blocks in a reply without tool calls as its calls (stream %s)',
    async (stream) => {
      const read = { name: 'Read', arguments: { file_path: 'src/a.ts' } };
      const bash = { name: 'Bash', arguments: JSON.stringify({ command: 'npm test' }) };
      server.enqueue({
        kind: 'message',
        text: `I will look first.\n<tool_call>\n${JSON.stringify(read)}\n</tool_call>\n<tool_call>${JSON.stringify(bash)}</tool_call>`,
      });
      const model = createModelClient({
        provider: 'openai-compatible',
        model: 'qwen2.5-coder',
        stream,
        baseUrl: server.url,
        env: {},
      });
      const response = await model.generate(userRequest('look'));
      expect(response.finishReason).toBe('tool-calls');
      expect(response.text).toBe('I will look first.');
      expect(response.toolCalls.map(({ name, input }) => ({ name, input }))).toEqual([
        { name: 'Read', input: { file_path: 'src/a.ts' } },
        { name: 'Bash', input: { command: 'npm test' } },
      ]);
      expect(new Set(response.toolCalls.map((call) => call.id)).size).toBe(2);
    },
  );

  it.each([
    ['a tool that was not offered', '<tool_call>{"name": "Delete", "arguments": {"path": "/"}}</tool_call>'],
    ['a block that is not JSON', '<tool_call>{"name": "Read", "arguments": </tool_call>'],
    ['arguments that are not an object', '<tool_call>{"name": "Read", "arguments": [1]}</tool_call>'],
    [
      'one good call beside a broken one',
      '<tool_call>{"name": "Read", "arguments": {}}</tool_call><tool_call>nope</tool_call>',
    ],
  ])('keeps a reply with %s as text, with no tool call', async (_label, text) => {
    server.enqueue({ kind: 'message', text });
    const model = createModelClient({ provider: 'ollama', model: 'qwen2.5-coder', env: { OLLAMA_HOST: server.url } });
    const response = await model.generate(userRequest('look'));
    expect(response).toMatchObject({ text, toolCalls: [], finishReason: 'stop' });
  });

  it('reads no calls from text for OpenAI itself, nor from a reply cut off at the token limit', async () => {
    const text = '<tool_call>{"name": "Read", "arguments": {"file_path": "a"}}</tool_call>';
    server.enqueue({ kind: 'message', text });
    expect((await openai().generate(userRequest('look'))).toolCalls).toEqual([]);
    server.enqueue({ kind: 'message', text, finishReason: 'length' });
    const local = createModelClient({ provider: 'openai-compatible', model: 'm', baseUrl: server.url, env: {} });
    expect(await local.generate(userRequest('look'))).toMatchObject({ toolCalls: [], finishReason: 'length' });
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
