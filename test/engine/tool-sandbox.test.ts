/**
 * The agent's Bash under `[bash] sandbox` (bubblewrap): nothing outside the worktree and a
 * private /tmp is writable, so a command cannot reach the user's checkout (`cd ..`, absolute
 * paths, `git -C`), the shared dependency folders are read-only, and timeouts still kill every
 * process the command started. Needs bwrap (`.ci/run` installs it): these tests fail, not skip,
 * without it. The attacks a model would try are in `test/security/`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeTool } from '../../src/agent/tools/agent-tool.js';
import { bashTool } from '../../src/agent/tools/bash-tool.js';
import { createFileGuard } from '../../src/agent/file-guard.js';
import { loadConfig } from '../../src/config/load.js';
import { isRatchetError } from '../../src/core/errors.js';
import { requireSandbox, toolSandbox, type ToolSandbox } from '../../src/engine/tool-sandbox.js';
import { shareDependencies } from '../../src/engine/worktree-setup.js';
import { createProcessRunner } from '../../src/process/runner.js';
import type { ProcessRunner } from '../../src/process/types.js';
import { OPEN_POLICY } from '../agent/agent-fixtures.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { toolchain } from '../support/toolchains.js';

let repo: TempRepo;
let worktree: string;

beforeEach(async () => {
  repo = await createTempRepo({ files: { 'README.md': '# mine\n', '.gitignore': 'node_modules/\n' } });
  await mkdir(join(repo.dir, 'node_modules', 'dep'), { recursive: true });
  await writeFile(join(repo.dir, 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
  worktree = repo.path('home', 'worktrees', 'run-1');
  await repo.git.addWorktree(worktree, 'ratchet/run-1', await repo.git.head());
  await shareDependencies(repo.dir, worktree, repo.git);
});

afterEach(async () => {
  await repo.cleanup();
});

async function sandboxed(sandbox: 'auto' | 'required' | 'off' = 'required'): Promise<ToolSandbox> {
  const config = await loadConfig({ repoRoot: repo.dir, env: { RATCHET_HOME: repo.path('home') } });
  return toolSandbox({ ...config, bash: { ...config.bash, sandbox } }, createProcessRunner(), {
    protect: [repo.dir],
    worktree,
    dependenciesOf: repo.dir,
    runId: 'run-1',
  });
}

async function bash(runner: ProcessRunner, command: string, timeout?: number) {
  return executeTool(
    bashTool,
    { command, ...(timeout ? { timeout } : {}) },
    { guard: createFileGuard(worktree, OPEN_POLICY), runner, bashTimeoutMs: 30_000 },
  );
}

/** All but the refusal without bubblewrap need it. */
const bwrap = toolchain('bwrap');

describe('the tool sandbox', () => {
  it.skipIf(bwrap.missing)(`is there: bubblewrap runs on this machine${bwrap.note}`, () => {
    expect(
      spawnSync('bwrap', ['--ro-bind', '/', '/', '--', '/bin/true']).status,
      'bwrap must be installed (.ci/run installs bubblewrap)',
    ).toBe(0);
  });

  it.skipIf(bwrap.missing)(
    `keeps the user\`s checkout read-only, whatever the command tries${bwrap.note}`,
    async () => {
      const { runner, start } = await sandboxed();
      expect(start).toMatchObject({ mode: 'bubblewrap', network: 'off' });
      const attempts = [
        'cd "$(git rev-parse --git-common-dir)/.." && echo pwned >> README.md',
        `echo pwned >> ${join(repo.dir, 'README.md')}`,
        `git -C ${repo.dir} checkout -q -b hijacked`,
        `touch ${repo.path('home', 'other-run.txt')}`,
        // Git metadata: redirected or rewritten, the orchestrator's own git (outside the sandbox)
        // would commit onto the user's branch, run another repository's hooks, or read forged objects.
        'echo "gitdir: /tmp/elsewhere" > .git',
        'echo "ref: refs/heads/main" > "$(git rev-parse --absolute-git-dir)/HEAD"',
        'echo /tmp/elsewhere > "$(git rev-parse --absolute-git-dir)/commondir"',
        'touch "$(git rev-parse --git-common-dir)/objects/forged"',
        'git update-ref refs/heads/ratchet/other HEAD',
        // Another process's root, seen through /proc, is the unsandboxed file system.
        `for p in /proc/[0-9]*; do echo pwned >> "$p/root${join(repo.dir, 'README.md')}" && exit 0; done; exit 1`,
        // ~/.cache holds programs too (tool installs, maybe the Node.js running Ratchet): only its
        // build caches are writable, not the rest of it.
        `touch ${join(homedir(), '.cache', 'ratchet-sandbox-probe')}`,
      ];
      for (const command of attempts) {
        const result = await bash(runner, command);
        expect(result.isError, command).toBe(true);
        expect(result.output, command).toMatch(
          /Read-only file system|cannot lock ref|unable to create|Permission denied|not a git repository|No such file/,
        );
      }
      expect(await readFile(join(repo.dir, 'README.md'), 'utf8')).toBe('# mine\n');
      expect(repo.run('branch', '--list', 'hijacked')).toBe('');
      expect(existsSync(join(homedir(), '.cache', 'ratchet-sandbox-probe'))).toBe(false);
    },
  );

  it.skipIf(bwrap.missing)(
    `lets the command work in the worktree and its private /tmp, and read the shared dependencies${bwrap.note}`,
    async () => {
      const { runner } = await sandboxed();
      const result = await bash(
        runner,
        'echo made > made.txt && cat made.txt && t=$(mktemp) && echo ok > "$t" && rm "$t" && cat node_modules/dep/index.js && git status --porcelain',
      );
      expect(result.isError, result.output).toBe(false);
      expect(result.output).toContain('made');
      expect(result.output).toContain('module.exports = 1;');
      expect(await readFile(join(worktree, 'made.txt'), 'utf8')).toBe('made\n');
      // The dependencies are read-only: code planted there would run on the host later.
      const planted = await bash(runner, 'mkdir -p node_modules/.cache && echo c > node_modules/.cache/x');
      expect(planted.isError).toBe(true);
      expect(planted.output).toMatch(/Read-only file system/);
      expect(existsSync(join(repo.dir, 'node_modules', '.cache'))).toBe(false);
      // git in the worktree reads (status, diff, log) but cannot commit: the orchestrator commits.
      const reading = await bash(runner, 'git status --porcelain && git diff --stat && git log -1 --format=%s');
      expect(reading.isError, reading.output).toBe(false);
      const committing = await bash(
        runner,
        'git add made.txt && git -c user.name=a -c user.email=a@b commit -q -m made',
      );
      expect(committing.isError).toBe(true);
      expect(repo.run('log', '-1', '--format=%s', 'ratchet/run-1')).not.toBe('made');
    },
  );

  it.skipIf(bwrap.missing)(
    `shows each sandbox the repository's git configuration as it is when the sandbox opens${bwrap.note}`,
    async () => {
      repo.run('config', 'core.abbrev', '12');
      repo.run('config', 'remote.origin.url', 'https://user:s3cret-token@example.com/x.git');
      const first = await sandboxed();
      const seen = await bash(first.runner, 'git config --get core.abbrev && git config --get remote.origin.url');
      await first[Symbol.asyncDispose]();
      expect(seen.output).toMatch(/^12\n/);
      expect(seen.output).toContain('https://example.com/x.git');
      expect(seen.output).not.toContain('s3cret-token');
      // A changed configuration is listed anew (listings are kept by the text they list).
      repo.run('config', 'core.abbrev', '9');
      const second = await sandboxed();
      const again = await bash(second.runner, 'git config --get core.abbrev');
      await second[Symbol.asyncDispose]();
      expect(again.output).toMatch(/^9\n/);
    },
  );

  it.skipIf(bwrap.missing)(`still kills everything a command started at its timeout${bwrap.note}`, async () => {
    const { runner } = await sandboxed();
    const started = Date.now();
    const result = await bash(runner, 'sleep 30 & sleep 30', 500);
    expect(result.isError).toBe(true);
    expect(result.output).toContain('timed out after 500 ms');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('is the plain runner when off, and refuses to start without a working sandbox unless off', async () => {
    const off = await sandboxed('off');
    expect(off.start).toEqual({ mode: 'off', optOut: 'config', network: 'on' });
    const escaped = await bash(off.runner, `echo changed >> ${join(repo.dir, 'README.md')}`);
    expect(escaped.isError).toBe(false);
    expect(await readFile(join(repo.dir, 'README.md'), 'utf8')).toBe('# mine\nchanged\n');

    const config = await loadConfig({ repoRoot: repo.dir, env: { RATCHET_HOME: repo.path('home') } });
    const noBwrap: ProcessRunner = {
      run: (spec) =>
        createProcessRunner().run({ ...spec, command: spec.command === 'bwrap' ? '/nonexistent/bwrap' : spec.command }),
    };
    for (const mode of ['auto', 'required'] as const) {
      for (const provider of ['anthropic', 'claude-code'] as const) {
        const settings = {
          ...config,
          provider: { ...config.provider, name: provider },
          bash: { ...config.bash, sandbox: mode },
        };
        const error: unknown = await requireSandbox(settings, noBwrap).catch((caught: unknown) => caught);
        expect(isRatchetError(error, 'config'), `${mode} ${provider}`).toBe(true);
        expect(String((error as Error).message)).toMatch(/cannot work here/);
        expect(isRatchetError(error) ? error.hint : '').toMatch(/apt-get install bubblewrap.*--no-sandbox/);
        const made: unknown = await toolSandbox(settings, noBwrap, {
          protect: [repo.dir],
          worktree,
          dependenciesOf: repo.dir,
          runId: 'run-1',
        }).catch((caught: unknown) => caught);
        expect(isRatchetError(made, 'config')).toBe(true);
      }
    }
    await expect(
      requireSandbox({ ...config, bash: { ...config.bash, sandbox: 'off' } }, noBwrap),
    ).resolves.toBeUndefined();
  });

  it.skipIf(bwrap.missing)(
    `runs the Claude Code CLI itself in the sandbox: \`required\` accepts the provider${bwrap.note}`,
    async () => {
      const config = await loadConfig({ repoRoot: repo.dir, env: { RATCHET_HOME: repo.path('home') } });
      const claudeCode = { ...config, provider: { ...config.provider, name: 'claude-code' as const } };
      await expect(
        requireSandbox({ ...claudeCode, bash: { ...config.bash, sandbox: 'required' } }, createProcessRunner()),
      ).resolves.toBeUndefined();
      for (const sandbox of ['auto', 'required'] as const) {
        const result = await toolSandbox({ ...claudeCode, bash: { ...config.bash, sandbox } }, createProcessRunner(), {
          protect: [repo.dir],
          worktree,
          dependenciesOf: repo.dir,
          runId: 'run-1',
        });
        expect(result).toMatchObject({ sandboxed: true, start: { mode: 'bubblewrap' } });
        // The CLI's process (here a shell standing in for it) sees the file system as the agent's
        // Bash does, and has no network (only a loopback interface of its own).
        const env = { HOME: repo.path('home'), PATH: process.env.PATH, ANTHROPIC_API_KEY: 'sk-ant-test-sandbox' };
        const escaped = await result.claudeRunner.run({
          command: `echo pwned >> ${join(repo.dir, 'README.md')}`,
          cwd: worktree,
          env,
          extendEnv: false,
        });
        expect(escaped.exitCode).not.toBe(0);
        expect(escaped.output).toMatch(/Read-only file system|No such file/);
        const inside = await result.claudeRunner.run({
          command: 'echo made > made.txt',
          cwd: worktree,
          env,
          extendEnv: false,
        });
        expect(inside.exitCode, inside.output).toBe(0);
        const network = await result.claudeRunner.run({
          command: 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "',
          cwd: worktree,
          env,
          extendEnv: false,
        });
        expect(network.stdout.trim()).toBe('lo');
      }
      expect(await readFile(join(repo.dir, 'README.md'), 'utf8')).toBe('# mine\n');
      expect(await readFile(join(worktree, 'made.txt'), 'utf8')).toBe('made\n');
      const off = await toolSandbox(
        { ...claudeCode, bash: { ...config.bash, sandbox: 'off' } },
        createProcessRunner(),
        {
          protect: [repo.dir],
          worktree,
          dependenciesOf: repo.dir,
          runId: 'run-1',
        },
      );
      expect(off).toMatchObject({ sandboxed: false, start: { mode: 'off' } });
    },
  );
});
