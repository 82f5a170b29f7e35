/**
 * Honest test runs still work in the sandbox: node --test, vitest, pytest, go test and cargo
 * test, each run by `runTests` through the tool sandbox on a worktree whose dependencies
 * (`node_modules` linked from the checkout) are read-only, whose caches go to the run's private
 * /tmp, and whose reports go to a directory only that one command can write. Every result is read
 * from the runner's report or output, and the checkout's dependencies are left as they were.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { toolSandbox, type ToolSandbox } from '../../src/engine/tool-sandbox.js';
import { shareDependencies } from '../../src/engine/worktree-setup.js';
import { createProcessRunner } from '../../src/process/runner.js';
import type { Framework } from '../../src/verify/detect.js';
import { runTests } from '../../src/verify/run-tests.js';
import { PACKAGE_ROOT } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { toolchain } from '../support/toolchains.js';

let repo: TempRepo;
let worktree: string;
let sandbox: ToolSandbox;

async function project(files: Record<string, string>, linked: readonly string[] = []): Promise<void> {
  repo = await createTempRepo({ files: { ...files, '.gitignore': 'node_modules/\n' } });
  if (linked.length > 0) {
    await mkdir(join(repo.dir, 'node_modules'), { recursive: true });
    for (const name of linked)
      await symlink(join(PACKAGE_ROOT, 'node_modules', name), join(repo.dir, 'node_modules', name));
  }
  worktree = repo.path('ratchet-home', 'worktrees', 'run-1');
  await repo.git.addWorktree(worktree, 'ratchet/run-1', await repo.git.head());
  await shareDependencies(repo.dir, worktree, repo.git);
  const config = await loadConfig({ repoRoot: repo.dir, env: { RATCHET_HOME: repo.path('ratchet-home') } });
  sandbox = await toolSandbox(config, createProcessRunner(), {
    protect: [repo.dir],
    worktree,
    dependenciesOf: repo.dir,
    runId: 'run-1',
  });
}

afterEach(async () => {
  await sandbox?.[Symbol.asyncDispose]();
  await repo?.cleanup();
});

async function run(command: string, framework: Framework) {
  return runTests({ command, framework, cwd: worktree, runner: sandbox.runner, timeoutMs: 240_000 });
}

function expectOnePassedOneFailed(result: Awaited<ReturnType<typeof run>>): void {
  expect(result.counts, result.output).toMatchObject({ passed: 1, failed: 1 });
  expect(result.tests.find((test) => test.status === 'failed')?.failureKind, result.output).toBe('assertion');
}

const bwrap = toolchain('bwrap');
const pytest = toolchain('pytest');
const go = toolchain('go');
const cargo = toolchain('cargo');

describe.skipIf(bwrap.missing)(`honest test runs in the sandbox${bwrap.note}`, () => {
  it('node --test, its JUnit report written where only that command can write', async () => {
    await project({
      'package.json': '{ "type": "module", "scripts": { "test": "node --test" } }\n',
      'test/a.test.js':
        "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\ntest('ok', () => assert.equal(1, 1));\ntest('bad', () => assert.equal(1, 2));\n",
    });
    const result = await run('node --test', 'node-test');
    expectOnePassedOneFailed(result);
    expect(result.source).toBe('junit-xml');
  });

  it('vitest, with node_modules read-only (its caches go without)', async () => {
    await project(
      {
        'package.json': '{ "type": "module", "scripts": { "test": "vitest run" } }\n',
        'test/a.test.js':
          "import { test, expect } from 'vitest';\ntest('ok', () => expect(1).toBe(1));\ntest('bad', () => expect(1).toBe(2));\n",
      },
      ['vitest', '@vitest', 'vite', '.bin'],
    );
    const before = readdirSync(join(repo.dir, 'node_modules')).sort();
    const result = await run('npx vitest run', 'vitest');
    expectOnePassedOneFailed(result);
    expect(readdirSync(join(repo.dir, 'node_modules')).sort()).toEqual(before);
  }, 120_000);

  it.skipIf(pytest.missing)(
    `pytest${pytest.note}`,
    async () => {
      await project({ 'test_a.py': 'def test_ok():\n    assert 1 == 1\n\ndef test_bad():\n    assert 1 == 2\n' });
      const result = await run('python3 -m pytest', 'pytest');
      expectOnePassedOneFailed(result);
    },
    120_000,
  );

  it.skipIf(go.missing)(
    `go test, its build cache in the private /tmp${go.note}`,
    async () => {
      await project({
        'go.mod': 'module example.com/k\n\ngo 1.19\n',
        'k.go': 'package k\n\nfunc One() int { return 1 }\n',
        'k_test.go':
          'package k\n\nimport "testing"\n\nfunc TestOk(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fatal("no")\n\t}\n}\n\nfunc TestBad(t *testing.T) {\n\tif One() != 2 {\n\t\tt.Errorf("One() = %d, want 2", One())\n\t}\n}\n',
      });
      const result = await run('go test ./...', 'go');
      expectOnePassedOneFailed(result);
    },
    240_000,
  );

  it.skipIf(cargo.missing)(
    `cargo test, with ~/.cargo and ~/.rustup read-only${cargo.note}`,
    async () => {
      await project({
        'Cargo.toml': '[package]\nname = "k"\nversion = "0.1.0"\nedition = "2021"\n',
        'src/lib.rs':
          'pub fn one() -> i32 { 1 }\n#[cfg(test)]\nmod tests {\n    #[test] fn ok() { assert_eq!(super::one(), 1); }\n    #[test] fn bad() { assert_eq!(super::one(), 2); }\n}\n',
      });
      const result = await run('cargo test --offline', 'cargo');
      expectOnePassedOneFailed(result);
      expect(existsSync(join(worktree, 'target'))).toBe(true);
    },
    240_000,
  );
});
