import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { StageRequest } from '../../src/core/agent.js';
import { RatchetError } from '../../src/core/errors.js';
import type { EventInput } from '../../src/core/events.js';
import type { ModelMessage } from '../../src/core/model.js';
import { createToolLoopRuntime } from '../../src/agent/tool-loop-runtime.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { FakeModelClient, text, toolCall, toolCalls, type FakeScript } from '../support/fake-model-client.js';
import { createTempWorktree, greenStageRequest, type TempWorktree } from './agent-fixtures.js';

let tmp: TempWorktree;
let events: EventInput[];

beforeEach(async () => {
  tmp = await createTempWorktree({ 'src/a.ts': 'export const a = 1;\n' });
  events = [];
});
afterEach(async () => {
  await tmp.cleanup();
});

function stageRequest<T = unknown>(overrides: Partial<StageRequest<T>> = {}): StageRequest<T> {
  return greenStageRequest(tmp.dir, events, overrides);
}

function runtimeFor(script: FakeScript, options: { deltaSize?: number } = {}) {
  const model = new FakeModelClient(script, options);
  let tick = 0;
  const runtime = createToolLoopRuntime({ model, runner: createProcessRunner(), now: () => (tick += 5) });
  return { model, runtime };
}

function toolMessage(messages: ModelMessage[], index: number): Extract<ModelMessage, { role: 'tool' }> {
  const message = messages[index];
  if (message?.role !== 'tool') throw new Error(`message ${index} is not a tool message`);
  return message;
}

const outputSchema = z.object({ currentTest: z.string().nullable().describe('The next test, or null when done.') });

describe('createToolLoopRuntime', () => {
  it('feeds tool results back over several turns until the model stops', async () => {
    const { model, runtime } = runtimeFor([
      toolCall('Write', { file_path: 'src/b.ts', content: 'export const b = 2;\n' }, { text: 'Writing b.' }),
      toolCalls([
        { name: 'Read', input: { file_path: 'src/b.ts' } },
        { name: 'Bash', input: { command: 'ls src' } },
      ]),
      text('All done.', { costUsd: 0.002 }),
    ]);
    const outcome = await runtime.runStage(stageRequest());

    expect(outcome).toMatchObject({ status: 'completed', finalText: 'All done.', output: undefined, turns: 3 });
    expect(outcome.usage).toEqual({ inputTokens: 30, outputTokens: 15 });
    expect(outcome.costUsd).toBeCloseTo(0.004);
    expect(await readFile(join(tmp.dir, 'src/b.ts'), 'utf8')).toBe('export const b = 2;\n');

    expect(model.requests).toHaveLength(3);
    const first = model.requests[0];
    expect(first?.system).toBe('Stage: GREEN\nMake the test pass.');
    expect(first?.messages).toEqual([{ role: 'user', content: 'Implement the feature.' }]);
    expect(first?.tools.map((tool) => tool.name)).toEqual(['Read', 'Write', 'Edit', 'Bash', 'Glob', 'Grep']);
    expect(first?.tools[0]?.inputSchema).toMatchObject({ type: 'object', required: ['file_path'] });

    const second = model.requests[1]?.messages ?? [];
    expect(second).toHaveLength(3);
    expect(second[1]).toEqual({
      role: 'assistant',
      text: 'Writing b.',
      toolCalls: [
        { id: 'call_0_0', name: 'Write', input: { file_path: 'src/b.ts', content: 'export const b = 2;\n' } },
      ],
    });
    expect(toolMessage(second, 2).results).toEqual([
      { toolCallId: 'call_0_0', toolName: 'Write', output: 'Created src/b.ts (1 line).', isError: false },
    ]);

    const third = model.requests[2]?.messages ?? [];
    expect(toolMessage(third, 4).results).toEqual([
      { toolCallId: 'call_1_0', toolName: 'Read', output: '     1\texport const b = 2;', isError: false },
      { toolCallId: 'call_1_1', toolName: 'Bash', output: 'a.ts\nb.ts\nExit code: 0', isError: false },
    ]);
  });

  it('returns tool errors and invalid input to the model, which corrects itself', async () => {
    const { model, runtime } = runtimeFor([
      toolCall('Read', { file_path: 'missing.ts' }),
      toolCall('Write', { path: 'src/c.ts', content: 'x' }),
      toolCall('Write', { file_path: 'src/c.ts', content: 'x' }),
      toolCall('Teleport', {}),
      toolCall('Write', { file_path: '../escape.ts', content: 'x' }),
      text('done'),
    ]);
    const outcome = await runtime.runStage(stageRequest());
    expect(outcome.status).toBe('completed');
    const messages = model.lastRequest().messages;
    const results = messages.filter((message) => message.role === 'tool').map((message) => message.results[0]);
    expect(results.map((result) => result?.isError)).toEqual([true, true, false, true, true]);
    expect(results[0]?.output).toContain('File does not exist: missing.ts');
    expect(results[1]?.output).toContain('Invalid input for Write:\n- file_path: Invalid input: expected string');
    expect(results[3]?.output).toContain(
      "Unknown tool 'Teleport'. Available tools: Read, Write, Edit, Bash, Glob, Grep.",
    );
    expect(results[4]?.output).toContain('outside the worktree');
    expect(await readFile(join(tmp.dir, 'src/c.ts'), 'utf8')).toBe('x');
  });

  it('stops at the turn limit', async () => {
    const { model, runtime } = runtimeFor(() => toolCall('Bash', { command: 'true' }, { text: 'again' }));
    const outcome = await runtime.runStage(stageRequest({ maxTurns: 3 }));
    expect(outcome).toMatchObject({ status: 'turn-limit', turns: 3, finalText: 'again', output: undefined });
    expect(outcome.status === 'turn-limit' ? outcome.message : '').toContain('Stopped after 3 model turns');
    expect(model.callCount).toBe(3);
  });

  it('ends with a valid StructuredOutput call', async () => {
    const { model, runtime } = runtimeFor([
      toolCall('StructuredOutput', { currentTest: 42 }),
      toolCall('StructuredOutput', { currentTest: 'adds two numbers' }, { text: 'Picked.' }),
    ]);
    const outcome = await runtime.runStage(stageRequest({ outputSchema }));
    expect(outcome).toMatchObject({ status: 'completed', output: { currentTest: 'adds two numbers' }, turns: 2 });

    const first = model.requests[0];
    expect(first?.system).toMatch(
      /^Stage: GREEN\nMake the test pass\.\n\nWhen you have finished, call the StructuredOutput tool/,
    );
    const structured = first?.tools.find((tool) => tool.name === 'StructuredOutput');
    expect(structured?.inputSchema).toEqual({
      type: 'object',
      properties: { currentTest: { type: ['string', 'null'], description: 'The next test, or null when done.' } },
      required: ['currentTest'],
    });
    const rejected = toolMessage(model.requests[1]?.messages ?? [], 2).results[0];
    expect(rejected?.isError).toBe(true);
    expect(rejected?.output).toContain('Invalid StructuredOutput input:\n- currentTest: Invalid input');
  });

  it('wraps non-object output schemas as { value }', async () => {
    const { model, runtime } = runtimeFor([toolCall('StructuredOutput', { value: ['a', 'b'] })]);
    const outcome = await runtime.runStage(stageRequest({ outputSchema: z.array(z.string()) }));
    expect(outcome.output).toEqual(['a', 'b']);
    expect(model.requests[0]?.tools.at(-1)?.inputSchema).toMatchObject({ type: 'object', required: ['value'] });
  });

  it('accepts structured output from a fenced JSON block or the last balanced object in the text', async () => {
    const fenced = runtimeFor([text('Here it is:\n```json\n{"currentTest": null}\n```\n')]);
    expect(await fenced.runtime.runStage(stageRequest({ outputSchema }))).toMatchObject({
      status: 'completed',
      output: { currentTest: null },
    });
    const inline = runtimeFor([text('I considered {"currentTest": 1} but chose {"currentTest": "b {x}"} in the end.')]);
    expect((await inline.runtime.runStage(stageRequest({ outputSchema }))).output).toEqual({ currentTest: 'b {x}' });
  });

  it('asks once for the StructuredOutput call, then gives up with invalid-output', async () => {
    const { model, runtime } = runtimeFor([text('I am done.'), text('Really done: {"currentTest": 3}')]);
    const outcome = await runtime.runStage(stageRequest({ outputSchema }));
    expect(outcome.status).toBe('invalid-output');
    expect(outcome.status === 'invalid-output' ? outcome.message : '').toContain('does not match the schema');
    expect(model.callCount).toBe(2);
    const corrective = model.requests[1]?.messages.at(-1);
    expect(corrective).toMatchObject({ role: 'user' });
    expect(corrective?.role === 'user' ? corrective.content : '').toContain(
      'Your reply contains no JSON result.\nCall the StructuredOutput tool now',
    );
  });

  it('recovers after the corrective message', async () => {
    const { runtime } = runtimeFor([text('Done.'), toolCall('StructuredOutput', { currentTest: 'x' })]);
    expect(await runtime.runStage(stageRequest({ outputSchema }))).toMatchObject({
      status: 'completed',
      output: { currentTest: 'x' },
    });
  });

  it('throws interrupted when aborted between the model call and its tools', async () => {
    const controller = new AbortController();
    const { model, runtime } = runtimeFor((_request, callIndex) => {
      controller.abort();
      return toolCall('Write', { file_path: `f${callIndex}.ts`, content: '' });
    });
    const error: unknown = await runtime
      .runStage(stageRequest({ signal: controller.signal }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RatchetError);
    expect((error as RatchetError).code).toBe('interrupted');
    expect(model.callCount).toBe(1);
    expect(events.some((event) => event.type === 'tool-call')).toBe(false);
  });

  it('throws interrupted without calling the model when already aborted', async () => {
    const { model, runtime } = runtimeFor([text('never')]);
    const request = stageRequest({ signal: AbortSignal.abort() });
    await expect(runtime.runStage(request)).rejects.toMatchObject({ code: 'interrupted' });
    expect(model.callCount).toBe(0);
  });

  it('propagates provider errors after reporting the failed call', async () => {
    const { runtime } = runtimeFor([new RatchetError('rate-limit', 'Too many requests', { retryable: true })]);
    await expect(runtime.runStage(stageRequest())).rejects.toMatchObject({ code: 'rate-limit', retryable: true });
    expect(events).toEqual([
      expect.objectContaining({
        type: 'model-call',
        response: null,
        error: { code: 'rate-limit', message: 'Too many requests' },
      }),
    ]);
  });

  it('emits model-delta, model-call and tool-call events in order', async () => {
    const { runtime } = runtimeFor(
      [toolCall('Read', { file_path: 'src/a.ts' }, { text: 'Look.', latencyMs: 7 }), text('Fine.', { costUsd: null })],
      {
        deltaSize: 3,
      },
    );
    const outcome = await runtime.runStage(stageRequest());
    expect(outcome.costUsd).toBeNull();
    expect(events.map((event) => event.type)).toEqual([
      'model-delta',
      'model-delta',
      'model-call',
      'tool-call',
      'model-delta',
      'model-delta',
      'model-call',
    ]);
    expect(events[0]).toEqual({ type: 'model-delta', text: 'Loo' });
    expect(events[2]).toMatchObject({
      type: 'model-call',
      stage: 'GREEN',
      provider: 'fake',
      model: 'fake-model',
      error: null,
      // The client's own measure of the attempt that answered (retry waits are not part of it).
      latencyMs: 7,
    });
    expect(events[3]).toEqual({
      type: 'tool-call',
      stage: 'GREEN',
      tool: 'Read',
      input: { file_path: 'src/a.ts' },
      output: '     1\texport const a = 1;',
      isError: false,
      durationMs: 5,
    });
    const firstCall = events[2];
    // The event holds a snapshot of the conversation at the time of the call.
    expect(firstCall?.type === 'model-call' ? firstCall.request.messages : []).toHaveLength(1);
  });
});
