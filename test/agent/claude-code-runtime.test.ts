/**
 * The claude-code runtime against the REAL `claude` binary (see test/support/claude-binary.ts),
 * pointed at the loopback fake Anthropic server. The CLI runs its own tool loop; the fake plays
 * the model, e.g. by calling the CLI's `StructuredOutput` client tool.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  checkClaudeAuth,
  checkClaudeCode,
  type ClaudeCodeRuntimeOptions,
} from '../../src/agent/claude-code-runtime.js';
import { promptFileName } from '../../src/agent/claude-code/prompt-file.js';
import { toJsonSchema } from '../../src/agent/tools/agent-tool.js';
import type { AgentRuntime, StageRequest } from '../../src/core/agent.js';
import type { EventInput, EventOf } from '../../src/core/events.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { claudeBinary } from '../support/claude-binary.js';
import {
  startFakeAnthropicServer,
  type FakeAnthropicServer,
  type RecordedRequest,
} from '../support/fake-anthropic-server.js';
import { createTempWorktree, type TempWorktree } from './agent-fixtures.js';
import { modelCallsOf, rejection, runtimeFactory, stageRequestFactory } from './claude-code-fixtures.js';
import { toolchain } from '../support/toolchains.js';

const API_KEY = 'sk-ant-test-claude-code';
const SYSTEM_PROMPT = 'Stage: PLANNER\nYou plan refactor batches. Answer with the structured output.';

const planSchema = z.object({
  status: z.enum(['ok', 'noop']),
  files: z.array(z.string()),
});
/** Valid for the JSON Schema the CLI checks, not for our zod schema (the refinement is lost). */
const relativePlanSchema = z.object({
  status: z.enum(['ok', 'noop']),
  files: z.array(z.string()).refine((files) => files.every((file) => !file.startsWith('/')), 'paths must be relative'),
});

const claude = toolchain('claude');

let binary: string;
let worktree: TempWorktree;

beforeAll(async () => {
  binary = claudeBinary();
  worktree = await createTempWorktree({ 'README.md': '# demo\n' });
});

afterAll(async () => {
  await worktree.cleanup();
});

/**
 * Everything one test uses: its own fake server, HOME and prompt folder, so that the tests can
 * run concurrently (each CLI call takes about a second of CPU).
 */
interface Harness {
  server: FakeAnthropicServer;
  promptDir: string;
  events: EventInput[];
  /** The session ids handed out, in order. */
  uuids: string[];
  env: (overrides?: Record<string, string | undefined>) => Record<string, string | undefined>;
  runtime: (overrides?: Partial<ClaudeCodeRuntimeOptions>) => AgentRuntime;
  stageRequest: <T>(overrides?: Partial<StageRequest<T>>) => StageRequest<T>;
  modelCalls: () => Array<EventOf<'model-call'>>;
}

async function harness(onFinished: (hook: () => Promise<void>) => void): Promise<Harness> {
  const server = await startFakeAnthropicServer({ apiKey: API_KEY });
  const home = await mkdtemp(join(tmpdir(), 'ratchet-claude-home-'));
  onFinished(async () => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  });
  const promptDir = join(home, 'prompts');
  const events: EventInput[] = [];
  const uuids: string[] = [];
  const env = (overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> => ({
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_API_KEY: API_KEY,
    ANTHROPIC_BASE_URL: server.url,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
    ...overrides,
  });
  return {
    server,
    promptDir,
    events,
    uuids,
    env,
    runtime: runtimeFactory({ binary, env: env(), promptDir, timeoutMs: 60_000, uuids }),
    stageRequest: stageRequestFactory(
      {
        stage: 'PLANNER',
        worktree: worktree.dir,
        systemPrompt: SYSTEM_PROMPT,
        prompt: 'Plan the next batch for src/.',
        maxTurns: 6,
      },
      events,
    ),
    modelCalls: () => modelCallsOf(events),
  };
}

const bodySchema = z.looseObject({
  model: z.string(),
  system: z.array(z.looseObject({ text: z.string() })),
  messages: z.array(z.looseObject({ role: z.string(), content: z.unknown() })),
  tools: z.array(z.looseObject({ name: z.string(), input_schema: z.unknown() })),
});

function bodyOf(request: RecordedRequest | undefined) {
  return bodySchema.parse(request?.body);
}

function sessionHeader(request: RecordedRequest): string | undefined {
  const value = request.headers['x-claude-code-session-id'];
  return typeof value === 'string' ? value : undefined;
}

describe.skipIf(claude.missing).concurrent(`createClaudeCodeRuntime with the real claude binary${claude.note}`, () => {
  it('returns the structured output the model gave through the StructuredOutput tool', async ({ onTestFinished }) => {
    const { server, promptDir, events, uuids, runtime, stageRequest, modelCalls } = await harness(onTestFinished);
    server.enqueue({
      kind: 'message',
      content: [
        { type: 'text', text: 'Planning.' },
        { type: 'tool_use', name: 'StructuredOutput', input: { status: 'ok', files: ['src/a.ts', 'src/b.ts'] } },
      ],
    });

    const outcome = await runtime({ model: 'claude-sonnet-4-5' }).runStage(stageRequest({ outputSchema: planSchema }));

    expect(outcome.status).toBe('completed');
    expect(outcome.output).toEqual({ status: 'ok', files: ['src/a.ts', 'src/b.ts'] });
    expect(JSON.parse(outcome.finalText)).toEqual({ status: 'ok', files: ['src/a.ts', 'src/b.ts'] });
    expect(outcome.costUsd).toBeGreaterThan(0);
    expect(outcome.turns).toBeGreaterThanOrEqual(1);
    expect(outcome.usage.inputTokens).toBeGreaterThan(0);

    // What the CLI sent: one streamed request, our system prompt and prompt, the schema as the
    // input schema of its StructuredOutput tool, the session id we chose, the model we asked for.
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.path).toBe('/v1/messages');
    expect(request?.search).toBe('?beta=true');
    const body = bodyOf(request);
    expect(body.model).toBe('claude-sonnet-4-5');
    expect(body.stream).toBe(true);
    expect(body.system.map((block) => block.text)).toContain(SYSTEM_PROMPT);
    expect(JSON.stringify(body.messages)).toContain('Plan the next batch for src/.');
    const tool = body.tools.find((entry) => entry.name === 'StructuredOutput');
    expect(tool?.input_schema).toEqual(toJsonSchema(planSchema));
    expect(uuids).toHaveLength(1);
    expect(sessionHeader(request!)).toBe(uuids[0]);

    // The system prompt file is content-addressed.
    const file = join(promptDir, promptFileName('PLANNER', SYSTEM_PROMPT));
    expect(file).toMatch(/planner-[0-9a-f]{12}\.txt$/);
    expect(await readFile(file, 'utf8')).toBe(SYSTEM_PROMPT);

    // One model-call event per CLI call, with the CLI's cost, tokens and duration.
    const [call] = modelCalls();
    expect(modelCalls()).toHaveLength(1);
    expect(call).toMatchObject({
      stage: 'PLANNER',
      provider: 'claude-code',
      model: 'claude-sonnet-4-5',
      request: {
        system: SYSTEM_PROMPT,
        messages: [{ role: 'user', content: 'Plan the next batch for src/.' }],
        tools: [],
      },
      error: null,
    });
    expect(call?.response?.costUsd).toBe(outcome.costUsd);
    expect(call?.response?.usage).toEqual(outcome.usage);
    expect(call?.response?.text).toBe(outcome.finalText);
    expect(call?.response?.finishReason).toBe('stop');
    expect(call?.latencyMs).toEqual(call?.response?.latencyMs);
    const log = events.find((event): event is EventOf<'log'> => event.type === 'log');
    expect(log?.message).toContain(`session ${uuids[0]}, success, ${outcome.turns} turn`);
    expect(log?.message).toContain(`$${outcome.costUsd?.toFixed(4)}`);
  });

  it('completes a stage without an output schema with the final text', async ({ onTestFinished }) => {
    const { server, runtime, stageRequest, modelCalls } = await harness(onTestFinished);
    server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'All done.' }] });

    const outcome = await runtime().runStage(stageRequest());

    expect(outcome).toMatchObject({ status: 'completed', finalText: 'All done.', output: undefined, turns: 1 });
    expect(bodyOf(server.requests[0]).tools.map((tool) => tool.name)).not.toContain('StructuredOutput');
    // The CLI's default model, as it reported it.
    expect(modelCalls()[0]?.model).toMatch(/^claude-/);
  });

  it('reports invalid-output when the model answers in plain text instead of calling StructuredOutput', async ({
    onTestFinished,
  }) => {
    const { server, runtime, stageRequest, modelCalls } = await harness(onTestFinished);
    server.setFallback(() => ({ kind: 'message', content: [{ type: 'text', text: 'Here is my plan: edit a.ts.' }] }));

    const outcome = await runtime().runStage(stageRequest({ outputSchema: planSchema }));

    expect(outcome.status).toBe('invalid-output');
    expect(outcome.output).toBeUndefined();
    expect(outcome.finalText).toBe('Here is my plan: edit a.ts.');
    // The CLI insisted once itself; one CLI call, no retry of ours.
    expect(server.requests).toHaveLength(2);
    expect(JSON.stringify(bodyOf(server.requests[1]).messages)).toContain('StructuredOutput');
    expect(modelCalls()).toHaveLength(1);
  });

  it('retries once with a fresh session when the output fails the zod schema, then reports invalid-output', async ({
    onTestFinished,
  }) => {
    const { server, uuids, runtime, stageRequest, modelCalls } = await harness(onTestFinished);
    server.setFallback(() => ({
      kind: 'message',
      content: [{ type: 'tool_use', name: 'StructuredOutput', input: { status: 'ok', files: ['/etc/passwd'] } }],
    }));

    const outcome = await runtime().runStage(stageRequest({ outputSchema: relativePlanSchema }));

    expect(outcome.status).toBe('invalid-output');
    if (outcome.status !== 'invalid-output') return;
    expect(outcome.message).toContain('paths must be relative');
    // Two CLI calls, each with its own fresh --session-id.
    expect(server.requests).toHaveLength(2);
    expect(uuids).toHaveLength(2);
    expect(new Set(uuids).size).toBe(2);
    expect(server.requests.map(sessionHeader)).toEqual(uuids);
    // The retry tells the model what was wrong.
    const calls = modelCalls();
    expect(calls).toHaveLength(2);
    const retryPrompt = calls[1]?.request.messages[0];
    expect(retryPrompt?.role).toBe('user');
    expect(retryPrompt?.role === 'user' ? retryPrompt.content : '').toContain('paths must be relative');
    expect(outcome.costUsd).toBeCloseTo((calls[0]?.response?.costUsd ?? 0) + (calls[1]?.response?.costUsd ?? 0), 10);
  });

  it('completes on the retry when the second output passes the zod schema', async ({ onTestFinished }) => {
    const { server, runtime, stageRequest, modelCalls } = await harness(onTestFinished);
    server.enqueue(
      {
        kind: 'message',
        content: [{ type: 'tool_use', name: 'StructuredOutput', input: { status: 'ok', files: ['/abs.ts'] } }],
      },
      {
        kind: 'message',
        content: [{ type: 'tool_use', name: 'StructuredOutput', input: { status: 'ok', files: ['rel.ts'] } }],
      },
    );

    const outcome = await runtime().runStage(stageRequest({ outputSchema: relativePlanSchema }));

    expect(outcome).toMatchObject({ status: 'completed', output: { status: 'ok', files: ['rel.ts'] } });
    expect(modelCalls()).toHaveLength(2);
  });

  it("maps the CLI's own structured-output retries running out to invalid-output", async ({ onTestFinished }) => {
    const { server, runtime, stageRequest, modelCalls } = await harness(onTestFinished);
    server.setFallback(() => ({
      kind: 'message',
      content: [{ type: 'tool_use', name: 'StructuredOutput', input: { status: 'maybe', files: 'a.ts' } }],
    }));

    const outcome = await runtime().runStage(stageRequest({ outputSchema: planSchema, maxTurns: 20 }));

    expect(outcome.status).toBe('invalid-output');
    if (outcome.status !== 'invalid-output') return;
    expect(outcome.message).toMatch(/structured output/i);
    expect(modelCalls()).toHaveLength(1);
    expect(modelCalls()[0]?.response?.finishReason).toBe('other');
  });

  it('maps error_max_turns to turn-limit', async ({ onTestFinished }) => {
    const { server, runtime, stageRequest } = await harness(onTestFinished);
    server.setFallback(() => ({
      kind: 'message',
      content: [{ type: 'tool_use', name: 'Read', input: { file_path: 'README.md' } }],
    }));

    const outcome = await runtime().runStage(stageRequest({ maxTurns: 1 }));

    expect(outcome.status).toBe('turn-limit');
    if (outcome.status !== 'turn-limit') return;
    expect(outcome.message).toContain('maximum number of turns');
    expect(outcome.costUsd).toBeGreaterThan(0);
  });

  it.for([
    { status: 429, code: 'rate-limit', retryable: true },
    { status: 529, code: 'overloaded', retryable: true },
    { status: 401, code: 'auth', retryable: false },
  ])('maps an API $status to the $code error code', async ({ status, code, retryable }, { onTestFinished }) => {
    const { server, runtime, stageRequest, modelCalls } = await harness(onTestFinished);
    server.setFallback(() => ({ kind: 'error', status }));

    const error = await rejection(runtime().runStage(stageRequest({ outputSchema: planSchema })));

    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    if (code === 'auth') expect(error.hint).toContain('/login');
    const [call] = modelCalls();
    expect(call?.error?.code).toBe(code);
    expect(call?.response?.finishReason).toBe('error');
  });

  it('maps "Not logged in" (no credentials at all) to an auth error with the /login instructions', async ({
    onTestFinished,
  }) => {
    const { server, env, runtime, stageRequest } = await harness(onTestFinished);
    const error = await rejection(runtime({ env: env({ ANTHROPIC_API_KEY: undefined }) }).runStage(stageRequest()));

    expect(error.code).toBe('auth');
    expect(error.message).toContain('Not logged in');
    expect(error.hint).toContain('/login');
    expect(server.requests).toHaveLength(0);
  });
});

describe
  .skipIf(claude.missing)
  .concurrent(`Claude Code preflight checks with the real claude binary${claude.note}`, () => {
    it('reads the version from `claude -v`', async ({ onTestFinished }) => {
      const { env } = await harness(onTestFinished);
      await expect(checkClaudeCode({ binary, runner: createProcessRunner(), env: env() })).resolves.toEqual({
        version: '2.1.330',
      });
    });

    it('passes the authentication check when the API answers', async ({ onTestFinished }) => {
      const { server, env } = await harness(onTestFinished);
      const check = await checkClaudeAuth({ binary, runner: createProcessRunner(), env: env(), cwd: worktree.dir });

      expect(check.result).toBe('ok');
      expect(JSON.stringify(bodyOf(server.requests[0]).messages)).toContain('Respond with OK');
    });

    it('fails the authentication check with the /login instructions', async ({ onTestFinished }) => {
      const { env } = await harness(onTestFinished);
      const error = await rejection(
        checkClaudeAuth({
          binary,
          runner: createProcessRunner(),
          env: env({ ANTHROPIC_API_KEY: undefined }),
          cwd: worktree.dir,
        }),
      );

      expect(error.code).toBe('auth');
      expect(error.hint).toContain('/login');
    });

    it('fails the authentication check on a rejected key', async ({ onTestFinished }) => {
      const { env } = await harness(onTestFinished);
      const error = await rejection(
        checkClaudeAuth({
          binary,
          runner: createProcessRunner(),
          env: env({ ANTHROPIC_API_KEY: 'sk-ant-wrong' }),
          cwd: worktree.dir,
        }),
      );

      expect(error.code).toBe('auth');
    });
  });
