/**
 * The claude-code runtime against a small fake `claude` executable (test/support/fake-claude.ts)
 * for what the real CLI cannot be made to do on demand: print garbage, hang, or be missing; and
 * to see the exact command line and stdin the runtime hands over.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { checkClaudeAuth, checkClaudeCode } from '../../src/agent/claude-code-runtime.js';
import { promptFileName } from '../../src/agent/claude-code/prompt-file.js';
import { toJsonSchema } from '../../src/agent/tools/agent-tool.js';
import type { EventInput } from '../../src/core/events.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { createTempWorktree, type TempWorktree } from './agent-fixtures.js';
import { modelCallsOf, rejection, runtimeFactory, stageRequestFactory } from './claude-code-fixtures.js';

const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.ts', import.meta.url));

let worktree: TempWorktree;

beforeAll(async () => {
  worktree = await createTempWorktree({ 'README.md': '# demo\n' });
});

afterAll(async () => {
  await worktree.cleanup();
});

/** Per test: its own invocation log and prompt folder, so the tests can run concurrently. */
function harness(mode: string, extraEnv: Record<string, string> = {}) {
  const id = randomUUID();
  const log = join(worktree.root, `calls-${id}.ndjson`);
  const promptDir = join(worktree.root, `prompts-${id}`);
  const events: EventInput[] = [];
  const uuids: string[] = [];
  const env = {
    PATH: process.env.PATH,
    HOME: worktree.root,
    FAKE_CLAUDE_MODE: mode,
    FAKE_CLAUDE_LOG: log,
    ...extraEnv,
  };
  const runtime = runtimeFactory({ binary: FAKE_CLAUDE, env, promptDir, timeoutMs: 30_000, uuids });
  const stageRequest = stageRequestFactory(
    {
      stage: 'PATCHER',
      worktree: worktree.dir,
      systemPrompt: 'Stage: PATCHER\nWrite one patch.',
      prompt: '-- a prompt that starts like an option --',
      maxTurns: 8,
    },
    events,
  );
  const calls = async () => {
    const text = await readFile(log, 'utf8');
    const callSchema = z.object({
      argv: z.array(z.string()),
      stdin: z.string(),
      cwd: z.string(),
      env: z.record(z.string(), z.string()),
    });
    return text
      .trim()
      .split('\n')
      .map((line) => callSchema.parse(JSON.parse(line)));
  };
  const modelCalls = () => modelCallsOf(events);
  return { env, promptDir, events, uuids, runtime, stageRequest, calls, modelCalls };
}

function flagValue(argv: readonly string[], flag: string): string | undefined {
  const index = argv.indexOf(flag);
  return index === -1 ? undefined : argv[index + 1];
}

/** Alive = signal 0 gets through and the process is not a zombie waiting to be reaped. */
async function isAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
}

const patchSchema = z.object({ status: z.enum(['ok', 'noop']), patch: z.string() });

describe.concurrent('createClaudeCodeRuntime with a fake claude executable', () => {
  it('passes one headless call per stage: flags, fresh session ids, the prompt on stdin, the worktree as cwd', async () => {
    const { runtime, stageRequest, calls, uuids, promptDir } = harness('success', {
      FAKE_CLAUDE_OUTPUT: JSON.stringify({ status: 'ok', patch: 'diff' }),
    });
    const agent = runtime({ model: 'claude-opus-4-5', tools: 'Read,Grep,Glob', baseUrl: 'http://127.0.0.1:9/v1/' });

    const first = await agent.runStage(stageRequest({ outputSchema: patchSchema }));
    const second = await agent.runStage(stageRequest({ outputSchema: patchSchema }));

    expect(first).toMatchObject({
      status: 'completed',
      output: { status: 'ok', patch: 'diff' },
      turns: 1,
      costUsd: 0.0021,
    });
    expect(second.status).toBe('completed');
    const [call, again] = await calls();
    const argv = call?.argv ?? [];
    const promptFile = join(promptDir, promptFileName('PATCHER', 'Stage: PATCHER\nWrite one patch.'));
    expect(argv).toEqual([
      '-p',
      '--output-format',
      'json',
      '--json-schema',
      JSON.stringify(toJsonSchema(patchSchema)),
      '--system-prompt-file',
      promptFile,
      '--tools',
      'Read,Grep,Glob',
      '--allowedTools',
      'Read,Edit,Bash,Grep,Glob',
      '--restricted',
      '--max-turns',
      '8',
      '--session-id',
      uuids[0],
      '--model',
      'claude-opus-4-5',
    ]);
    expect(call?.stdin).toBe('-- a prompt that starts like an option --');
    expect(call?.cwd).toBe(worktree.dir);
    // --base-url reaches the CLI as ANTHROPIC_BASE_URL, without /v1 (the CLI adds it).
    expect(call?.env.ANTHROPIC_BASE_URL).toBe('http://127.0.0.1:9');
    expect(argv).not.toContain('--continue');
    expect(argv).not.toContain('--resume');
    // A fresh session id per call; the same (content-addressed) prompt file.
    expect(uuids).toHaveLength(2);
    expect(flagValue(again?.argv ?? [], '--session-id')).toBe(uuids[1]);
    expect(uuids[1]).not.toBe(uuids[0]);
    expect(flagValue(again?.argv ?? [], '--system-prompt-file')).toBe(promptFile);
  });

  it("passes the stage's Bash timeout as BASH_DEFAULT_TIMEOUT_MS and BASH_MAX_TIMEOUT_MS, and no background Bash", async () => {
    const { runtime, stageRequest, calls } = harness('success', {
      BASH_DEFAULT_TIMEOUT_MS: '999999',
      ANTHROPIC_API_KEY: 'sk-ant-fake-cli-key',
    });
    const agent = runtime();

    await agent.runStage(stageRequest({ bashTimeoutMs: 45_000 }));
    await agent.runStage(stageRequest({ bashTimeoutMs: 2_500 }));

    const [first, second] = await calls();
    expect(first?.env).toMatchObject({
      BASH_DEFAULT_TIMEOUT_MS: '45000',
      BASH_MAX_TIMEOUT_MS: '45000',
      CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: '1',
    });
    expect(second?.env).toMatchObject({ BASH_DEFAULT_TIMEOUT_MS: '2500', BASH_MAX_TIMEOUT_MS: '2500' });
    // The rest of the environment is the one given, and nothing else is inherited.
    expect(first?.env).toMatchObject({ FAKE_CLAUDE_MODE: 'success', HOME: worktree.root, ANTHROPIC_API_KEY: '[set]' });
    const inherited = (name: string): boolean => process.env[name] !== undefined && !['PATH', 'HOME'].includes(name);
    expect(Object.keys(first?.env ?? {}).filter(inherited)).toEqual([]);
  });

  it('versions system prompts by content: one file per stage and prompt text', async () => {
    const { runtime, stageRequest, promptDir } = harness('success');
    const agent = runtime();

    await agent.runStage(stageRequest({ systemPrompt: 'Stage: PATCHER\nv1' }));
    await agent.runStage(stageRequest({ systemPrompt: 'Stage: PATCHER\nv1' }));
    await agent.runStage(stageRequest({ systemPrompt: 'Stage: PATCHER\nv2' }));
    await agent.runStage(stageRequest({ stage: 'CRITIC', systemPrompt: 'Stage: PATCHER\nv1' }));

    const files = (await readdir(promptDir)).sort();
    expect(files).toHaveLength(3);
    expect(files.every((file) => /^(patcher|critic)-[0-9a-f]{12}\.txt$/.test(file))).toBe(true);
    expect(await readFile(join(promptDir, promptFileName('PATCHER', 'Stage: PATCHER\nv2')), 'utf8')).toBe(
      'Stage: PATCHER\nv2',
    );
  });

  it('leaves out --json-schema and --model when not asked for', async () => {
    const { runtime, stageRequest, calls, modelCalls } = harness('success');

    const outcome = await runtime().runStage(stageRequest());

    expect(outcome).toMatchObject({ status: 'completed', finalText: 'done', output: undefined });
    const argv = (await calls())[0]?.argv ?? [];
    expect(argv).not.toContain('--json-schema');
    expect(argv).not.toContain('--model');
    expect(modelCalls()[0]?.model).toBe('claude-fake-1');
  });

  it('maps non-JSON output to a provider error quoting its start', async () => {
    const { runtime, stageRequest, modelCalls } = harness('garbage');

    const error = await rejection(runtime().runStage(stageRequest()));

    expect(error.code).toBe('provider');
    expect(error.message).toContain('<html><head><title>502 Bad Gateway</title>');
    expect(modelCalls()[0]).toMatchObject({ response: null, error: { code: 'provider' } });
  });

  it('maps a CLI that prints only to stderr to a provider error quoting stderr', async () => {
    const { runtime, stageRequest } = harness('stderr');

    const error = await rejection(runtime().runStage(stageRequest()));

    expect(error.code).toBe('provider');
    expect(error.message).toContain("unknown option '--frobnicate'");
  });

  it('maps error_during_execution to a provider error, still recording the call and its cost', async () => {
    const { runtime, stageRequest, modelCalls } = harness('during-execution');

    const error = await rejection(runtime().runStage(stageRequest()));

    expect(error.code).toBe('provider');
    expect(error.message).toContain('Tool execution crashed');
    expect(modelCalls()[0]).toMatchObject({
      error: { code: 'provider' },
      response: { costUsd: 0.0021, finishReason: 'other' },
    });
  });

  it('maps "Not logged in" to an auth error with the /login instructions', async () => {
    const { runtime, stageRequest, env } = harness('not-logged-in');

    const error = await rejection(runtime().runStage(stageRequest()));
    expect(error.code).toBe('auth');
    expect(error.hint).toContain('/login');
    expect(error.hint).toContain('ANTHROPIC_API_KEY');

    const check = await rejection(checkClaudeAuth({ binary: FAKE_CLAUDE, runner: createProcessRunner(), env }));
    expect(check.code).toBe('auth');
    expect(check.hint).toContain('/login');
  });

  it('kills a hanging CLI and its whole process group on timeout', async () => {
    const pidFile = join(worktree.root, `pids-${randomUUID()}.json`);
    const { runtime, stageRequest, modelCalls } = harness('hang', { FAKE_CLAUDE_PID_FILE: pidFile });

    const error = await rejection(runtime({ timeoutMs: 4_000 }).runStage(stageRequest()));

    expect(error.code).toBe('timeout');
    expect(error.message).toContain('process group was killed');
    expect(modelCalls()[0]).toMatchObject({ response: null, error: { code: 'timeout' } });
    const pids = z.object({ pid: z.number(), child: z.number() }).parse(JSON.parse(await readFile(pidFile, 'utf8')));
    await vi.waitFor(
      async () => {
        expect(await isAlive(pids.pid)).toBe(false);
        expect(await isAlive(pids.child)).toBe(false);
      },
      { timeout: 10_000 },
    );
  });

  it('stops a running CLI when the stage is aborted', async () => {
    const pidFile = join(worktree.root, `pids-${randomUUID()}.json`);
    const { runtime, stageRequest } = harness('hang', { FAKE_CLAUDE_PID_FILE: pidFile });
    const controller = new AbortController();

    const running = runtime().runStage(stageRequest({ signal: controller.signal }));
    const pids = await vi.waitFor(
      async () => z.object({ pid: z.number(), child: z.number() }).parse(JSON.parse(await readFile(pidFile, 'utf8'))),
      { timeout: 30_000, interval: 100 },
    );
    expect(await isAlive(pids.pid)).toBe(true);
    controller.abort();

    expect((await rejection(running)).code).toBe('interrupted');
    // The CLI and the `sleep 600` it started are gone, not left running behind the rejection.
    await vi.waitFor(
      async () => {
        expect(await isAlive(pids.pid)).toBe(false);
        expect(await isAlive(pids.child)).toBe(false);
      },
      { timeout: 10_000 },
    );
  });

  it('maps a missing executable to a config error with the install command', async () => {
    const { runtime, stageRequest, env } = harness('success');
    const missing = join(worktree.root, 'no-such-claude');

    const error = await rejection(runtime({ binary: missing }).runStage(stageRequest()));
    expect(error.code).toBe('config');
    expect(error.hint).toContain('npm install -g @anthropic-ai/claude-code');

    const check = await rejection(checkClaudeCode({ binary: missing, runner: createProcessRunner(), env }));
    expect(check.code).toBe('config');
    expect(check.hint).toContain('npm install -g @anthropic-ai/claude-code');
  });
});

describe.concurrent('Claude Code checks with a fake claude executable', () => {
  it('reads the version printed by `claude -v`', async () => {
    const { env } = harness('success');

    await expect(checkClaudeCode({ binary: FAKE_CLAUDE, runner: createProcessRunner(), env })).resolves.toEqual({
      version: '2.1.330',
    });
  });

  it('rejects a `-v` answer that is not a Claude Code version', async () => {
    const { env } = harness('garbage');

    const error = await rejection(checkClaudeCode({ binary: FAKE_CLAUDE, runner: createProcessRunner(), env }));

    expect(error.code).toBe('config');
    expect(error.message).toContain('502 Bad Gateway');
  });

  it('passes the authentication check with the query of seed 002', async () => {
    const { env, calls } = harness('success');

    await expect(checkClaudeAuth({ binary: FAKE_CLAUDE, runner: createProcessRunner(), env })).resolves.toEqual({
      result: 'done',
      costUsd: 0.0021,
    });
    // No tools at all, in an empty directory made for it and removed afterwards.
    const [call] = await calls();
    expect(call?.argv).toEqual(['-p', 'Respond with OK', '--output-format', 'json', '--tools', '', '--restricted']);
    expect(call?.cwd).toMatch(/ratchet-claude-check-/);
    expect(existsSync(call?.cwd ?? '/')).toBe(false);
  });

  it('asks the endpoint the runs will use: --base-url reaches the check as ANTHROPIC_BASE_URL, without /v1', async () => {
    const { env, calls } = harness('success', { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/from-the-environment' });

    await checkClaudeAuth({
      binary: FAKE_CLAUDE,
      runner: createProcessRunner(),
      env,
      baseUrl: 'http://127.0.0.1:4711/v1/',
    });
    await checkClaudeAuth({ binary: FAKE_CLAUDE, runner: createProcessRunner(), env });

    expect((await calls()).map((call) => call.env.ANTHROPIC_BASE_URL)).toEqual([
      'http://127.0.0.1:4711',
      'http://127.0.0.1:9/from-the-environment',
    ]);
  });

  it('maps an empty executable path (a blank claude.binary) to a config error, for the checks and the runtime', async () => {
    const { env, runtime, stageRequest } = harness('success');

    // One at a time: a rejection made before its turn to be awaited would go unhandled meanwhile.
    for (const check of [
      () => checkClaudeCode({ binary: '', runner: createProcessRunner(), env }),
      () => checkClaudeAuth({ binary: ' ', runner: createProcessRunner(), env }),
      () => runtime({ binary: '' }).runStage(stageRequest()),
    ]) {
      const error = await rejection(check());
      expect(error.code).toBe('config');
      expect(error.message).toContain('empty');
      expect(error.hint).toContain('binary');
    }
  });
});
