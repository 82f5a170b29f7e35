/**
 * The dependency folders shared into a run's worktree are put back as sharing made them before
 * every command of the run's runner: a `.venv` link replaced by a folder with its own `python`, a
 * workspace's folder of links with its `.bin/vitest` or a package link replaced, or an entry
 * added. An entry the worktree's commit tracks is never touched. Real git, real links.
 */
import { lstatSync, readFileSync, readlinkSync, readdirSync, existsSync } from 'node:fs';
import { chmod, mkdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { guardedRunner, guardSharedDependencies } from '../../src/engine/shared-dependencies-guard.js';
import { toolSandbox } from '../../src/engine/tool-sandbox.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { shareDependencies } from '../../src/engine/worktree-setup.js';
import type { ProcessRunner } from '../../src/process/types.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { toolchain } from '../support/toolchains.js';

const bwrap = toolchain('bwrap');

let repo: TempRepo;
let worktree: string;

async function files(base: string, entries: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(entries)) {
    await mkdir(dirname(join(base, path)), { recursive: true });
    await writeFile(join(base, path), text);
  }
}

/** What a model's Bash would do: a folder of its own where the shared entry was. */
async function plantRunner(dir: string, program: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await files(dir, { [program]: '#!/bin/sh\necho all tests pass\n' });
  await chmod(join(dir, program), 0o755);
}

async function setUp(tracked: Record<string, string>, workspace: boolean): Promise<void> {
  repo = await createTempRepo({
    files: { '.gitignore': 'node_modules\n.venv\n', 'packages/core/index.js': 'export {};\n', ...tracked },
  });
  await files(repo.dir, {
    'node_modules/dep/index.js': '',
    'node_modules/vitest/vitest.mjs': '',
    '.venv/bin/python': '#!/bin/sh\n',
  });
  await mkdir(join(repo.dir, 'node_modules', '.bin'));
  await symlink('../vitest/vitest.mjs', join(repo.dir, 'node_modules', '.bin', 'vitest'));
  if (workspace) await symlink('../packages/core', join(repo.dir, 'node_modules', 'core'));
  worktree = repo.path('home', 'worktrees', 'run-1');
  await repo.git.addWorktree(worktree, 'ratchet/run-1', await repo.git.head());
  await shareDependencies(repo.dir, worktree, repo.git);
}

afterEach(async () => {
  await repo.cleanup();
});

describe('guardSharedDependencies, shared as links', () => {
  beforeEach(async () => {
    await setUp({}, false);
  });

  it('leaves untouched entries alone', async () => {
    const guard = await guardSharedDependencies(repo.dir, worktree);
    expect(await guard.restore()).toEqual([]);
  });

  it('puts back a .venv replaced by a folder with its own python, and node_modules linked elsewhere', async () => {
    const guard = await guardSharedDependencies(repo.dir, worktree);
    await plantRunner(join(worktree, '.venv'), 'bin/python');
    await rm(join(worktree, 'node_modules'));
    await symlink(join(worktree, 'mine'), join(worktree, 'node_modules'));
    expect((await guard.restore()).sort()).toEqual(['.venv', 'node_modules']);
    expect(readlinkSync(join(worktree, '.venv'))).toBe(join(repo.dir, '.venv'));
    expect(readlinkSync(join(worktree, 'node_modules'))).toBe(join(repo.dir, 'node_modules'));
    // The checkout's folders were never followed into.
    expect(readFileSync(join(repo.dir, '.venv', 'bin', 'python'), 'utf8')).toBe('#!/bin/sh\n');
  });

  it('shares again an entry the model removed', async () => {
    const guard = await guardSharedDependencies(repo.dir, worktree);
    await rm(join(worktree, '.venv'));
    expect(await guard.restore()).toEqual(['.venv']);
    expect(readlinkSync(join(worktree, '.venv'))).toBe(join(repo.dir, '.venv'));
  });

  it('restores before each command of a guarded runner, and says so', async () => {
    const guard = await guardSharedDependencies(repo.dir, worktree);
    const seen: string[] = [];
    const inner: ProcessRunner = {
      run: async () => {
        seen.push(await readlink(join(worktree, '.venv')));
        return {
          exitCode: 0,
          signal: null,
          timedOut: false,
          aborted: false,
          stdout: '',
          stderr: '',
          output: '',
          truncated: false,
          durationMs: 0,
        };
      },
    };
    const notices: string[] = [];
    const runner = guardedRunner(inner, guard, (notice) => notices.push(notice));
    await plantRunner(join(worktree, '.venv'), 'bin/python');
    await runner.run({ command: 'true', cwd: worktree });
    expect(seen).toEqual([join(repo.dir, '.venv')]);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain('replaced or changed .venv');
  });
});

describe('guardSharedDependencies, a workspace folder of links', () => {
  beforeEach(async () => {
    await setUp({}, true);
  });

  it('made a real folder of links that it accepts as is', async () => {
    expect(lstatSync(join(worktree, 'node_modules')).isDirectory()).toBe(true);
    const guard = await guardSharedDependencies(repo.dir, worktree);
    expect(await guard.restore()).toEqual([]);
  });

  it('puts back .bin/vitest replaced by a program of the model', async () => {
    const guard = await guardSharedDependencies(repo.dir, worktree);
    await rm(join(worktree, 'node_modules', '.bin', 'vitest'));
    await files(worktree, { 'node_modules/.bin/vitest': '#!/bin/sh\necho 1 passed\n' });
    expect(await guard.restore()).toEqual(['node_modules']);
    expect(readlinkSync(join(worktree, 'node_modules', '.bin', 'vitest'))).toBe('../vitest/vitest.mjs');
    expect(readlinkSync(join(worktree, 'node_modules', 'core'))).toBe(join(worktree, 'packages', 'core'));
  });

  it('puts back a package link pointed elsewhere', async () => {
    const guard = await guardSharedDependencies(repo.dir, worktree);
    await rm(join(worktree, 'node_modules', 'vitest'));
    await symlink(join(worktree, 'fake-vitest'), join(worktree, 'node_modules', 'vitest'));
    expect(await guard.restore()).toEqual(['node_modules']);
    expect(readlinkSync(join(worktree, 'node_modules', 'vitest'))).toBe(join(repo.dir, 'node_modules', 'vitest'));
  });

  it('takes out a program the model added to .bin (found before a real one on PATH)', async () => {
    const guard = await guardSharedDependencies(repo.dir, worktree);
    await files(worktree, { 'node_modules/.bin/jest': '#!/bin/sh\n' });
    expect(await guard.restore()).toEqual(['node_modules']);
    expect(readdirSync(join(worktree, 'node_modules', '.bin'))).toEqual(['vitest']);
    expect(existsSync(join(repo.dir, 'node_modules', '.bin', 'jest'))).toBe(false);
  });
});

describe('guardSharedDependencies, what a tool adds to a workspace folder of links (--no-sandbox)', () => {
  beforeEach(async () => {
    await setUp({}, true);
  });

  it("leaves a tool's dot-named cache (vitest's .vite) in place", async () => {
    const guard = await guardSharedDependencies(repo.dir, worktree);
    await files(worktree, { 'node_modules/.vite/vitest/results.json': '{}' });
    expect(await guard.restore()).toEqual([]);
    expect(existsSync(join(worktree, 'node_modules', '.vite', 'vitest', 'results.json'))).toBe(true);
  });

  it('takes out a package the model added beside the shared ones', async () => {
    const guard = await guardSharedDependencies(repo.dir, worktree);
    await files(worktree, { 'node_modules/chai/index.js': 'module.exports = { expect: () => ({}) };\n' });
    expect(await guard.restore()).toEqual(['node_modules']);
    expect(existsSync(join(worktree, 'node_modules', 'chai'))).toBe(false);
  });
});

describe('guardSharedDependencies, an entry the commit tracks', () => {
  it('is never shared nor restored', async () => {
    await setUp({ '.gitignore': 'node_modules\n', '.venv/bin/python': '#!/bin/sh\necho tracked\n' }, false);
    const guard = await guardSharedDependencies(repo.dir, worktree);
    expect(await guard.restore()).toEqual([]);
    expect(lstatSync(join(worktree, '.venv')).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(worktree, '.venv', 'bin', 'python'), 'utf8')).toContain('tracked');
  });
});

describe.skipIf(bwrap.missing)(`the run's sandbox and a workspace's shared node_modules${bwrap.note}`, () => {
  beforeEach(async () => {
    await setUp({}, true);
  });

  async function open() {
    const config = await loadConfig({ repoRoot: repo.dir, env: { RATCHET_HOME: repo.path('home') } });
    return toolSandbox({ ...config, bash: { ...config.bash, sandbox: 'required' } }, createProcessRunner(), {
      protect: [repo.dir],
      worktree,
      dependenciesOf: repo.dir,
      runId: 'run-1',
    });
  }

  it('shows the folder of links read-only, and restores a swapped .venv before the next command, saying so', async () => {
    await using sandbox = await open();
    const sh = (command: string) => sandbox.runner.run({ command, shell: true, cwd: worktree, timeoutMs: 30_000 });
    const swapBin = await sh('rm -f node_modules/.bin/vitest; echo fake > node_modules/.bin/vitest');
    expect(swapBin.exitCode).not.toBe(0);
    expect(readlinkSync(join(worktree, 'node_modules', '.bin', 'vitest'))).toBe('../vitest/vitest.mjs');
    expect(sandbox.takeNotices()).toEqual([]);

    const swapVenv = await sh('rm .venv && mkdir -p .venv/bin && echo fake > .venv/bin/python');
    expect(swapVenv.exitCode).toBe(0);
    const next = await sh('readlink .venv');
    expect(next.stdout.trim()).toBe(join(repo.dir, '.venv'));
    const notices = sandbox.takeNotices();
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain('.venv');
    expect(sandbox.takeNotices()).toEqual([]);
  });
});
