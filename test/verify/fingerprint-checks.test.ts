import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isRatchetError } from '../../src/core/errors.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { commandEnvironment } from '../../src/process/env.js';
import { runCheck } from '../../src/verify/checks.js';
import { DEFAULT_TEST_GLOBS, diffFingerprints, fingerprintFiles } from '../../src/verify/fingerprint.js';
import { makeProject } from './helpers.js';

describe('fingerprintFiles', () => {
  it('hashes test files of every ecosystem and ignores dependencies and caches', async () => {
    const root = await makeProject({
      'src/app.ts': 'export const x = 1;\n',
      'src/app.test.ts': 'test\n',
      'src/app.spec.js': 'spec\n',
      'src/__tests__/a.js': 'a\n',
      'test/helper.ts': 'h\n',
      'tests/test_calc.py': 'py\n',
      'tests/__pycache__/test_calc.cpython-311.pyc': 'bytecode',
      'pkg/calc_test.py': 'py2\n',
      'conftest.py': 'c\n',
      'calc_test.go': 'go\n',
      'src/test/java/CalcTest.java': 'java\n',
      'node_modules/lib/x.test.js': 'dep\n',
      'dist/app.test.js': 'built\n',
      'calc.py': 'not a test\n',
    });
    const prints = await fingerprintFiles(root, DEFAULT_TEST_GLOBS);
    expect(Object.keys(prints)).toEqual([
      'calc_test.go',
      'conftest.py',
      'pkg/calc_test.py',
      'src/__tests__/a.js',
      'src/app.spec.js',
      'src/app.test.ts',
      'src/test/java/CalcTest.java',
      'test/helper.ts',
      'tests/test_calc.py',
    ]);
    expect(prints['conftest.py']).toMatch(/^[0-9a-f]{64}$/);
  });

  it('detects changed, added and removed files', async () => {
    const root = await makeProject({ 'a.test.js': '1', 'b.test.js': '2' });
    const before = await fingerprintFiles(root);
    await writeFile(path.join(root, 'a.test.js'), 'changed');
    await rm(path.join(root, 'b.test.js'));
    await mkdir(path.join(root, 'tests'));
    await writeFile(path.join(root, 'tests/c.rs'), 'new');
    expect(diffFingerprints(before, await fingerprintFiles(root))).toEqual({
      changed: ['a.test.js'],
      added: ['tests/c.rs'],
      removed: ['b.test.js'],
    });
    expect(diffFingerprints(before, before)).toEqual({ changed: [], added: [], removed: [] });
  });

  it('honours extra ignore globs', async () => {
    const root = await makeProject({ 'a.test.js': '1', 'fixtures/b.test.js': '2' });
    expect(Object.keys(await fingerprintFiles(root, ['**/*.test.js'], ['fixtures/**']))).toEqual(['a.test.js']);
  });
});

describe('runCheck', () => {
  const runner = createProcessRunner();
  it('passes on exit 0 and fails otherwise, keeping the output', async () => {
    const root = await makeProject({});
    expect(await runCheck({ name: 'lint', command: 'echo clean', cwd: root, runner, timeoutMs: 10_000 })).toMatchObject(
      { ok: true, exitCode: 0, output: 'clean\n' },
    );
    const failed = await runCheck({
      name: 'typecheck',
      command: 'echo "error TS2322" >&2; exit 2',
      cwd: root,
      runner,
      timeoutMs: 10_000,
    });
    expect(failed).toMatchObject({ name: 'typecheck', ok: false, exitCode: 2, timedOut: false });
    expect(failed.output).toContain('error TS2322');
  });

  describe('with provider keys in the environment', () => {
    afterEach(() => {
      vi.unstubAllEnvs();
    });

    it('runs the project`s commands without them, so no output can show them', async () => {
      vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-never-in-a-log-0123456789');
      vi.stubEnv('OPENAI_API_KEY', 'sk-openai-never-in-a-log-0123456789');
      vi.stubEnv('PROJECT_SETTING', 'kept');
      const root = await makeProject({});
      const result = await runCheck({ name: 'lint', command: 'env', cwd: root, runner, timeoutMs: 10_000 });
      expect(result.ok).toBe(true);
      expect(result.output).not.toContain('never-in-a-log');
      expect(result.output).not.toMatch(/^(ANTHROPIC|OPENAI)_API_KEY=/m);
      // An allowlisted environment: a variable of the project's reaches it when named ([bash] env).
      expect(result.output).not.toContain('PROJECT_SETTING');
      const passed = await runCheck({
        name: 'lint',
        command: 'env',
        cwd: root,
        runner,
        timeoutMs: 10_000,
        environment: commandEnvironment(process.env, ['PROJECT_SETTING']),
      });
      expect(passed.output).toContain('PROJECT_SETTING=kept');
      expect(passed.output).not.toContain('never-in-a-log');
    });
  });

  it('fails on timeout', async () => {
    const root = await makeProject({});
    expect(await runCheck({ name: 'lint', command: 'sleep 30', cwd: root, runner, timeoutMs: 300 })).toMatchObject({
      ok: false,
      timedOut: true,
    });
  });

  it('throws interrupted when aborted', async () => {
    const root = await makeProject({});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const error: unknown = await runCheck({
      name: 'lint',
      command: 'sleep 30',
      cwd: root,
      runner,
      timeoutMs: 10_000,
      signal: controller.signal,
    }).catch((caught: unknown) => caught);
    expect(isRatchetError(error, 'interrupted')).toBe(true);
  });
});
