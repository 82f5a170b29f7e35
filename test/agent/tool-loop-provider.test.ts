/**
 * The tool loop over the real AI SDK adapters and the loopback fake servers: what it asks for
 * (`max_tokens`), how it reads the finish reason of a reply (cut off at the output limit, refused),
 * what it records of a call (latency of the attempt that answered, unknown usage).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { StageRequest } from '../../src/core/agent.js';
import type { RatchetError } from '../../src/core/errors.js';
import type { EventInput } from '../../src/core/events.js';
import { createToolLoopRuntime } from '../../src/agent/tool-loop-runtime.js';
import { createModelClient } from '../../src/llm/providers.js';
import { withRetry } from '../../src/llm/retry.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../support/fake-openai-server.js';
import { rejectionOf, silenceSdkWarnings } from '../llm/model-fixtures.js';
import { createTempWorktree, greenStageRequest, type TempWorktree } from './agent-fixtures.js';

const ANTHROPIC_KEY = 'sk-ant-test-tool-loop-0123456789';
const OPENAI_KEY = 'sk-openai-test-tool-loop-0123456789';

let anthropic: FakeAnthropicServer;
let openai: FakeOpenAiServer;
let tmp: TempWorktree;
let events: EventInput[];

beforeAll(async () => {
  silenceSdkWarnings();
  anthropic = await startFakeAnthropicServer();
  openai = await startFakeOpenAiServer();
});
afterAll(async () => {
  await anthropic.close();
  await openai.close();
});
beforeEach(async () => {
  tmp = await createTempWorktree({ 'src/a.ts': 'export const a = 1;\n' });
  events = [];
});
afterEach(async () => {
  anthropic.reset();
  openai.reset();
  await tmp.cleanup();
});

function claude(model = 'claude-sonnet-4-5', now?: () => number) {
  return createModelClient({
    provider: 'anthropic',
    model,
    env: { ANTHROPIC_BASE_URL: anthropic.url, ANTHROPIC_API_KEY: ANTHROPIC_KEY },
    ...(now ? { now } : {}),
  });
}

function gpt(model = 'gpt-4o') {
  return createModelClient({
    provider: 'openai',
    model,
    env: { OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: OPENAI_KEY },
  });
}

function stageRequest<T = unknown>(overrides: Partial<StageRequest<T>> = {}): StageRequest<T> {
  return greenStageRequest(tmp.dir, events, overrides);
}

type AnthropicBody = {
  max_tokens: number;
  messages: Array<{ role: string; content: unknown }>;
};
const anthropicBody = (index: number): AnthropicBody => anthropic.requests[index]?.body as AnthropicBody;

/** The text of every `tool_result` block of a request, with its error flag. */
function toolResults(body: AnthropicBody): Array<{ text: string; isError: boolean }> {
  const last = body.messages.at(-1);
  const blocks = Array.isArray(last?.content) ? (last.content as Array<Record<string, unknown>>) : [];
  return blocks
    .filter((block) => block.type === 'tool_result')
    .map((block) => ({ text: JSON.stringify(block.content), isError: block.is_error === true }));
}

/** An Anthropic stream cut off at max_tokens while the input of a Write call was being written. */
function cutOffWriteStream(): string {
  const event = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
  return [
    event('message_start', {
      message: {
        id: 'msg_cut',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 100, output_tokens: 1 },
      },
    }),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Reading, then writing.' } }),
    event('content_block_stop', { index: 0 }),
    event('content_block_start', {
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_read', name: 'Read', input: {} },
    }),
    event('content_block_delta', {
      index: 1,
      delta: { type: 'input_json_delta', partial_json: '{"file_path":"src/a.ts"}' },
    }),
    event('content_block_stop', { index: 1 }),
    event('content_block_start', {
      index: 2,
      content_block: { type: 'tool_use', id: 'toolu_write', name: 'Write', input: {} },
    }),
    event('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '' } }),
    event('content_block_delta', {
      index: 2,
      delta: { type: 'input_json_delta', partial_json: '{"file_path":"src/big.ts","content":"export const big = [' },
    }),
    event('content_block_stop', { index: 2 }),
    event('message_delta', {
      delta: { stop_reason: 'max_tokens', stop_sequence: null },
      usage: { output_tokens: 16000 },
    }),
    event('message_stop', {}),
  ].join('');
}

const outputSchema = z.object({ currentTest: z.string().nullable() });

describe('tool loop: output tokens per call', () => {
  it.each([
    ['claude-sonnet-4-5', undefined, 16_000],
    ['claude-3-5-haiku-20241022', undefined, 8192],
    ['claude-3-opus-20240229', undefined, 4096],
    ['my-local-model', 2048, 2048],
  ])('%s (configured: %s) is asked for %s output tokens', async (model, configured, expected) => {
    anthropic.enqueue({ kind: 'message', content: [{ type: 'text', text: 'done' }] });
    const runtime = createToolLoopRuntime({
      model: claude(model),
      runner: createProcessRunner(),
      ...(configured === undefined ? {} : { maxOutputTokens: configured }),
    });
    expect(await runtime.runStage(stageRequest())).toMatchObject({ status: 'completed' });
    expect(anthropicBody(0).max_tokens).toBe(expected);
  });
});

describe('tool loop: a reply cut off at the output limit', () => {
  it('does not run the tool call that was being written, says why, and runs the calls before it', async () => {
    anthropic.enqueue(
      { kind: 'raw', status: 200, headers: { 'content-type': 'text/event-stream' }, body: cutOffWriteStream() },
      {
        kind: 'message',
        content: [
          { type: 'tool_use', name: 'Write', input: { file_path: 'src/big.ts', content: 'export const big = [];\n' } },
        ],
      },
      { kind: 'message', content: [{ type: 'text', text: 'Done.' }] },
    );
    const runtime = createToolLoopRuntime({ model: claude(), runner: createProcessRunner() });
    const outcome = await runtime.runStage(stageRequest());
    expect(outcome).toMatchObject({ status: 'completed', finalText: 'Done.', turns: 3 });

    const [read, write] = toolResults(anthropicBody(1));
    expect(read).toMatchObject({ isError: false });
    expect(read?.text).toContain('export const a = 1;');
    expect(write?.isError).toBe(true);
    expect(write?.text).toContain(
      'Not run: your reply was cut off at the output limit (16000 tokens per reply) while this Write call was being written, so its input is incomplete.',
    );
    expect(write?.text).toContain('Work in smaller steps');
    // Not the misleading "Invalid input for Write: file_path ... undefined".
    expect(write?.text).not.toContain('Invalid input');
    // The file comes from the second, complete call only.
    expect(await readFile(join(tmp.dir, 'src/big.ts'), 'utf8')).toBe('export const big = [];\n');
  });

  it('tells the model its text reply was cut off (not that it holds no JSON result)', async () => {
    anthropic.enqueue(
      { kind: 'message', content: [{ type: 'text', text: 'Let me explain at length' }], stopReason: 'max_tokens' },
      { kind: 'message', content: [{ type: 'tool_use', name: 'StructuredOutput', input: { currentTest: 'x' } }] },
    );
    const runtime = createToolLoopRuntime({ model: claude('claude-3-5-haiku'), runner: createProcessRunner() });
    const outcome = await runtime.runStage(stageRequest({ outputSchema }));
    expect(outcome).toMatchObject({ status: 'completed', output: { currentTest: 'x' } });
    const notice = JSON.stringify(anthropicBody(1).messages.at(-1)?.content);
    expect(notice).toContain('Your reply was cut off at the output limit (8192 tokens per reply)');
    expect(notice).toContain('call the StructuredOutput tool');
    expect(notice).not.toContain('no JSON result');
  });

  it('does not take a cut-off reply for the final answer of a stage without an output schema', async () => {
    anthropic.enqueue(
      { kind: 'message', content: [{ type: 'text', text: 'Summary of my chan' }], stopReason: 'max_tokens' },
      { kind: 'message', content: [{ type: 'text', text: 'Changed nothing.' }] },
    );
    const runtime = createToolLoopRuntime({ model: claude(), runner: createProcessRunner() });
    expect(await runtime.runStage(stageRequest())).toMatchObject({
      status: 'completed',
      finalText: 'Changed nothing.',
    });
    expect(anthropic.requests).toHaveLength(2);
  });

  it('stops after 3 cut-off replies in a row, naming the limit and the setting', async () => {
    anthropic.setFallback(() => ({
      kind: 'message',
      content: [{ type: 'tool_use', name: 'Write', input: {} }],
      stopReason: 'max_tokens',
    }));
    const runtime = createToolLoopRuntime({ model: claude(), runner: createProcessRunner(), maxOutputTokens: 1000 });
    const outcome = await runtime.runStage(stageRequest({ maxTurns: 40 }));
    expect(outcome.status).toBe('invalid-output');
    expect(outcome.status === 'invalid-output' ? outcome.message : '').toBe(
      "The model's replies were cut off at the output limit (1000 tokens per reply) 3 times in a row. Raise max_output_tokens ([provider], or [stages.<stage>] for GREEN) if the model allows more, or ask for smaller steps.",
    );
    expect(anthropic.requests).toHaveLength(3);
    expect(existsSync(join(tmp.dir, 'undefined'))).toBe(false);
  });
});

describe('tool loop: a refused reply', () => {
  it('stops the stage with "the model refused" (Anthropic stop_reason refusal)', async () => {
    anthropic.enqueue({ kind: 'message', content: [], stopReason: 'refusal' });
    const runtime = createToolLoopRuntime({ model: claude(), runner: createProcessRunner() });
    const error = (await rejectionOf(runtime.runStage(stageRequest({ outputSchema })))) as RatchetError;
    expect(error).toMatchObject({ code: 'provider', retryable: false });
    expect(error.message).toBe(
      'The model refused: anthropic ended the reply of model "claude-sonnet-4-5" in stage GREEN with a refusal or content filter.',
    );
    expect(anthropic.requests).toHaveLength(1);
    // The call itself is recorded, with its response.
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'model-call', error: null, response: { finishReason: 'content-filter' } });
  });

  it('stops the stage with "the model refused" (OpenAI finish_reason content_filter), quoting its text', async () => {
    openai.enqueue({ kind: 'message', text: 'I cannot help with that.', finishReason: 'content_filter' });
    const runtime = createToolLoopRuntime({ model: gpt(), runner: createProcessRunner() });
    const error = (await rejectionOf(runtime.runStage(stageRequest()))) as RatchetError;
    expect(error).toMatchObject({ code: 'provider' });
    expect(error.message).toBe(
      'The model refused: openai ended the reply of model "gpt-4o" in stage GREEN with a refusal or content filter ("I cannot help with that.").',
    );
  });
});

describe('tool loop: what a model call records', () => {
  it('records the latency of the attempt that answered, not the retry waits before it', async () => {
    let clock = 10_000;
    const now = () => clock;
    const sleep = (ms: number) => {
      clock += ms;
      return Promise.resolve();
    };
    anthropic.enqueue({ kind: 'error', status: 529 }, { kind: 'message', content: [{ type: 'text', text: 'ok' }] });
    const model = withRetry(claude('claude-sonnet-4-5', now), { sleep });
    const runtime = createToolLoopRuntime({ model, runner: createProcessRunner(), now });
    await runtime.runStage(stageRequest());
    // The clock moved only by the 1 s retry wait, which is not part of the call that answered.
    expect(clock).toBe(11_000);
    expect(events.filter((event) => event.type === 'model-call')).toEqual([
      expect.objectContaining({ error: null, latencyMs: 0 }),
    ]);

    // A call that fails after its retries: the last attempt's duration.
    events = [];
    anthropic.enqueue({ kind: 'error', status: 529 }, { kind: 'error', status: 529 });
    const failing = createToolLoopRuntime({
      model: withRetry(claude('claude-sonnet-4-5', now), { sleep, maxRetries: 1 }),
      runner: createProcessRunner(),
      now,
    });
    await rejectionOf(failing.runStage(stageRequest({ emit: (event) => events.push(event) })));
    const failed = events.filter((event) => event.type === 'model-call');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ response: null, error: { code: 'overloaded' }, latencyMs: 0 });
  });

  it('keeps usage the server did not report unknown: null tokens on the call, a null stage cost', async () => {
    openai.enqueue(
      { kind: 'message', toolCalls: [{ name: 'Read', arguments: { file_path: 'src/a.ts' } }], usage: null },
      { kind: 'message', text: 'done', usage: { inputTokens: 100, outputTokens: 10 } },
    );
    const runtime = createToolLoopRuntime({ model: gpt(), runner: createProcessRunner() });
    const outcome = await runtime.runStage(stageRequest());
    expect(outcome).toMatchObject({ status: 'completed', usage: { inputTokens: 100, outputTokens: 10 } });
    expect(outcome.costUsd).toBeNull();
    const calls = events.filter((event) => event.type === 'model-call');
    expect(calls[0]).toMatchObject({ response: { usage: { inputTokens: null, outputTokens: null }, costUsd: null } });
    expect(calls[1]).toMatchObject({ response: { usage: { inputTokens: 100, outputTokens: 10 } } });
  });
});
