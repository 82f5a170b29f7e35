/**
 * Wire-level checks of the loopback fakes with plain fetch, so other suites (the claude binary,
 * end-to-end runs) can rely on them speaking the documented protocol.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../support/fake-openai-server.js';

let anthropic: FakeAnthropicServer;
let openai: FakeOpenAiServer;

beforeAll(async () => {
  anthropic = await startFakeAnthropicServer({ chunkSize: 4 });
  openai = await startFakeOpenAiServer({ chunkSize: 4 });
});
afterAll(async () => {
  await anthropic.close();
  await openai.close();
});

interface SseEvent {
  event: string | undefined;
  data: string;
}

function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7);
      const data = lines.find((line) => line.startsWith('data: '))?.slice(6) ?? '';
      return { event, data };
    });
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('fake Anthropic server', () => {
  const claudeCliBody = {
    model: 'claude-sonnet-4-5',
    max_tokens: 32000,
    stream: true,
    system: [{ type: 'text', text: 'You are Claude Code' }],
    messages: [
      { role: 'system', content: 'extra system entry' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    ],
    thinking: { type: 'disabled' },
    context_management: { edits: [] },
    output_config: { effort: 'low' },
  };

  it('streams the documented event sequence for ?beta=true with Bearer auth and extra keys', async () => {
    anthropic.enqueue({
      kind: 'message',
      content: [
        { type: 'text', text: 'Hello world' },
        { type: 'tool_use', id: 'toolu_x', name: 'StructuredOutput', input: { answer: 42 } },
      ],
      usage: { inputTokens: 10, outputTokens: 7 },
    });
    const response = await post(`${anthropic.url}/v1/messages?beta=true`, claudeCliBody, {
      authorization: 'Bearer token',
      'anthropic-version': '2026-10-21',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = parseSse(await response.text());
    const names = events.map((event) => event.event);
    expect(names[0]).toBe('message_start');
    expect(names).toContain('ping');
    expect(names.slice(-2)).toEqual(['message_delta', 'message_stop']);
    const deltas = events
      .filter((event) => event.event === 'content_block_delta')
      .map(
        (event) =>
          JSON.parse(event.data) as { index: number; delta: { type: string; text?: string; partial_json?: string } },
      );
    expect(
      deltas
        .filter((d) => d.index === 0)
        .map((d) => d.delta.text)
        .join(''),
    ).toBe('Hello world');
    const fragments = deltas.filter((d) => d.index === 1).map((d) => d.delta.partial_json ?? '');
    expect(fragments[0]).toBe('');
    expect(fragments.length).toBeGreaterThan(2);
    expect(JSON.parse(fragments.join(''))).toEqual({ answer: 42 });
    const messageDelta = JSON.parse(events.at(-2)?.data ?? '') as {
      delta: { stop_reason: string };
      usage: { output_tokens: number };
    };
    expect(messageDelta.delta.stop_reason).toBe('tool_use');
    expect(messageDelta.usage.output_tokens).toBe(7);
    expect(anthropic.requests.at(-1)).toMatchObject({ path: '/v1/messages', search: '?beta=true' });
  });

  it('answers "ok" as JSON by default and errors in the Anthropic shape', async () => {
    const ok = await post(`${anthropic.url}/v1/messages`, { ...claudeCliBody, stream: false }, { 'x-api-key': 'k' });
    expect(await ok.json()).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
    });

    anthropic.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '2' } });
    const limited = await post(`${anthropic.url}/v1/messages`, claudeCliBody, { 'x-api-key': 'k' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(await limited.json()).toMatchObject({
      type: 'error',
      error: { type: 'rate_limit_error' },
      request_id: expect.any(String) as unknown,
    });

    const anonymous = await post(`${anthropic.url}/v1/messages`, claudeCliBody);
    expect(anonymous.status).toBe(401);
    const counted = await post(`${anthropic.url}/v1/messages/count_tokens`, claudeCliBody, { 'x-api-key': 'k' });
    expect(await counted.json()).toMatchObject({ input_tokens: expect.any(Number) as unknown });
  });

  it('sends a mid-stream error event', async () => {
    anthropic.enqueue({ kind: 'stream-error' });
    const events = parseSse(
      await (await post(`${anthropic.url}/v1/messages`, claudeCliBody, { 'x-api-key': 'k' })).text(),
    );
    expect(events.at(-1)?.event).toBe('error');
    expect(JSON.parse(events.at(-1)?.data ?? '')).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
  });
});

describe('fake OpenAI server', () => {
  const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true };

  it('streams tool call deltas, a usage chunk only when asked, then [DONE]', async () => {
    const reply = {
      kind: 'message' as const,
      text: 'Hi there',
      toolCalls: [{ id: 'call_1', name: 'Read', arguments: { file_path: 'a.ts' } }],
    };
    openai.enqueue(reply, reply);
    const withUsage = parseSse(
      await (await post(`${openai.url}/chat/completions`, { ...body, stream_options: { include_usage: true } })).text(),
    );
    const without = parseSse(await (await post(`${openai.url}/chat/completions`, body)).text());
    expect(withUsage.at(-1)?.data).toBe('[DONE]');
    expect(without.at(-1)?.data).toBe('[DONE]');
    const usageChunks = (events: SseEvent[]) => events.filter((event) => event.data.includes('"usage"')).length;
    expect(usageChunks(withUsage)).toBe(1);
    expect(usageChunks(without)).toBe(0);

    type Chunk = {
      choices: Array<{
        delta: { content?: string; tool_calls?: Array<{ function: { arguments?: string } }> };
        finish_reason: string | null;
      }>;
    };
    const chunks = without.slice(0, -1).map((event) => JSON.parse(event.data) as Chunk);
    const args = chunks
      .flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? [])
      .map((call) => call.function.arguments ?? '');
    expect(args.filter((fragment) => fragment !== '').length).toBeGreaterThan(1);
    expect(JSON.parse(args.join(''))).toEqual({ file_path: 'a.ts' });
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('Hi there');
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('answers errors in the OpenAI shape', async () => {
    openai.enqueue({ kind: 'error', status: 404, message: 'The model `nope` does not exist' });
    const response = await post(`${openai.url}/chat/completions`, { ...body, stream: false });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: {
        message: 'The model `nope` does not exist',
        type: 'invalid_request_error',
        param: null,
        code: 'model_not_found',
      },
    });
  });
});

describe("the fakes' models routes", () => {
  const servers: Array<{ close: () => Promise<void> }> = [];
  afterAll(async () => {
    for (const server of servers) await server.close();
  });
  const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers });

  it('Anthropic: lists the models page by page, checks the key like /v1/messages, and is absent or failing on request', async () => {
    const keyed = await startFakeAnthropicServer({
      apiKey: 'sk-ant-right',
      models: ['claude-a-20250101', 'claude-b-20250101', 'claude-c-20250101'],
    });
    servers.push(keyed);
    const headers = { 'x-api-key': 'sk-ant-right', 'anthropic-version': '2023-06-01' };
    const page = await get(`${keyed.url}/v1/models?limit=2`, headers);
    expect(page.status).toBe(200);
    expect(await page.json()).toEqual({
      data: [
        {
          type: 'model',
          id: 'claude-a-20250101',
          display_name: 'claude-a-20250101',
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT00:00:00Z$/) as unknown,
        },
        {
          type: 'model',
          id: 'claude-b-20250101',
          display_name: 'claude-b-20250101',
          created_at: expect.any(String) as unknown,
        },
      ],
      has_more: true,
      first_id: 'claude-a-20250101',
      last_id: 'claude-b-20250101',
    });
    const next = (await (await get(`${keyed.url}/v1/models?limit=2&after_id=claude-b-20250101`, headers)).json()) as {
      data: Array<{ id: string }>;
      has_more: boolean;
    };
    expect(next.data.map((model) => model.id)).toEqual(['claude-c-20250101']);
    expect(next.has_more).toBe(false);
    // Bearer works as on /v1/messages; a wrong key or none gets the same 401.
    expect((await get(`${keyed.url}/v1/models`, { authorization: 'Bearer sk-ant-right' })).status).toBe(200);
    for (const wrong of [{ 'x-api-key': 'sk-ant-wrong' }, {}] as Array<Record<string, string>>) {
      const refused = await get(`${keyed.url}/v1/models`, wrong);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({
        type: 'error',
        error: { type: 'authentication_error', message: 'invalid x-api-key' },
      });
    }
    const message = await post(
      `${keyed.url}/v1/messages`,
      { model: 'm', max_tokens: 1, messages: [] },
      { 'x-api-key': 'sk-ant-wrong' },
    );
    expect(message.status).toBe(401);
    expect(keyed.pending()).toBe(0);

    const defaults = await startFakeAnthropicServer();
    const absent = await startFakeAnthropicServer({ models: 'absent' });
    const failing = await startFakeAnthropicServer({ models: { status: 500 } });
    servers.push(defaults, absent, failing);
    const listed = (await (await get(`${defaults.url}/v1/models`, { 'x-api-key': 'k' })).json()) as {
      data: Array<{ id: string }>;
    };
    expect(listed.data.map((model) => model.id)).toContain('claude-sonnet-4-5-20250929');
    const missing = await get(`${absent.url}/v1/models`, { 'x-api-key': 'k' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const broken = await get(`${failing.url}/v1/models`, { 'x-api-key': 'k' });
    expect(broken.status).toBe(500);
    expect(await broken.json()).toMatchObject({
      type: 'error',
      error: { type: 'api_error' },
      request_id: expect.any(String) as unknown,
    });
    // The key is checked before the configured failure.
    expect((await get(`${failing.url}/v1/models`)).status).toBe(401);
  });

  it('OpenAI: lists every model, refuses a wrong key like /v1/chat/completions (the key masked in the message)', async () => {
    const keyed = await startFakeOpenAiServer({ apiKey: 'sk-openai-right-0123456789', models: ['gpt-x', 'gpt-y'] });
    servers.push(keyed);
    const listed = await get(`${keyed.url}/models`, { authorization: 'Bearer sk-openai-right-0123456789' });
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual({
      object: 'list',
      data: [
        { id: 'gpt-x', object: 'model', created: expect.any(Number) as unknown, owned_by: 'system' },
        { id: 'gpt-y', object: 'model', created: expect.any(Number) as unknown, owned_by: 'system' },
      ],
    });
    const wrongKey = 'sk-openai-WRONG-0123456789';
    for (const response of [
      await get(`${keyed.url}/models`, { authorization: `Bearer ${wrongKey}` }),
      await post(
        `${keyed.url}/chat/completions`,
        { model: 'gpt-x', messages: [] },
        { authorization: `Bearer ${wrongKey}` },
      ),
    ]) {
      expect(response.status).toBe(401);
      const body = (await response.json()) as { error: { message: string; code: string } };
      expect(body.error.code).toBe('invalid_api_key');
      expect(body.error.message).toMatch(/^Incorrect API key provided: sk-\*+6789\./);
      expect(body.error.message).not.toContain(wrongKey);
    }

    const keyless = await startFakeOpenAiServer();
    const absent = await startFakeOpenAiServer({ models: 'absent' });
    const failing = await startFakeOpenAiServer({ models: { status: 503 } });
    servers.push(keyless, absent, failing);
    expect(((await (await get(`${keyless.url}/models`)).json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    expect((await get(`${absent.url}/models`)).status).toBe(404);
    const busy = await get(`${failing.url}/models`);
    expect(busy.status).toBe(503);
    expect(await busy.json()).toMatchObject({ error: { type: 'server_error' } });
  });
});
