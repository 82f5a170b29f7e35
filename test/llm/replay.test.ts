import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RatchetError } from '../../src/core/errors.js';
import type { ModelClient, ModelMessage, ModelRequest, ModelResponse } from '../../src/core/model.js';
import { createRedactor } from '../../src/core/redact.js';
import { createRecordingModelClient, parseCassette } from '../../src/llm/cassette.js';
import { createModelClient } from '../../src/llm/providers.js';
import { createReplayModelClient } from '../../src/llm/replay.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { startFakeOpenAiServer } from '../support/fake-openai-server.js';
import { rejectionOf, silenceSdkWarnings, userRequest } from './model-fixtures.js';

let dir: string;
let server: FakeAnthropicServer;

beforeAll(async () => {
  silenceSdkWarnings();
  dir = await mkdtemp(join(tmpdir(), 'ratchet-replay-'));
  server = await startFakeAnthropicServer();
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const withMessages = (request: ModelRequest, messages: ModelMessage[]): ModelRequest => ({ ...request, messages });

describe('replay client', () => {
  it('plays scripted entries in order when they match', async () => {
    const client = createReplayModelClient({
      modelId: 'scripted-model',
      entries: [
        {
          match: { stage: 'Stage: RED', lastUser: 'sum' },
          response: { text: 'Reading.', toolCalls: [{ id: 't1', name: 'Read', input: { file_path: 'sum.ts' } }] },
        },
        {
          match: { stage: 'Stage: RED', toolResults: [{ tool: 'Read', isError: false, contains: 'export' }] },
          response: { text: 'Done.', usage: { inputTokens: 5, outputTokens: 2 } },
        },
      ],
    });
    const first = userRequest('add a failing test for sum()');
    const deltas: string[] = [];
    const one = await client.generate(first, { onTextDelta: (delta) => deltas.push(delta) });
    expect(one).toMatchObject({
      text: 'Reading.',
      toolCalls: [{ id: 't1', name: 'Read', input: { file_path: 'sum.ts' } }],
      finishReason: 'tool-calls',
      usage: { inputTokens: 0, outputTokens: 0 },
      costUsd: 0,
      provider: 'replay',
      model: 'scripted-model',
    });
    expect(deltas).toEqual(['Reading.']);
    const two = await client.generate(
      withMessages(first, [
        ...first.messages,
        { role: 'assistant', text: one.text, toolCalls: one.toolCalls },
        {
          role: 'tool',
          results: [{ toolCallId: 't1', toolName: 'Read', output: 'export const sum = 1', isError: false }],
        },
      ]),
    );
    expect(two).toMatchObject({ text: 'Done.', finishReason: 'stop', usage: { inputTokens: 5, outputTokens: 2 } });
    expect(client.remaining()).toBe(0);
  });

  it('throws replay-mismatch with a unified diff when the request does not match', async () => {
    const client = createReplayModelClient({
      entries: [{ match: { stage: 'Stage: GREEN', lastUser: 'make it pass' }, response: { text: 'x' } }],
    });
    const error = (await rejectionOf(client.generate(userRequest('write a test')))) as RatchetError;
    expect(error.code).toBe('replay-mismatch');
    expect(error.message).toContain('entry #1');
    expect(error.message).toContain('--- expected');
    expect(error.message).toContain('+++ actual');
    expect(error.message).toContain('-  "stage": "Stage: GREEN"');
    expect(error.message).toContain('+  "stage": "Stage: RED"');
    expect(error.message).toContain('+  "lastUser": "write a test"');
    expect(error.details).toMatchObject({ entryIndex: 0 });
    expect(client.remaining()).toBe(1);
  });

  it('rejects tool results that differ in name, error flag or content', async () => {
    const entries = [{ match: { toolResults: [{ tool: 'Bash', isError: true }] }, response: { text: 'x' } }];
    const request = withMessages(userRequest('x'), [
      { role: 'user', content: 'x' },
      { role: 'assistant', text: '', toolCalls: [{ id: 'a', name: 'Bash', input: {} }] },
      { role: 'tool', results: [{ toolCallId: 'a', toolName: 'Bash', output: 'ok', isError: false }] },
    ]);
    const error = (await rejectionOf(createReplayModelClient({ entries }).generate(request))) as RatchetError;
    expect(error.code).toBe('replay-mismatch');
    expect(error.message).toContain('"isError": false');
  });

  it('throws replay-mismatch once the cassette is exhausted', async () => {
    const client = createReplayModelClient({ entries: [{ response: { text: 'only one' } }] });
    expect((await client.generate(userRequest('a'))).text).toBe('only one');
    const error = (await rejectionOf(client.generate(userRequest('b')))) as RatchetError;
    expect(error.code).toBe('replay-mismatch');
    expect(error.message).toContain('exhausted');
    expect(error.message).toContain('+  "lastUser": "b"');
    // There is no entry to edit: the hint says how to go on.
    expect(error.hint).toContain('record a longer one');
    expect(error.hint).not.toContain('"match"');
  });

  it('continues after the entries an earlier process played (startAt) and tells its position', async () => {
    const entries = [
      { match: { stage: 'Stage: PLAN' }, response: { text: 'plan' } },
      { match: { stage: 'Stage: RED' }, response: { text: 'red' } },
      { match: { stage: 'Stage: GREEN' }, response: { text: 'green' } },
    ];
    const fresh = createReplayModelClient({ entries });
    expect(fresh.position()).toBe(0);
    const resumed = createReplayModelClient({ entries, startAt: 1 });
    expect(resumed.position()).toBe(1);
    expect((await resumed.generate(userRequest('a test'))).text).toBe('red');
    expect(resumed.position()).toBe(2);
    expect(resumed.remaining()).toBe(1);
    const error = (await rejectionOf(resumed.generate(userRequest('a test')))) as RatchetError;
    expect(error.code).toBe('replay-mismatch');
    expect(error.message).toContain('entry #3');
    expect(resumed.position()).toBe(2);
    expect(createReplayModelClient({ entries, startAt: 3 }).remaining()).toBe(0);
    expect(() => createReplayModelClient({ entries, startAt: 4 })).toThrow('it has 3 entries');
  });

  it('names the line of an invalid cassette entry', async () => {
    const path = join(dir, 'bad.ndjson');
    await writeFile(
      path,
      [
        JSON.stringify({ cassette: 1, description: 'bad one', model: 'm' }),
        JSON.stringify({ match: { stage: 'Stage: RED' }, response: { text: 'fine' } }),
        '',
        JSON.stringify({ match: { stage: 'Stage: RED', lastuser: 'typo' }, response: { text: 'x' } }),
      ].join('\n'),
    );
    const error = (() => {
      try {
        createReplayModelClient({ cassettePath: path });
      } catch (thrown) {
        return thrown as RatchetError;
      }
      throw new Error('expected a validation error');
    })();
    expect(error.code).toBe('config');
    expect(error.message).toContain(`${path}:4`);
    expect(error.message).toContain('lastuser');

    await writeFile(path, '{"response": {"text": "a"}}\n{not json\n');
    expect(() => createReplayModelClient({ cassettePath: path })).toThrow(`${path}:2`);
    await writeFile(
      path,
      '{"response": {"toolCalls": [{"name": "Read"}], "usage": {"inputTokens": -1, "outputTokens": 0}}}\n',
    );
    expect(() => createReplayModelClient({ cassettePath: path })).toThrow(`${path}:1`);
  });

  it('parses the demo cassette shipped with the package', async () => {
    const path = new URL('../../demo/cassette.ndjson', import.meta.url);
    const cassette = parseCassette(await readFile(path, 'utf8'), 'demo/cassette.ndjson');
    expect(cassette.header?.cassette).toBe(1);
    expect(cassette.entries.length).toBeGreaterThan(0);
  });

  it('a missing cassette file is a config error', () => {
    expect(() =>
      createModelClient({ provider: 'replay', model: 'm', env: {}, cassettePath: join(dir, 'nope.ndjson') }),
    ).toThrow(expect.objectContaining({ code: 'config' }));
  });
});

describe('recording client', () => {
  it('records a real session that then replays with identical responses', async () => {
    const cassettePath = join(dir, 'nested', 'session.ndjson');
    server.enqueue(
      {
        kind: 'message',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', name: 'Read', input: { file_path: 'src/sum.ts' } },
        ],
      },
      { kind: 'message', content: [{ type: 'tool_use', name: 'Bash', input: { command: 'npm test' } }] },
      {
        kind: 'message',
        content: [{ type: 'text', text: 'The test fails as expected.' }],
        usage: { inputTokens: 300, outputTokens: 20 },
      },
    );
    const live = createModelClient({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-record' },
    });
    const recorder = createRecordingModelClient(live, cassettePath, { description: 'RED stage for sum()' });
    const recorded = await converse(recorder);
    expect(recorded.at(-1)?.text).toBe('The test fails as expected.');

    const lines = (await readFile(cassettePath, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[0] ?? '')).toEqual({
      cassette: 1,
      description: 'RED stage for sum()',
      model: 'claude-sonnet-4-5',
    });
    const { entries } = parseCassette(lines.join('\n'));
    expect(entries.map((entry) => entry.match)).toEqual([
      { stage: 'Stage: RED', lastUser: 'add a failing test for sum()' },
      { stage: 'Stage: RED', toolResults: [{ tool: 'Read', isError: false }] },
      { stage: 'Stage: RED', toolResults: [{ tool: 'Bash', isError: true }] },
    ]);
    expect(entries[0]?.request).toMatchObject({
      system: userRequest('').system,
      tools: [{ name: 'Read' }, { name: 'Bash' }],
    });

    const replay = createModelClient({ provider: 'replay', model: 'claude-sonnet-4-5', env: {}, cassettePath });
    const replayed = await converse(replay);
    const comparable = (response: ModelResponse) => ({
      text: response.text,
      toolCalls: response.toolCalls,
      finishReason: response.finishReason,
      usage: response.usage,
      model: response.model,
    });
    expect(replayed.map(comparable)).toEqual(recorded.map(comparable));
    expect(replayed.every((response) => response.provider === 'replay' && response.costUsd === 0)).toBe(true);
  });

  it('leaves out usage the server did not report, rather than recording 0 tokens', async () => {
    const openai = await startFakeOpenAiServer();
    try {
      openai.enqueue({ kind: 'message', text: 'no usage', usage: null });
      const cassettePath = join(dir, 'no-usage.ndjson');
      const live = createModelClient({
        provider: 'openai-compatible',
        model: 'local-model',
        baseUrl: openai.url,
        env: {},
      });
      const response = await createRecordingModelClient(live, cassettePath).generate(userRequest('hi'));
      expect(response.usage).toEqual({ inputTokens: null, outputTokens: null });
      const [entry] = parseCassette(await readFile(cassettePath, 'utf8')).entries;
      expect(entry?.response.text).toBe('no usage');
      expect(entry?.response).not.toHaveProperty('usage');
    } finally {
      await openai.close();
    }
  });

  it('writes no secret into the cassette when given a redactor', async () => {
    const cassettePath = join(dir, 'redacted.ndjson');
    const secret = 'sk-ant-record-secret-0123456789';
    server.enqueue({ kind: 'message', content: [{ type: 'text', text: `Debug: ANTHROPIC_API_KEY=${secret} (oops)` }] });
    const live = createModelClient({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-record' },
    });
    const recorder = createRecordingModelClient(live, cassettePath, { redact: createRedactor([secret]) });
    const response = await recorder.generate(userRequest('anything'));
    expect(response.text).toContain(secret);
    const text = await readFile(cassettePath, 'utf8');
    expect(text).not.toContain(secret);
    expect(parseCassette(text).entries[0]?.response.text).toBe('Debug: ANTHROPIC_API_KEY=[REDACTED] (oops)');
  });
});

/** A three-turn RED-stage conversation; tool outputs are fixed so requests are reproducible. */
async function converse(client: ModelClient): Promise<ModelResponse[]> {
  const base = userRequest('add a failing test for sum()');
  const messages: ModelMessage[] = [...base.messages];
  const responses: ModelResponse[] = [];
  const outputs: Record<string, { output: string; isError: boolean }> = {
    Read: { output: 'export function sum(a: number, b: number) { return 0; }', isError: false },
    Bash: { output: 'FAIL sum.test.ts: expected 3, received 0', isError: true },
  };
  for (;;) {
    const response = await client.generate({ ...base, messages: [...messages] });
    responses.push(response);
    if (response.toolCalls.length === 0) return responses;
    messages.push({ role: 'assistant', text: response.text, toolCalls: response.toolCalls });
    messages.push({
      role: 'tool',
      results: response.toolCalls.map((call) => ({
        toolCallId: call.id,
        toolName: call.name,
        output: outputs[call.name]?.output ?? '',
        isError: outputs[call.name]?.isError ?? false,
      })),
    });
  }
}
