/**
 * End to end: the setup and read-back commands as a user meets them on a fresh repository, run as
 * a subprocess of the built CLI: what `doctor` says about a test runner that is missing or
 * failing (and that it writes nothing into the repository), `status` / `history` / `report`
 * before any run, `--cassette` relative to the current directory, `init --force --prompts`,
 * `--cwd` that is not a directory, a command group without its subcommand, and the global
 * options in a subcommand's help.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProjectRepo, ratchetEnv, type ProjectRepo } from '../support/e2e-run.js';
import { assertFreshBuild, describeResult, runCli } from '../support/run-cli.js';

const NODE_PROJECT: Record<string, string> = {
  'README.md': '# tiny\n',
  'package.json': `${JSON.stringify({ name: 'tiny', private: true, type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'test/one.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n\ntest('one is one', () => assert.equal(1, 1));\n",
};

const DoctorSchema = z.object({
  ok: z.boolean(),
  checks: z.array(
    z.object({
      name: z.string(),
      status: z.enum(['ok', 'warn', 'fail']),
      detail: z.string(),
      hint: z.string().optional(),
    }),
  ),
});

/** Doctor for the replay provider with a cassette outside the repository: no key or endpoint check. */
function replay(repo: ProjectRepo): string[] {
  const cassette = repo.path('session.ndjson');
  if (!existsSync(cassette)) writeFileSync(cassette, '');
  return ['--provider', 'replay', '--cassette', cassette];
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function project(files: Record<string, string>): Promise<ProjectRepo> {
  const repo = await createProjectRepo(files);
  cleanups.push(() => repo.cleanup());
  return repo;
}

/** Everything git sees in the checkout, ignored files included. */
function everything(repo: ProjectRepo): string {
  return repo.run('status', '--porcelain', '--untracked-files=all', '--ignored');
}

async function doctor(repo: ProjectRepo, args: string[] = []): Promise<z.infer<typeof DoctorSchema>> {
  const run = await runCli(['doctor', '--json', ...replay(repo), ...args], {
    cwd: repo.dir,
    env: ratchetEnv(repo, null, null),
  });
  expect([0, 2], describeResult(run)).toContain(run.exitCode);
  return DoctorSchema.parse(JSON.parse(run.stdout));
}

beforeAll(() => {
  assertFreshBuild();
});

describe('ratchet setup commands on a fresh repository (built CLI, subprocess)', () => {
  it('doctor and the run commands write nothing into a repository that has no run', async () => {
    const repo = await project(NODE_PROJECT);
    const env = ratchetEnv(repo, null, null);
    const report = await doctor(repo);
    expect(report.checks.find((check) => check.name === 'baseline')).toMatchObject({ status: 'ok' });
    expect(report.checks.find((check) => check.name === 'ledger')).toMatchObject({ status: 'ok' });
    for (const args of [['status'], ['history', '--json'], ['report'], ['rollback', 'abc1234'], ['reject']]) {
      const run = await runCli(args, { cwd: repo.dir, env });
      expect(run.exitCode, describeResult(run)).toBe(2);
      expect(`${run.stdout}${run.stderr}`).toContain('No runs in this repository yet.');
    }
    // A run id this repository does not know: the hint says where runs live, not how to start one.
    const unknown = await runCli(['report', '20990101-000000-abcd'], { cwd: repo.dir, env });
    expect(unknown.exitCode, describeResult(unknown)).toBe(2);
    expect(unknown.stderr).toContain('No run 20990101-000000-abcd in this repository.');
    expect(unknown.stderr).toContain('a run belongs to the repository it started in');
    expect(existsSync(join(repo.dir, '.ratchet')), 'no .ratchet/ in the checkout').toBe(false);
    expect(everything(repo)).toBe('');
    // Run twice, doctor still finds a clean tree: it did not dirty it itself.
    expect((await doctor(repo)).checks.find((check) => check.name === 'working tree')).toMatchObject({
      status: 'ok',
      detail: 'clean',
    });
  });

  it('doctor names a test runner that is not installed or not executable, once, with how to fix it', async () => {
    const repo = await project({
      ...NODE_PROJECT,
      '.ratchet/config.toml': '[test]\ncommand = "ratchet-no-such-runner test"\n',
    });
    const missing = await doctor(repo);
    expect(missing.ok).toBe(false);
    expect(missing.checks.filter((check) => check.name === 'test command')).toEqual([
      {
        name: 'test command',
        status: 'fail',
        detail: 'ratchet-no-such-runner test (from config): ratchet-no-such-runner is not installed (not on PATH)',
        hint: 'Install ratchet-no-such-runner (it is not on PATH), or set [test] command = "..." in .ratchet/config.toml.',
      },
    ]);
    expect(missing.checks.find((check) => check.name === 'baseline')).toBeUndefined();

    // A Gradle project whose wrapper lost its executable bit.
    const gradle = await project({ 'build.gradle': "plugins { id 'java' }\n", gradlew: '#!/bin/sh\nexit 0\n' });
    await chmod(join(gradle.dir, 'gradlew'), 0o644);
    const wrapper = await doctor(gradle, ['--no-baseline']);
    expect(wrapper.checks.find((check) => check.name === 'test command')).toMatchObject({
      status: 'fail',
      detail: './gradlew test (detected from build.gradle): ./gradlew is not executable',
      hint: expect.stringContaining('chmod +x ./gradlew') as unknown,
    });
  });

  it('doctor says why a baseline failed when no test failed by name', async () => {
    const repo = await project({
      ...NODE_PROJECT,
      '.ratchet/config.toml':
        '[test]\ncommand = "node -e \\"console.log(\'compiling\'); console.error(\'Error: cannot load the plugin\'); process.exit(3)\\""\n',
    });
    const report = await doctor(repo);
    const baseline = report.checks.find((check) => check.name === 'baseline');
    expect(baseline).toMatchObject({ status: 'fail' });
    expect(baseline?.detail).toMatch(/exited 3 without a failing test: Error: cannot load the plugin$/);
    expect(baseline?.hint).toContain('yourself to see why it fails');
    expect(report.checks.filter((check) => check.name === 'test command')).toHaveLength(1);
  });

  // A run stops at its baseline on results it cannot read (requireGreenBaseline): a failing check.
  it('doctor fails a suite that passes when Ratchet cannot read which tests ran', async () => {
    const repo = await project({
      ...NODE_PROJECT,
      Makefile: 'test:\n\tnode --test\n',
      '.ratchet/config.toml': '[test]\ncommand = "make test"\n',
    });
    const report = await doctor(repo);
    const baseline = report.checks.find((check) => check.name === 'baseline');
    expect(baseline).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(
        /^make test passed in \d+ ms, but Ratchet could not read which tests ran/,
      ) as unknown,
    });
    expect(baseline?.hint).toContain('every RED would fail with "no new test"');
    // The same suite called directly is read test by test.
    const direct = await project(NODE_PROJECT);
    expect((await doctor(direct)).checks.find((check) => check.name === 'baseline')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^1 passed in \d+ ms$/) as unknown,
    });
  });

  it('doctor fails `python3 -m pytest` when that python has no pytest, before running the baseline', async () => {
    const repo = await project({
      'pytest.ini': '[pytest]\n',
      'tests/test_a.py': 'def test_a():\n    assert True\n',
      '.gitignore': 'venv/\n',
      '.ratchet/config.toml': '[test]\ncommand = "python3 -m pytest"\n',
    });
    // An activated virtualenv without pytest (as `python3 -m venv` leaves it).
    execFileSync('/usr/bin/python3', ['-m', 'venv', '--without-pip', repo.path('venv')]);
    const run = await runCli(['doctor', '--json', ...replay(repo)], {
      cwd: repo.dir,
      env: { ...ratchetEnv(repo, null, null), PATH: `${repo.path('venv/bin')}:${process.env.PATH ?? ''}` },
    });
    expect(run.exitCode, describeResult(run)).toBe(2);
    const checks = DoctorSchema.parse(JSON.parse(run.stdout)).checks;
    expect(checks.find((check) => check.name === 'test command')).toEqual({
      name: 'test command',
      status: 'fail',
      detail: 'python3 -m pytest (from config): python3 cannot import pytest (No module named pytest)',
      hint: 'Install pytest (python3 -m pip install pytest), or set [test] command = "python3 -m unittest"',
    });
    expect(checks.find((check) => check.name === 'baseline')).toBeUndefined();
  });

  it('doctor says a test file could not be collected, on one line', async () => {
    const repo = await project({
      ...NODE_PROJECT,
      'test/broken.test.js': "import { missing } from '../src/missing.js';\nmissing();\n",
    });
    const baseline = (await doctor(repo)).checks.find((check) => check.name === 'baseline');
    expect(baseline).toMatchObject({ status: 'fail' });
    expect(baseline?.detail).toMatch(
      /^1 could not be collected \(test\/broken\.test\.js\): .*ERR_MODULE_NOT_FOUND.*, 1 passed, exit 1$/,
    );
    expect(baseline?.detail).not.toContain('\n');
    expect(baseline?.hint).toContain('import and compile');
  });

  it('doctor fails an unusable RATCHET_HOME with the reason and the fix, as a run would refuse it', async () => {
    const repo = await project(NODE_PROJECT);
    // A path under a regular file can never be a directory.
    const home = join(repo.path('session.ndjson'), 'home');
    const run = await runCli(['doctor', '--json', '--no-baseline', ...replay(repo)], {
      cwd: repo.dir,
      env: { ...ratchetEnv(repo, null, null), RATCHET_HOME: home },
    });
    expect(run.exitCode, describeResult(run)).toBe(2);
    const check = DoctorSchema.parse(JSON.parse(run.stdout)).checks.find((entry) => entry.name === 'RATCHET_HOME');
    expect(check).toMatchObject({ status: 'fail' });
    expect(check?.detail).toContain(`Ratchet's home ${home} is not a writable directory`);
    expect(check?.hint).toContain('Set RATCHET_HOME to a writable directory');
  });

  it('reads --cassette relative to the current directory, and names a cassette that does not exist', async () => {
    const repo = await project(NODE_PROJECT);
    const sub = join(repo.dir, 'sub');
    mkdirSync(sub);
    writeFileSync(join(sub, 'session.ndjson'), '');
    const env = ratchetEnv(repo, null, null);
    const found = await runCli(
      ['doctor', '--json', '--no-baseline', '--provider', 'replay', '--cassette', 'session.ndjson'],
      {
        cwd: sub,
        env,
      },
    );
    expect(DoctorSchema.parse(JSON.parse(found.stdout)).checks.find((check) => check.name === 'provider')).toEqual({
      name: 'provider',
      status: 'ok',
      detail: `replay ${join(sub, 'session.ndjson')}`,
    });
    const lost = await runCli(
      ['doctor', '--json', '--no-baseline', '--provider', 'replay', '--cassette', 'other.ndjson'],
      {
        cwd: sub,
        env,
      },
    );
    expect(lost.exitCode, describeResult(lost)).toBe(2);
    expect(DoctorSchema.parse(JSON.parse(lost.stdout)).checks.find((check) => check.name === 'provider')).toMatchObject(
      {
        status: 'fail',
        detail: `replay: the cassette ${join(sub, 'other.ndjson')} does not exist`,
      },
    );
    // A cassette without --provider replay is not silently ignored (it would call the configured API).
    const ignored = await runCli(['tdd', 'add things', '--cassette', 'session.ndjson'], { cwd: sub, env });
    expect(ignored.exitCode, describeResult(ignored)).toBe(2);
    expect(ignored.stderr).toContain(
      '--cassette plays a recorded session, but the provider is anthropic (from the config).',
    );
    expect(ignored.stderr).toContain('Add --provider replay');
    const exclude = join(repo.dir, '.git', 'info', 'exclude');
    const excluded = existsSync(exclude) ? readFileSync(exclude, 'utf8') : '';
    const nothingWritten = (why: string): void => {
      expect(existsSync(join(repo.dir, '.ratchet')), `${why}: no .ratchet/ in the repository`).toBe(false);
      expect(existsSync(exclude) ? readFileSync(exclude, 'utf8') : '', `${why}: .git/info/exclude unchanged`).toBe(
        excluded,
      );
    };
    nothingWritten('a cassette without replay');
    // A dirty tree (sub/ is untracked) is refused before the ledger exists...
    const dirty = await runCli(['tdd', 'add things', '--provider', 'replay', '--cassette', 'session.ndjson'], {
      cwd: sub,
      env,
    });
    expect(dirty.exitCode, describeResult(dirty)).toBe(2);
    expect(dirty.stderr).toContain('The working tree has 1 uncommitted change (1 untracked).');
    nothingWritten('a dirty tree');
    // ... and so is a missing API key (--allow-dirty gets past the dirty tree).
    const keyless = await runCli(['tdd', 'add things', '--allow-dirty', '--provider', 'anthropic', '--model', 'm'], {
      cwd: sub,
      env,
    });
    expect(keyless.exitCode, describeResult(keyless)).toBe(3);
    expect(keyless.stderr).toContain('ANTHROPIC_API_KEY is not set');
    nothingWritten('a missing key');
  });

  it('init --force --prompts rewrites the config but keeps prompts the user edited', async () => {
    const repo = await project(NODE_PROJECT);
    const env = ratchetEnv(repo, null, null);
    expect((await runCli(['init', '--prompts'], { cwd: repo.dir, env })).exitCode).toBe(0);
    const prompts = join(repo.dir, '.ratchet', 'prompts.toml');
    writeFileSync(prompts, `${readFileSync(prompts, 'utf8')}\n# my own prompts\n`);
    const forced = await runCli(['init', '--force', '--prompts', '--json'], { cwd: repo.dir, env });
    expect(forced.exitCode, describeResult(forced)).toBe(0);
    expect(JSON.parse(forced.stdout)).toEqual({
      config: join(repo.dir, '.ratchet', 'config.toml'),
      testCommand: 'npm test',
      lintCommand: null,
      typecheckCommand: null,
      prompts: null,
    });
    expect(readFileSync(prompts, 'utf8')).toContain('# my own prompts');
  });

  it('init proposes tsgo for the typecheck of a project on tsgo without a typecheck script', async () => {
    const repo = await project({
      ...NODE_PROJECT,
      'package.json': `${JSON.stringify({ name: 'tiny', private: true, type: 'module', scripts: { test: 'node --test' }, devDependencies: { typescript: '^5.9.0', '@typescript/native-preview': '7.0.0-dev.20250101.1' } }, null, 2)}\n`,
      'tsconfig.json': '{ "compilerOptions": { "strict": true } }\n',
    });
    const init = await runCli(['init'], { cwd: repo.dir, env: ratchetEnv(repo, null, null) });
    expect(init.exitCode, describeResult(init)).toBe(0);
    expect(init.stdout).toContain(
      'detected typecheck command: npx tsgo --noEmit (from package.json @typescript/native-preview)',
    );
    const config = readFileSync(join(repo.dir, '.ratchet', 'config.toml'), 'utf8');
    expect(config).toMatch(/^\[typecheck\]\n(?:#.*\n)*command = "npx tsgo --noEmit"$/m);
  });

  it("init writes the project's lint and typecheck scripts for VERIFY, and doctor fails one that is red before any change", async () => {
    const lint =
      "node -e \"console.log('checking'); if (process.env.LINT_RED) { console.error('src/a.js: 1 problem'); process.exit(1) }\"";
    const repo = await project({
      ...NODE_PROJECT,
      'package.json': `${JSON.stringify({ name: 'tiny', private: true, type: 'module', scripts: { test: 'node --test', lint, typecheck: 'node -e 0' } }, null, 2)}\n`,
    });
    const env = ratchetEnv(repo, null, null);
    const init = await runCli(['init'], { cwd: repo.dir, env });
    expect(init.exitCode, describeResult(init)).toBe(0);
    expect(init.stdout).toContain('detected lint command: npm run lint (from package.json scripts.lint)');
    expect(init.stdout).toContain(
      'detected typecheck command: npm run typecheck (from package.json scripts.typecheck)',
    );
    const config = readFileSync(join(repo.dir, '.ratchet', 'config.toml'), 'utf8');
    expect(config).toMatch(/^\[lint\]\n(?:#.*\n)*command = "npm run lint"$/m);
    expect(config).toMatch(/^\[typecheck\]\n(?:#.*\n)*command = "npm run typecheck"$/m);

    // Commands see only an allowlisted environment: the lint script's switch is passed by name.
    expect(config).toMatch(/^\[bash\]$/m);
    writeFileSync(
      join(repo.dir, '.ratchet', 'config.toml'),
      config.replace(/^\[bash\]$/m, '[bash]\nenv = ["LINT_RED"]'),
    );

    const green = await doctor(repo);
    expect(green.checks.find((check) => check.name === 'lint')).toMatchObject({ status: 'ok' });
    expect(green.checks.find((check) => check.name === 'typecheck')).toMatchObject({ status: 'ok' });

    const red = await runCli(['doctor', '--json', ...replay(repo)], {
      cwd: repo.dir,
      env: { ...ratchetEnv(repo, null, null), LINT_RED: '1' },
    });
    expect(red.exitCode, describeResult(red)).toBe(2);
    const lintCheck = DoctorSchema.parse(JSON.parse(red.stdout)).checks.find((check) => check.name === 'lint');
    expect(lintCheck).toMatchObject({
      status: 'fail',
      detail: 'npm run lint exited 1 before any change: src/a.js: 1 problem',
    });
    expect(lintCheck?.hint).toContain('remove [lint] command');
  });

  it('says what is wrong with --cwd, and what a command group lacks, also in --json', async () => {
    const repo = await project(NODE_PROJECT);
    const env = ratchetEnv(repo, null, null);
    const gone = await runCli(['--cwd', join(repo.dir, 'nowhere'), 'status', '--json'], { cwd: repo.dir, env });
    expect(gone.exitCode, describeResult(gone)).toBe(2);
    expect(JSON.parse(gone.stdout)).toMatchObject({
      type: 'error',
      code: 'usage',
      message: `${join(repo.dir, 'nowhere')} (--cwd) does not exist.`,
    });
    const file = await runCli(['--cwd', join(repo.dir, 'package.json'), 'doctor'], { cwd: repo.dir, env });
    expect(file.exitCode, describeResult(file)).toBe(2);
    expect(file.stdout).toContain('is a file, not a directory');

    const group = await runCli(['refactor', '--json'], { cwd: repo.dir, env });
    expect(group.exitCode, describeResult(group)).toBe(2);
    expect(JSON.parse(group.stdout)).toMatchObject({
      type: 'error',
      code: 'usage',
      message: 'ratchet refactor needs a command: run, plan, verify, rollback',
    });

    const help = await runCli(['status', '--help'], { cwd: repo.dir, env });
    expect(help.exitCode, describeResult(help)).toBe(0);
    expect(help.stdout).toMatch(/Global Options:[\s\S]*--cwd <dir>[\s\S]*--json[\s\S]*--yes/);
  });
});
