/**
 * `npm test` runs the package's script without npm (src/verify/npm-script.ts), with the
 * package's `node_modules/.bin` first on PATH as npm puts it. The model writes the worktree, its
 * `node_modules/.bin` included when the checkout has no `node_modules` to share: it plants
 * `bwrap`, `prlimit` and `sh` there, each leaving a mark outside the worktree. The sandbox's
 * launcher, which runs outside the sandbox and finds those programs on its PATH, must never run
 * them: the tests run sandboxed as before, and nothing outside the worktree is marked.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { toolSandbox } from '../../src/engine/tool-sandbox.js';
import { commandEnvironment } from '../../src/process/env.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { runTests } from '../../src/verify/run-tests.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { toolchain } from '../support/toolchains.js';

const bwrap = toolchain('bwrap');

let repo: TempRepo;
let worktree: string;
let mark: string;

beforeEach(async () => {
  repo = await createTempRepo({
    files: {
      'package.json': JSON.stringify({ name: 'planted', type: 'module', scripts: { test: 'node --test' } }),
      'test/a.test.js': "import { test } from 'node:test';\ntest('a', () => {});\n",
    },
  });
  worktree = repo.path('home', 'worktrees', 'run-1');
  await repo.git.addWorktree(worktree, 'ratchet/run-1', await repo.git.head());
  // Outside the worktree: what a planted program would write if it ran unsandboxed.
  mark = repo.path('marked-outside');
  const bin = join(worktree, 'node_modules', '.bin');
  await mkdir(bin, { recursive: true });
  for (const name of ['bwrap', 'prlimit', 'sh', 'setpriv']) {
    await writeFile(join(bin, name), `#!/bin/sh\necho ${name} >> '${mark}'\nexit 0\n`);
    await chmod(join(bin, name), 0o755);
  }
});

afterEach(async () => {
  await repo.cleanup();
});

describe('npm test without npm, with programs planted in node_modules/.bin', () => {
  it.skipIf(bwrap.missing)(
    `runs the suite in the sandbox and never a planted program outside it${bwrap.note}`,
    async () => {
      const config = await loadConfig({ repoRoot: repo.dir, env: { RATCHET_HOME: repo.path('home') } });
      await using sandbox = await toolSandbox(
        { ...config, bash: { ...config.bash, sandbox: 'required' } },
        createProcessRunner(),
        {
          protect: [repo.dir],
          worktree,
          dependenciesOf: repo.dir,
          runId: 'run-1',
        },
      );
      const result = await runTests({
        command: 'npm test',
        framework: 'node-test',
        cwd: worktree,
        runner: sandbox.runner,
        timeoutMs: 60_000,
        environment: commandEnvironment(process.env),
      });
      expect(existsSync(mark), 'a planted program ran outside the sandbox').toBe(false);
      // The suite ran, by the real shell and node.
      expect(result.counts).toMatchObject({ passed: 1, failed: 0 });
      expect(result.command).toBe('npm test');
    },
  );
});
