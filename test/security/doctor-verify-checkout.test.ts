/**
 * Issue 11, finding 2 (its last sentence) and issue 13, point 5: `doctor`'s baseline and
 * `refactor verify` ran the project's commands in the user's checkout, unsandboxed. The suite
 * left `coverage/`, `dist/` and a `.tsbuildinfo` behind although they "change none of your
 * files", and a planted `node_modules/x/index.js` ran on the host. They run in a temporary
 * worktree of HEAD under `$RATCHET_HOME` now, with the dependencies shared as a run's are, in the
 * run's sandbox, and the worktree is removed afterwards: the checkout is exactly as it was (ignored
 * files included), and what the planted module tried outside the worktree did not happen. A red
 * `refactor verify` names the failing test and its file, as `doctor` does.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProjectRepo, ratchetEnv, type ProjectRepo } from '../support/e2e-run.js';
import { assertFreshBuild, describeResult, runCli } from '../support/run-cli.js';
import { toolchain } from '../support/toolchains.js';

/** The test writes what real suites leave behind, and imports a dependency from node_modules. */
const WRITES_OUTPUTS = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { answer } from 'x';

test('answer is 42', () => {
  mkdirSync('coverage', { recursive: true });
  writeFileSync('coverage/lcov.info', 'TN:\\n');
  mkdirSync('dist', { recursive: true });
  writeFileSync('dist/out.js', 'export {};\\n');
  writeFileSync('tsconfig.tsbuildinfo', '{}');
  assert.equal(answer(), 42);
});
`;

const FAILING = `import { test } from 'node:test';
import assert from 'node:assert/strict';

test('the truth is out there', () => {
  assert.equal(1, 2);
});
`;

const PROJECT: Record<string, string> = {
  '.gitignore': 'node_modules/\ncoverage/\ndist/\n*.tsbuildinfo\n',
  'package.json': `${JSON.stringify({ name: 'outputs', private: true, type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'test/answer.test.js': WRITES_OUTPUTS,
};

/**
 * A dependency that an agent rewrote: it tries to write into the checkout. (What else the sandbox
 * keeps it from, `$HOME` and the network, is the sandbox's own tests' subject.)
 */
function plantedModule(checkout: string): string {
  return `import { writeFileSync } from 'node:fs';
try { writeFileSync(${JSON.stringify(join(checkout, 'PWNED'))}, 'planted code ran here'); } catch {}
export function answer() { return 42; }
`;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

beforeAll(() => {
  assertFreshBuild();
});

/** A node project whose checkout has node_modules/x (ignored) and `ratchet init` done. */
async function project(files: Record<string, string> = {}): Promise<ProjectRepo> {
  const repo = await createProjectRepo({ ...PROJECT, ...files });
  cleanups.push(() => repo.cleanup());
  await mkdir(join(repo.dir, 'node_modules', 'x'), { recursive: true });
  await writeFile(
    join(repo.dir, 'node_modules', 'x', 'package.json'),
    JSON.stringify({ name: 'x', type: 'module', main: 'index.js' }),
  );
  await writeFile(join(repo.dir, 'node_modules', 'x', 'index.js'), plantedModule(repo.dir));
  const init = await runCli(['init'], { cwd: repo.dir, env: ratchetEnv(repo, null, null) });
  expect(init.exitCode, describeResult(init)).toBe(0);
  return repo;
}

/**
 * Everything git sees in the checkout, every ignored file included, but the logs `refactor
 * verify` keeps in Ratchet's own `.ratchet/verify/` (documented; `.ratchet/` is git-excluded).
 */
function everything(repo: ProjectRepo): string {
  return repo
    .run('status', '--porcelain', '--untracked-files=all', '--ignored')
    .split('\n')
    .filter((line) => !line.startsWith('!! .ratchet/verify/'))
    .join('\n');
}

const Doctor = z.object({
  checks: z.array(z.object({ name: z.string(), status: z.string(), detail: z.string() })),
});

async function doctor(repo: ProjectRepo): Promise<z.infer<typeof Doctor>> {
  const cassette = repo.path('session.ndjson');
  await writeFile(cassette, '');
  const run = await runCli(['doctor', '--json', '--provider', 'replay', '--cassette', cassette], {
    cwd: repo.dir,
    env: ratchetEnv(repo, null, null),
  });
  expect([0, 2], describeResult(run)).toContain(run.exitCode);
  return Doctor.parse(JSON.parse(run.stdout));
}

/**
 * Where bubblewrap is missing, doctor and refactor verify run the user's own commands unsandboxed
 * (and say so): the planted module then does write, so the tests that check it did not need it.
 */
const bwrap = toolchain('bwrap');

describe('doctor and refactor verify run where a run runs its commands', () => {
  it.skipIf(bwrap.missing)(
    `leave the checkout exactly as it was, ignored files included, and no planted code wrote outside${bwrap.note}`,
    async () => {
      const repo = await project();
      const before = everything(repo);
      const beforeShort = repo.run('status', '--porcelain', '--ignored');
      expect(before).toContain('!! node_modules/x/index.js');

      const report = await doctor(repo);
      expect(report.checks.find((check) => check.name === 'baseline')).toMatchObject({ status: 'ok' });
      expect(report.checks.find((check) => check.name === 'worktree')?.detail).toMatch(
        /^the commands below ran on HEAD [0-9a-f]{8} in a temporary worktree/,
      );
      const verify = await runCli(['refactor', 'verify'], { cwd: repo.dir, env: ratchetEnv(repo, null, null) });
      expect(verify.exitCode, describeResult(verify)).toBe(0);
      expect(verify.stdout).toMatch(/Verifying HEAD [0-9a-f]{8} in a temporary worktree/);
      expect(verify.stdout).toContain('Baseline is green.');

      expect(everything(repo)).toBe(before);
      expect(repo.run('status', '--porcelain', '--ignored')).toBe(beforeShort);
      for (const left of ['coverage', 'dist', 'tsconfig.tsbuildinfo', 'PWNED'])
        expect(existsSync(join(repo.dir, left)), left).toBe(false);
      // The temporary worktrees are gone, from the disk and from git's list.
      expect(readdirSync(join(repo.home, 'scratch'))).toEqual([]);
      expect(repo.run('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    },
  );

  it('checks HEAD: uncommitted changes are not part of it, and doctor says so', async () => {
    const repo = await project();
    // A failing test that is not committed: a run would not see it, neither does the check.
    await writeFile(join(repo.dir, 'test', 'uncommitted.test.js'), FAILING);
    const report = await doctor(repo);
    expect(report.checks.find((check) => check.name === 'baseline')).toMatchObject({ status: 'ok' });
    expect(report.checks.find((check) => check.name === 'worktree')?.detail).toContain(
      'as a run starts from HEAD, without your 1 uncommitted change (1 untracked)',
    );
  });

  it.skipIf(bwrap.missing)(
    `a red refactor verify names the failing test and its file, as doctor does${bwrap.note}`,
    async () => {
      const repo = await project({ 'test/truth.test.js': FAILING });
      const before = everything(repo);
      const verify = await runCli(['refactor', 'verify'], { cwd: repo.dir, env: ratchetEnv(repo, null, null) });
      expect(verify.exitCode, describeResult(verify)).toBe(1);
      expect(verify.stdout).toContain('✗ the truth is out there (test/truth.test.js): ');
      expect(verify.stdout).toContain('Baseline is red');
      const json = await runCli(['refactor', 'verify', '--json'], { cwd: repo.dir, env: ratchetEnv(repo, null, null) });
      expect(JSON.parse(json.stdout)).toMatchObject({
        ok: false,
        results: [
          { failingTests: [{ name: 'the truth is out there', file: 'test/truth.test.js', kind: 'assertion' }] },
        ],
      });

      const report = await doctor(repo);
      expect(report.checks.find((check) => check.name === 'baseline')?.detail).toContain(
        '1 failing (the truth is out there (test/truth.test.js))',
      );
      expect(everything(repo)).toBe(before);
    },
  );
});
