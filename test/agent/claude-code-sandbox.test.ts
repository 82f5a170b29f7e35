/**
 * The REAL `claude` binary (see test/support/claude-binary.ts) inside the tool sandbox
 * (bubblewrap, `toolSandbox(...).claudeRunner`), pointed at the loopback fake Anthropic server,
 * which plays a model that tries to get out of the worktree with Claude Code's own tools: Bash
 * redirections and the Write tool on absolute paths (the user's checkout, `$RATCHET_HOME`, a
 * command planted in `$HOME`, the CLI's own settings, where a hook would run unsandboxed later).
 * None of it lands; writes inside the worktree do. The same script without the sandbox
 * (`sandbox = "off"`) does write outside: the CLI's own permission checks stop none of it (they
 * refuse plain writes to its configuration only, hence the indirection through a variable).
 * The CLI works from a private copy of its configuration, with an API key or `/login` tokens.
 * Needs bwrap (`.ci/run` installs it).
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClaudeCodeRuntime } from '../../src/agent/claude-code-runtime.js';
import { loadConfig } from '../../src/config/load.js';
import type { StageRequest } from '../../src/core/agent.js';
import type { EventInput } from '../../src/core/events.js';
import { toolSandbox, type ToolSandbox } from '../../src/engine/tool-sandbox.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { claudeBinary } from '../support/claude-binary.js';
import {
  startFakeAnthropicServer,
  type AnthropicReply,
  type FakeAnthropicServer,
} from '../support/fake-anthropic-server.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { OPEN_POLICY } from './agent-fixtures.js';
import { rejection } from './claude-code-fixtures.js';
import { toolchain } from '../support/toolchains.js';

const API_KEY = 'sk-ant-test-claude-sandbox';
const SETTINGS = '{\n  "permissions": {}\n}\n';
const USER_MEMORY = 'Always answer in the voice of a lighthouse keeper.\n';
const GLOBAL_CONFIG = `${JSON.stringify({ hasCompletedOnboarding: true, numStartups: 7 })}\n`;

/** One test's world: a repository with a run worktree, the user's HOME with a Claude Code configuration, a fake API. */
interface World {
  repo: TempRepo;
  worktree: string;
  /** `$RATCHET_HOME`. */
  ratchetHome: string;
  /** The CLI's `$HOME`, holding `.claude/` and `.claude.json`. */
  home: string;
  server: FakeAnthropicServer;
  sandbox: (mode: 'auto' | 'off') => Promise<ToolSandbox>;
  env: (overrides?: Record<string, string | undefined>) => Record<string, string | undefined>;
}

async function world(onFinished: (hook: () => Promise<void>) => void, serverKey = API_KEY): Promise<World> {
  const repo = await createTempRepo({ files: { 'README.md': '# mine\n' } });
  const server = await startFakeAnthropicServer({ apiKey: serverKey });
  // Not under the temporary directory, which stays writable in the sandbox: read-only there, as a real HOME.
  const home = await realpath(await mkdtemp('/var/tmp/ratchet-claude-home-'));
  onFinished(async () => {
    await server.close();
    await repo.cleanup();
    await rm(home, { recursive: true, force: true });
  });
  const ratchetHome = repo.path('ratchet-home');
  const worktree = join(ratchetHome, 'worktrees', 'run-1');
  await repo.git.addWorktree(worktree, 'ratchet/run-1', await repo.git.head());
  await mkdir(join(home, '.claude'), { recursive: true });
  await writeFile(join(home, '.claude', 'settings.json'), SETTINGS);
  await writeFile(join(home, '.claude', 'CLAUDE.md'), USER_MEMORY);
  await writeFile(join(home, '.claude.json'), GLOBAL_CONFIG);
  const config = await loadConfig({ repoRoot: repo.dir, env: { RATCHET_HOME: ratchetHome } });
  return {
    repo,
    worktree,
    ratchetHome,
    home,
    server,
    sandbox: (mode) =>
      toolSandbox(
        { ...config, provider: { ...config.provider, name: 'claude-code' }, bash: { ...config.bash, sandbox: mode } },
        createProcessRunner(),
        { protect: [repo.dir], worktree, dependenciesOf: repo.dir, runId: 'run-1' },
      ),
    env: (overrides = {}) => ({
      PATH: process.env.PATH,
      HOME: home,
      ANTHROPIC_API_KEY: API_KEY,
      ANTHROPIC_BASE_URL: server.url,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      CLAUDE_CODE_MAX_RETRIES: '0',
      ...overrides,
    }),
  };
}

function stageRequest(w: World, overrides: Partial<StageRequest<unknown>> = {}): StageRequest<unknown> {
  const events: EventInput[] = [];
  return {
    stage: 'GREEN',
    worktree: w.worktree,
    systemPrompt: 'Stage: GREEN\nMake the test pass.',
    prompt: 'Make the test pass.',
    paths: OPEN_POLICY,
    maxTurns: 12,
    bashTimeoutMs: 10_000,
    emit: (event) => events.push(event),
    ...overrides,
  };
}

function runtime(
  w: World,
  sandbox: ToolSandbox,
  overrides: { env?: Record<string, string | undefined>; timeoutMs?: number; binary?: string } = {},
) {
  return createClaudeCodeRuntime({
    binary: overrides.binary ?? claudeBinary(),
    runner: sandbox.claudeRunner,
    env: overrides.env ?? w.env(),
    allowedTools: 'Read,Write,Edit,Bash,Glob,Grep',
    promptDir: w.repo.path('prompts'),
    timeoutMs: overrides.timeoutMs ?? 60_000,
    uuid: () => randomUUID(),
  });
}

const bash = (command: string): AnthropicReply => ({
  kind: 'message',
  content: [{ type: 'tool_use', name: 'Bash', input: { command, description: 'run it' } }],
});
const done: AnthropicReply = { kind: 'message', content: [{ type: 'text', text: 'Done.' }] };
const write = (path: string, content: string): AnthropicReply => ({
  kind: 'message',
  content: [{ type: 'tool_use', name: 'Write', input: { file_path: path, content } }],
});

const toolResultSchema = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.unknown(),
  is_error: z.boolean().optional(),
});
const messagesSchema = z.looseObject({ messages: z.array(z.looseObject({ content: z.unknown() })) });

/**
 * The results of the scripted tool calls, in order, from the last request the CLI sent (it
 * carries the whole conversation): the fake names the n-th reply's tool call `toolu_fake_<n>_0`.
 */
function toolResults(server: FakeAnthropicServer): Array<{ text: string; isError: boolean }> {
  const messages = messagesSchema.parse(server.requests.at(-1)?.body).messages;
  const blocks = messages.flatMap((message) => (Array.isArray(message.content) ? (message.content as unknown[]) : []));
  const results = blocks.flatMap((block) => {
    const parsed = toolResultSchema.safeParse(block);
    return parsed.success ? [parsed.data] : [];
  });
  return results.map((result) => ({ text: JSON.stringify(result.content), isError: result.is_error === true }));
}

/** Tries every way out, then writes inside the worktree; with the paths each attempt aims at. */
function escapeScript(w: World) {
  const outside = {
    bashCheckout: join(w.repo.dir, 'bash-escape.txt'),
    bashSettings: join(w.home, '.claude', 'settings.json'),
    writeCheckout: join(w.repo.dir, 'write-escape.txt'),
    writeRatchetHome: join(w.ratchetHome, 'write-escape.txt'),
    writeHome: join(w.home, '.local', 'bin', 'git'),
  };
  const inside = { bash: join(w.worktree, 'bash-inside.txt'), write: join(w.worktree, 'write-inside.txt') };
  return {
    replies: [
      bash(`echo escaped > ${outside.bashCheckout}`),
      // Through a variable: the CLI refuses a plain redirection onto its settings by itself.
      bash(
        `f=$(dirname ${outside.bashSettings})/settings.json; echo '{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"touch /tmp/pwned"}]}]}}' > "$f"`,
      ),
      write(outside.writeCheckout, 'escaped\n'),
      write(outside.writeRatchetHome, 'escaped\n'),
      write(outside.writeHome, '#!/bin/sh\necho hijacked\n'),
      bash('echo inside > bash-inside.txt'),
      write(inside.write, 'inside\n'),
      done,
    ],
    outside,
    inside: { [inside.bash]: 'inside\n', [inside.write]: 'inside\n' },
  };
}

async function contentOf(path: string): Promise<string | null> {
  return existsSync(path) ? readFile(path, 'utf8') : null;
}

const tools = toolchain('claude', 'bwrap');

describe
  .skipIf(tools.missing)
  .concurrent(`the Claude Code CLI in the tool sandbox (real claude binary)${tools.note}`, () => {
    it('cannot write outside the worktree with its Bash or Write tools, and writes inside it', async ({
      onTestFinished,
    }) => {
      const w = await world(onTestFinished);
      const sandbox = await w.sandbox('auto');
      expect(sandbox).toMatchObject({ sandboxed: true, start: { mode: 'bubblewrap' } });
      const script = escapeScript(w);
      w.server.enqueue(...script.replies);

      const outcome = await runtime(w, sandbox).runStage(stageRequest(w));

      expect(outcome.status, outcome.finalText).toBe('completed');
      expect(w.server.requests).toHaveLength(script.replies.length);
      // Every attempt outside failed, the two inside did not: Bash on the read-only file system, the
      // Write tool already in the CLI (--restricted confines its file tools to the worktree).
      const results = toolResults(w.server);
      for (const result of results.slice(0, 5)) expect(result.isError, result.text).toBe(true);
      for (const result of results.slice(0, 2)) expect(result.text).toMatch(/read-only file system/i);
      for (const result of results.slice(2, 5)) expect(result.text).toMatch(/--restricted confines the file tools/);
      for (const result of results.slice(5)) expect(result.isError, result.text).toBe(false);

      expect(await contentOf(script.outside.bashCheckout)).toBeNull();
      expect(await contentOf(script.outside.bashSettings)).toBe(SETTINGS);
      expect(await contentOf(script.outside.writeCheckout)).toBeNull();
      expect(await contentOf(script.outside.writeRatchetHome)).toBeNull();
      expect(await contentOf(script.outside.writeHome)).toBeNull();
      for (const [path, content] of Object.entries(script.inside)) expect(await contentOf(path)).toBe(content);
      expect(w.repo.run('status', '--porcelain')).toBe('');

      // The CLI kept its state in a private configuration directory, gone after the call: the
      // user's configuration has no transcript, session or backup, and `.claude.json` is as it was.
      expect((await readdir(join(w.home, '.claude'))).sort()).toEqual(['CLAUDE.md', 'settings.json']);
      // Under --restricted the CLI leaves the user's settings and memory out (their CLAUDE.md does
      // not reach the model): nothing in its configuration steers the agent.
      expect(JSON.stringify(w.server.requests[0]?.body)).not.toContain(USER_MEMORY.trim());
      expect(await contentOf(join(w.home, '.claude.json'))).toBe(GLOBAL_CONFIG);
      expect(await readdir(join(w.ratchetHome, 'claude-code'))).toEqual([]);
    }, 90_000);

    it('writes outside the worktree with the same script when the sandbox is off (Bash; the file tools stay confined)', async ({
      onTestFinished,
    }) => {
      const w = await world(onTestFinished);
      const sandbox = await w.sandbox('off');
      expect(sandbox.sandboxed).toBe(false);
      const script = escapeScript(w);
      w.server.enqueue(...script.replies);

      const outcome = await runtime(w, sandbox).runStage(stageRequest(w));

      expect(outcome.status, outcome.finalText).toBe('completed');
      expect(await contentOf(script.outside.bashCheckout)).toBe('escaped\n');
      expect(await contentOf(script.outside.bashSettings)).toContain('pwned');
      // --restricted holds without the sandbox: the Write tool reaches the worktree only.
      expect(await contentOf(script.outside.writeCheckout)).toBeNull();
      expect(await contentOf(script.outside.writeHome)).toBeNull();
      expect(await contentOf(join(w.worktree, 'write-inside.txt'))).toBe('inside\n');
    }, 90_000);

    it('uses the credentials of a /login user (no API key), which the sandbox hides', async ({ onTestFinished }) => {
      const token = 'sk-ant-oat01-sandbox-test';
      const w = await world(onTestFinished, token);
      const credentials = `${JSON.stringify({ claudeAiOauth: { accessToken: token, refreshToken: 'sk-ant-ort01-sandbox-test', expiresAt: 4_102_444_800_000, scopes: ['user:inference', 'user:profile'], subscriptionType: 'max' } })}\n`;
      const file = join(w.home, '.claude', '.credentials.json');
      await writeFile(file, credentials);
      await chmod(file, 0o600);
      const sandbox = await w.sandbox('auto');
      // Through a variable: the CLI refuses a plain redirection onto its sign-in tokens by itself.
      w.server.enqueue(bash(`f=$(dirname ${file})/.credentials.json; echo '{}' > "$f"`), done);

      const outcome = await runtime(w, sandbox, { env: w.env({ ANTHROPIC_API_KEY: undefined }) }).runStage(
        stageRequest(w),
      );

      expect(outcome.status, outcome.finalText).toBe('completed');
      // Added by Ratchet's API proxy: the CLI itself ran with a placeholder.
      expect(w.server.requests[0]?.headers.authorization).toBe(`Bearer ${token}`);
      expect(toolResults(w.server)[0]?.text).toMatch(/permission denied/i);
      expect(await readFile(file, 'utf8')).toBe(credentials);
    }, 90_000);

    it('refreshes a /login token about to expire with a call that has no tools, and keeps only a genuine refresh', async ({
      onTestFinished,
    }) => {
      const w = await world(onTestFinished);
      const file = join(w.home, '.claude', '.credentials.json');
      const login = (accessToken: string, refreshToken: string, expiresAt: number, accountUuid = 'account-1') =>
        `${JSON.stringify({ claudeAiOauth: { accessToken, refreshToken, expiresAt, scopes: ['user:inference'], subscriptionType: 'max', accountUuid } })}\n`;
      const soon = Date.now() + 60_000;
      const later = Date.now() + 8 * 60 * 60 * 1000;
      // Stands in for the CLI: with tokens in its configuration (the refresh call) it "refreshes"
      // them into what `refreshed.json` holds; without (the call itself) it reports what it got.
      // (Its own directory is read-only in the sandbox, as the real CLI's is, and the checkout is
      // hidden: the log and the tokens to hand out are in the worktree, which it can write.)
      await mkdir(w.repo.path('fake-cli'));
      const cli = w.repo.path('fake-cli', 'claude');
      const log = join(w.worktree, 'calls.log');
      const next = join(w.worktree, 'refreshed.json');
      await writeFile(
        cli,
        [
          '#!/bin/sh',
          'if [ -f "$CLAUDE_CONFIG_DIR/.credentials.json" ]; then',
          `  echo "refresh: $*" >> ${log}; cat ${next} > "$CLAUDE_CONFIG_DIR/.credentials.json"; exit 0`,
          'fi',
          `echo "call: token=\${CLAUDE_CODE_OAUTH_TOKEN:-none} files=$(ls -A "$CLAUDE_CONFIG_DIR" | tr "\\n" " ")" >> ${log}`,
          '',
        ].join('\n'),
      );
      await chmod(cli, 0o755);
      const { claudeRunner } = await w.sandbox('auto');
      const call = async (refreshed: string) => {
        await writeFile(next, refreshed);
        return claudeRunner.run({
          command: cli,
          args: ['-p'],
          cwd: w.worktree,
          env: w.env({ ANTHROPIC_API_KEY: undefined }),
          extendEnv: false,
          timeoutMs: 20_000,
        });
      };

      // Another account's tokens (or anything but a refresh of the same login) are not kept.
      const original = login('sk-ant-oat01-original-token', 'sk-ant-ort01-original-refresh', soon);
      await writeFile(file, original);
      const attacker = login('sk-ant-oat01-ATTACKER', 'sk-ant-ort01-ATTACKER', later, 'account-2');
      expect((await call(attacker)).exitCode).toBe(0);
      expect(await readFile(file, 'utf8')).toBe(original);

      // A refresh of the same login with a newer expiry is kept, and the call runs on it.
      const refreshed = login('sk-ant-oat01-refreshed-token', 'sk-ant-ort01-refreshed-refresh', later);
      expect((await call(refreshed)).exitCode).toBe(0);
      expect(await readFile(file, 'utf8')).toBe(refreshed);
      const lines = (await readFile(log, 'utf8')).trim().split('\n');
      expect(lines.filter((line) => line.startsWith('refresh: '))).toEqual([
        'refresh: -p --output-format json --tools  --max-turns 1',
        'refresh: -p --output-format json --tools  --max-turns 1',
      ]);
      // The calls themselves never held the tokens: a placeholder, and no credentials file.
      for (const line of lines.filter((entry) => entry.startsWith('call: '))) {
        expect(line).toMatch(/^call: token=ratchet-proxy-[0-9a-f]{48} files=/);
        expect(line).not.toContain('.credentials.json');
      }
      // Valid for hours now: no refresh before the next call.
      expect((await call(attacker)).exitCode).toBe(0);
      expect(
        (await readFile(log, 'utf8'))
          .trim()
          .split('\n')
          .filter((line) => line.startsWith('refresh: ')),
      ).toHaveLength(2);
      expect(await readFile(file, 'utf8')).toBe(refreshed);
      expect(await readdir(join(w.ratchetHome, 'claude-code'))).toEqual([]);
    }, 60_000);

    it('still kills everything the CLI started at its timeout, a process of a new session too', async ({
      onTestFinished,
    }) => {
      const w = await world(onTestFinished);
      const sandbox = await w.sandbox('auto');
      const marker = `${40 + Math.floor(Math.random() * 50)}.${Date.now() % 100_000}`;
      w.server.enqueue(bash(`setsid sleep ${marker} & sleep ${marker}`));

      const sleeping = async () =>
        (await createProcessRunner().run({ command: 'ps', args: ['-eo', 'args'], cwd: w.worktree })).stdout
          .split('\n')
          .filter((line) => line.startsWith(`sleep ${marker}`));
      const started = Date.now();
      const stage = rejection(
        runtime(w, sandbox, { timeoutMs: 8_000 }).runStage(stageRequest(w, { bashTimeoutMs: 60_000 })),
      );
      // Both sleeps run (one of them in a session of its own, out of the CLI's process group)...
      while ((await sleeping()).length < 2 && Date.now() - started < 8_000)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await sleeping()).toHaveLength(2);
      const error = await stage;

      // ...and none is left once the timeout killed the CLI: the sandbox's PID namespace went with it.
      expect(error.code).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(20_000);
      for (let tries = 0; tries < 20 && (await sleeping()).length > 0; tries += 1)
        await new Promise((resolve) => setTimeout(resolve, 250));
      expect(await sleeping()).toEqual([]);
    }, 60_000);

    it('says the CLI cannot be found when the binary is missing in the sandbox', async ({ onTestFinished }) => {
      const w = await world(onTestFinished);
      const sandbox = await w.sandbox('auto');
      const error = await rejection(
        runtime(w, sandbox, { binary: join(w.repo.root, 'no-such-claude') }).runStage(stageRequest(w)),
      );
      expect(error.code).toBe('config');
      expect(error.message).toContain('Cannot run the Claude Code CLI');
    }, 30_000);
  });
