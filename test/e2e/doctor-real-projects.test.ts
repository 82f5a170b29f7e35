/**
 * End to end: `ratchet doctor` on a project shaped like more-itertools as a new user has it
 * (issue 13, points 6 and 7): `--provider ollama` without `--model` used to stop at the config
 * check and skip every other check; a whole untracked `.venv/` counted as hundreds of
 * uncommitted changes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeOpenAiServer } from '../support/fake-openai-server.js';
import { editableInstall } from '../support/python-venv.js';
import { MORE_ITERTOOLS } from '../support/real-repo-fixtures.js';
import { assertFreshBuild, describeResult, runCli } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { toolchain } from '../support/toolchains.js';

// The project's tests are pytest's: doctor runs them among its checks.
const pytest = toolchain('python3-pytest');
// A real editable install: a venv made by Debian's python3 (test/support/python-venv.ts).
const venv = toolchain('python3-venv', 'python3-pytest');

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

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function moreItertools(): Promise<TempRepo> {
  const repo = await createTempRepo({ files: { ...MORE_ITERTOOLS, '.gitignore': 'build/\n' } });
  cleanups.push(() => repo.cleanup());
  return repo;
}

describe.skipIf(pytest.missing)(`ratchet doctor on a real project shape (issue 13)${pytest.note}`, () => {
  beforeAll(() => assertFreshBuild());

  it('--provider ollama without --model: the missing model is one failing check with a fix, and every other check still runs', async () => {
    const repo = await moreItertools();
    const ollama = await startFakeOpenAiServer({ models: ['llama3.2:latest'] });
    cleanups.push(() => ollama.close());
    const env = { ...repo.env, RATCHET_HOME: repo.path('ratchet-home'), OLLAMA_HOST: ollama.url };

    const json = await runCli(['doctor', '--no-baseline', '--json', '--provider', 'ollama'], { cwd: repo.dir, env });
    expect(json.exitCode, describeResult(json)).toBe(2);
    const { checks } = DoctorSchema.parse(JSON.parse(json.stdout));
    expect(checks.filter((check) => check.status === 'fail')).toEqual([
      {
        name: 'model',
        status: 'fail',
        detail: 'ollama has no default model, and none is configured',
        hint: 'Pass --model <id>, set TDD_MODEL, or set [provider] model in .ratchet/config.toml.',
      },
    ]);
    // The checks after the configuration ran: the project's commands, the provider and its
    // endpoint, the sandbox, RATCHET_HOME and the ledger.
    const names = new Set(checks.map((check) => check.name));
    for (const name of ['config', 'test command', 'provider', 'endpoint', 'sandbox', 'RATCHET_HOME', 'ledger'])
      expect(names, name).toContain(name);
    expect(checks.find((check) => check.name === 'endpoint')).toMatchObject({ status: 'ok' });

    const text = await runCli(['doctor', '--no-baseline', '--provider', 'ollama'], { cwd: repo.dir, env });
    expect(text.exitCode, describeResult(text)).toBe(2);
    expect(text.stdout).toMatch(/^✗ model +ollama has no default model, and none is configured$/m);
    expect(text.stdout).toMatch(
      /^ +fix: Pass --model <id>, set TDD_MODEL, or set \[provider\] model in \.ratchet\/config\.toml\.$/m,
    );
  });

  it('counts an untracked .venv/ as one change and ignored files as none', async () => {
    const repo = await moreItertools();
    // A virtualenv with hundreds of files, a build directory .gitignore names, one edited file.
    for (let index = 0; index < 300; index++) {
      const dir = join(repo.dir, '.venv', 'lib', 'python3.12', 'site-packages', `package_${index % 30}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `module_${index}.py`), '');
    }
    mkdirSync(join(repo.dir, 'build', 'lib'), { recursive: true });
    writeFileSync(join(repo.dir, 'build', 'lib', 'more.py'), '');
    writeFileSync(join(repo.dir, 'README.rst'), 'more-itertools\n==============\n\nEdited.\n');

    const result = await runCli(
      ['doctor', '--no-baseline', '--json', '--provider', 'replay', '--cassette', 'none.ndjson'],
      {
        cwd: repo.dir,
        env: { ...repo.env, RATCHET_HOME: repo.path('ratchet-home') },
      },
    );
    const { checks } = DoctorSchema.parse(JSON.parse(result.stdout));
    expect(checks.find((check) => check.name === 'working tree')).toMatchObject({
      status: 'warn',
      detail: '2 uncommitted changes (1 untracked)',
    });
  });
});

/**
 * Shaped like cachetools as a user has it: a src layout whose package is installed in editable
 * mode into the checkout's `.venv`. doctor's baseline runs HEAD in a scratch worktree with the
 * `.venv` shared; the editable install points into the checkout, which the sandbox hides, so the
 * tests could not import the package (13 collection errors on cachetools) or, unsandboxed, would
 * test the checkout's files instead of HEAD's. A run puts the worktree's sources first on
 * PYTHONPATH; doctor now does the same.
 */
describe.skipIf(venv.missing)(`ratchet doctor on a src layout installed in editable mode${venv.note}`, () => {
  beforeAll(() => assertFreshBuild());

  it("the baseline tests HEAD's package from the scratch worktree, not the checkout's edited copy", async () => {
    const repo = await createTempRepo({
      files: {
        'pyproject.toml':
          '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "cachekit"\nversion = "1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
        'src/cachekit/__init__.py': '"""A tiny cache."""\n\n\ndef maxsize():\n    return 128\n',
        'tests/test_cache.py': 'from cachekit import maxsize\n\n\ndef test_maxsize():\n    assert maxsize() == 128\n',
        '.gitignore': '.venv/\n__pycache__/\n*.egg-info/\n.pytest_cache/\n',
        '.ratchet/config.toml': '[test]\ncommand = ".venv/bin/python -m pytest"\n',
      },
    });
    cleanups.push(() => repo.cleanup());
    editableInstall(repo.dir);
    // The user is mid-edit: the checkout's copy fails the test, HEAD's passes.
    writeFileSync(join(repo.dir, 'src/cachekit/__init__.py'), 'def maxsize():\n    return 0\n');

    const result = await runCli(['doctor', '--json', '--provider', 'replay', '--cassette', 'none.ndjson'], {
      cwd: repo.dir,
      env: { ...repo.env, RATCHET_HOME: repo.path('ratchet-home') },
    });
    const { checks } = DoctorSchema.parse(JSON.parse(result.stdout));
    expect(
      checks.find((check) => check.name === 'baseline'),
      describeResult(result),
    ).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^1 passed in \d+ ms$/) as unknown });
  });
});

describe.skipIf(pytest.missing)(`ratchet doctor on a src layout that is not installed${pytest.note}`, () => {
  beforeAll(() => assertFreshBuild());

  it('says the package is the project\'s own and how to make it importable, not "make every test file import"', async () => {
    const repo = await createTempRepo({
      files: {
        'pyproject.toml': '[project]\nname = "cachekit"\nversion = "1.0"\n',
        'src/cachekit/__init__.py': 'def maxsize():\n    return 128\n',
        'tests/test_cache.py': 'from cachekit import maxsize\n\n\ndef test_maxsize():\n    assert maxsize() == 128\n',
        '.ratchet/config.toml': '[test]\ncommand = "python3 -m pytest"\n',
      },
    });
    cleanups.push(() => repo.cleanup());

    const result = await runCli(['doctor', '--json', '--provider', 'replay', '--cassette', 'none.ndjson'], {
      cwd: repo.dir,
      env: { ...repo.env, RATCHET_HOME: repo.path('ratchet-home') },
    });
    const { checks } = DoctorSchema.parse(JSON.parse(result.stdout));
    const baseline = checks.find((check) => check.name === 'baseline');
    expect(baseline, describeResult(result)).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining("No module named 'cachekit'") as unknown,
    });
    expect(baseline?.hint).toMatch(/^cachekit is this project's own package \(src\/cachekit\).*pip install -e \./);
    expect(baseline?.hint).toContain('pythonpath = ["src"]');
  });
});

// Runs have no network: cargo works offline there, from the crates `cargo fetch` downloaded.
const cargoSandboxed = toolchain('cargo', 'bwrap');

describe.skipIf(cargoSandboxed.missing)(
  `ratchet doctor on a crate whose dependencies were never fetched${cargoSandboxed.note}`,
  () => {
    beforeAll(() => assertFreshBuild());

    it('says to run cargo fetch (runs have no network), not "make every test file import"', async () => {
      // Shaped like itoa: a library without a committed Cargo.lock, with a dev-dependency.
      const repo = await createTempRepo({
        files: {
          'Cargo.toml':
            '[package]\nname = "itoa-shape"\nversion = "1.0.0"\nedition = "2021"\n\n[dev-dependencies]\nratchet-test-no-such-crate = "0.1"\n',
          'src/lib.rs': 'pub fn digits(n: u32) -> usize {\n    n.to_string().len()\n}\n',
          'tests/test.rs': '#[test]\nfn three() {\n    assert_eq!(itoa_shape::digits(123), 3);\n}\n',
          '.gitignore': 'target/\nCargo.lock\n',
        },
      });
      cleanups.push(() => repo.cleanup());
      const result = await runCli(['doctor', '--json', '--provider', 'replay', '--cassette', 'none.ndjson'], {
        cwd: repo.dir,
        // The user's home: rustup's cargo finds its toolchain there.
        env: { ...repo.env, HOME: process.env.HOME ?? repo.path('home'), RATCHET_HOME: repo.path('ratchet-home') },
      });
      const { checks } = DoctorSchema.parse(JSON.parse(result.stdout));
      const baseline = checks.find((check) => check.name === 'baseline');
      expect(baseline, describeResult(result)).toMatchObject({ status: 'fail' });
      expect(baseline?.detail).toContain('ratchet-test-no-such-crate');
      expect(baseline?.hint).toMatch(
        /^cargo could not download the crates the project needs: runs have no network\. Run `cargo fetch`/,
      );
    });
  },
);

/**
 * A new project has no tests yet: a run accepts its empty suite (RED writes the first test), so
 * doctor must not fail it (pytest exits 5) or call it unreadable (node --test passes with none).
 * Shaped like python-json-pointer: a `tests.py` pytest never collects is not "no tests yet".
 */
describe.skipIf(pytest.missing)(`ratchet doctor on an empty suite${pytest.note}`, () => {
  beforeAll(() => assertFreshBuild());

  async function baselineOf(files: Record<string, string>) {
    const repo = await createTempRepo({ files });
    cleanups.push(() => repo.cleanup());
    const result = await runCli(['doctor', '--json', '--provider', 'replay', '--cassette', 'none.ndjson'], {
      cwd: repo.dir,
      env: { ...repo.env, RATCHET_HOME: repo.path('ratchet-home') },
    });
    const { checks } = DoctorSchema.parse(JSON.parse(result.stdout));
    return checks.find((check) => check.name === 'baseline');
  }

  it('passes a new pytest project and a new node --test project: no tests yet, RED writes the first', async () => {
    const python = await baselineOf({
      'pyproject.toml': '[project]\nname = "fresh"\nversion = "0.1"\n',
      '.ratchet/config.toml': '[test]\ncommand = "python3 -m pytest"\n',
    });
    expect(python).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(
        /^no tests yet \(python3 -m pytest ran an empty suite in \d+ ms\): RED writes the first$/,
      ) as unknown,
    });
    const node = await baselineOf({
      'package.json': JSON.stringify({ name: 'fresh', type: 'module', scripts: { test: 'node --test' } }),
    });
    expect(node).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^no tests yet \(npm test ran/) as unknown,
    });
  });

  it('warns when pytest collected nothing but a tests.py holds unittest tests', async () => {
    const baseline = await baselineOf({
      'setup.py': 'from setuptools import setup\nsetup(name="jp")\n',
      'jp.py': 'def resolve(doc):\n    return doc\n',
      'tests.py':
        'import unittest\n\nimport jp\n\n\nclass T(unittest.TestCase):\n    def test_resolve(self):\n        self.assertEqual(jp.resolve(1), 1)\n',
      '.ratchet/config.toml': '[test]\ncommand = "python3 -m pytest"\n',
    });
    expect(baseline).toMatchObject({
      status: 'warn',
      detail: 'pytest collected no tests, but tests.py holds some: a run would never run them',
    });
    expect(baseline?.hint).toContain('python3 -m unittest');
  });
});
