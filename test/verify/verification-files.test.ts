import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  describeVerificationChanges,
  diffVerification,
  isVerificationFile,
  lockVerification,
  verificationFileMatcher,
} from '../../src/verify/verification-files.js';
import { makeProject } from './helpers.js';

const pkg = (value: Record<string, unknown>): string => `${JSON.stringify(value, null, 2)}\n`;

async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text);
  }
}

/** What changed, as `file part change` lines, after `edit` on a project made of `files`. */
async function changesAfter(
  files: Record<string, string>,
  edit: Record<string, string | null>,
  commands: string[] = ['npm test'],
): Promise<string[]> {
  const root = await makeProject(files);
  const before = await lockVerification(root, commands);
  for (const [file, text] of Object.entries(edit)) {
    if (text === null) await rm(path.join(root, file));
    else await write(root, { [file]: text });
  }
  const after = await lockVerification(root, commands);
  return diffVerification(before, after).map((change) =>
    [change.file, change.part, change.change].filter((word) => word !== '').join(' '),
  );
}

describe('lockVerification: package.json', () => {
  const base = {
    name: 'x',
    type: 'module',
    scripts: { test: 'node --test', pretest: 'npm run build', build: 'tsc', start: 'node .' },
    dependencies: { a: '1' },
  };

  it('locks the test script, its hooks, the scripts they run and the runner keys', async () => {
    const files = { 'package.json': pkg(base) };
    // Issue 11, finding 5: a test script that rewrites the report after the run.
    expect(
      await changesAfter(files, {
        'package.json': pkg({ ...base, scripts: { ...base.scripts, test: 'node --test; node .ci-report.cjs' } }),
      }),
    ).toEqual(['package.json scripts.test changed']);
    expect(
      await changesAfter(files, {
        'package.json': pkg({ ...base, scripts: { ...base.scripts, posttest: 'node fix.js' } }),
      }),
    ).toEqual(['package.json scripts.posttest added']);
    // `pretest` runs `npm run build`: build decides what the tests run too.
    expect(
      await changesAfter(files, { 'package.json': pkg({ ...base, scripts: { ...base.scripts, build: 'true' } }) }),
    ).toEqual(['package.json scripts.build changed']);
    expect(
      await changesAfter(files, { 'package.json': pkg({ ...base, mocha: { reporter: 'dot' }, type: 'commonjs' }) }),
    ).toEqual(['package.json mocha added', 'package.json type changed']);
  });

  it('leaves the rest of package.json free: dependencies, other scripts, exports, formatting', async () => {
    const files = { 'package.json': pkg(base) };
    const edited = {
      ...base,
      exports: { '.': './src/index.js' },
      dependencies: { a: '2', b: '1' },
      scripts: { ...base.scripts, start: 'node src/index.js' },
    };
    expect(await changesAfter(files, { 'package.json': JSON.stringify(edited) })).toEqual([]);
  });

  it('locks scripts named by the lint and typecheck commands', async () => {
    const files = { 'package.json': pkg({ ...base, scripts: { ...base.scripts, lint: 'eslint .' } }) };
    const edit = { 'package.json': pkg({ ...base, scripts: { ...base.scripts, lint: 'true' } }) };
    expect(await changesAfter(files, edit, ['npm test'])).toEqual([]);
    expect(await changesAfter(files, edit, ['npm test', 'npm run lint'])).toEqual([
      'package.json scripts.lint changed',
    ]);
  });
});

describe('lockVerification: Python', () => {
  const pyproject = `[project]\nname = "calc"\nversion = "1.0"\ndependencies = []\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n`;

  it('locks [tool.pytest.ini_options] but not the rest of pyproject.toml', async () => {
    const files = { 'pyproject.toml': pyproject };
    expect(
      await changesAfter(files, {
        'pyproject.toml': pyproject.replace('dependencies = []', 'dependencies = ["attrs"]'),
      }),
    ).toEqual([]);
    expect(
      await changesAfter(files, { 'pyproject.toml': `${pyproject}addopts = "-p no:warnings --deselect tests"\n` }),
    ).toEqual(['pyproject.toml [tool.pytest] changed']);
  });

  it('locks conftest.py anywhere, pytest.ini, setup.cfg [tool:pytest] and interpreter hooks', async () => {
    const files = {
      'pytest.ini': '[pytest]\n',
      'setup.cfg': '[metadata]\nname = calc\n\n[tool:pytest]\ntestpaths = tests\n',
    };
    expect(
      await changesAfter(files, {
        'tests/unit/conftest.py': 'def pytest_runtest_makereport(item, call):\n    pass\n',
        'sitecustomize.py': 'import os\n',
        'src/hook.pth': 'import os\n',
      }),
    ).toEqual(['sitecustomize.py added', 'src/hook.pth added', 'tests/unit/conftest.py added']);
    expect(
      await changesAfter(files, { 'setup.cfg': '[metadata]\nname = calc2\n\n[tool:pytest]\ntestpaths = tests\n' }),
    ).toEqual([]);
    expect(
      await changesAfter(files, { 'setup.cfg': '[metadata]\nname = calc\n\n[tool:pytest]\ntestpaths = other\n' }),
    ).toEqual(['setup.cfg [tool:pytest] changed']);
  });
});

describe('lockVerification: files that something names', () => {
  it('locks the files the commands load and those runner configuration names, not the code they check', async () => {
    const root = await makeProject({
      'package.json': pkg({ name: 'x', scripts: { test: 'node --test --import ./test/setup.mjs' } }),
      'test/setup.mjs': '',
      'jest.config.js': "module.exports = { setupFilesAfterEnv: ['<rootDir>/jest.setup.js'] };\n",
      'jest.setup.js': '',
      'scripts/lint.mjs': '',
      'calc.py': '',
      'tsconfig.json': '{ "files": ["src/index.ts"] }',
      'src/index.ts': '',
    });
    const lock = await lockVerification(root, ['npm test', 'node scripts/lint.mjs', 'mypy calc.py']);
    expect(lock.files).toEqual(
      expect.arrayContaining([
        'jest.config.js',
        'jest.setup.js',
        'scripts/lint.mjs',
        'test/setup.mjs',
        'tsconfig.json',
      ]),
    );
    expect(lock.files).not.toContain('calc.py');
    expect(lock.files).not.toContain('src/index.ts');
    expect(lock.namedBy['jest.setup.js']).toBe('jest.config.js');
    expect(lock.namedBy['scripts/lint.mjs']).toBe('`node scripts/lint.mjs`');
  });

  it('names each change for the model', async () => {
    const root = await makeProject({ 'package.json': pkg({ scripts: { test: 'node --test' } }), '.mocharc.yml': '' });
    const before = await lockVerification(root, ['npm test']);
    await write(root, { '.mocharc.yml': 'reporter: dot\n', 'vitest.config.ts': 'export default {}\n' });
    await rm(path.join(root, 'package.json'));
    expect(describeVerificationChanges(diffVerification(before, await lockVerification(root, ['npm test'])))).toEqual([
      '.mocharc.yml (changed)',
      'package.json (scripts.test removed)',
      'vitest.config.ts (added)',
    ]);
  });
});

describe('isVerificationFile and the refactor matcher', () => {
  it('knows runner, build and lint settings by name', () => {
    for (const file of [
      '.cargo/config.toml',
      'crates/a/.cargo/config',
      '.npmrc',
      'pom.xml',
      'go.mod',
      'Cargo.toml',
      'ava.config.js',
      '.c8rc.json',
      'deep/dir/conftest.py',
    ])
      expect(isVerificationFile(file), file).toBe(true);
    for (const file of ['src/config.ts', 'src/npmrc.ts', 'conftest.txt'])
      expect(isVerificationFile(file), file).toBe(false);
  });

  it('adds what the verifier commands execute or load', async () => {
    const root = await makeProject({ 'scripts/check.sh': 'exit 0\n', 'src/app.ts': '' });
    const matcher = verificationFileMatcher(['./scripts/check.sh --all', 'npx tsc --noEmit src/app.ts'], root);
    expect(matcher('scripts/check.sh')).toBe(true);
    expect(matcher('src/app.ts')).toBe(false);
  });
});
