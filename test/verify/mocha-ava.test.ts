/**
 * Issue 11, finding 9: `mocha --reporter spec` (body-parser's and express's `npm test`) read as
 * "0 passed, 0 failed" for 273 passing tests. Real mocha and ava (test/support/js-runners.ts),
 * through `npm test`, whatever reporter the script names.
 */
import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createProcessRunner } from '../../src/process/runner.js';
import type { Framework } from '../../src/verify/detect.js';
import { detectTestCommand } from '../../src/verify/detect.js';
import { requireReadableResults, runTests } from '../../src/verify/run-tests.js';
import { jsRunnersNodeModules } from '../support/js-runners.js';
import { makeProject } from './helpers.js';

let modules: string;
beforeAll(() => {
  modules = jsRunnersNodeModules();
}, 300_000);

const MOCHA_TESTS = {
  'test/support/env.js': "process.env.NODE_ENV = 'test';\n",
  'test/body.js': [
    "const assert = require('node:assert');",
    "describe('bodyParser()', () => {",
    "  it('parses JSON', () => { assert.deepEqual(JSON.parse('{\"a\":1}'), { a: 1 }); });",
    "  it('parses text', () => { assert.equal(String('x'), 'x'); });",
    "  it.skip('parses XML', () => {});",
    '});',
  ].join('\n'),
  'test/acceptance/app.js': [
    "const assert = require('node:assert');",
    "describe('app', () => { it('responds', () => { assert.ok(true); }); it('fails', () => { assert.equal(1, 2); }); });",
  ].join('\n'),
};

async function project(
  scripts: Record<string, string>,
  files: Record<string, string>,
  fields: Record<string, unknown> = {},
): Promise<string> {
  const root = await makeProject({
    'package.json': JSON.stringify({ name: 'x', version: '1.0.0', scripts, ...fields }),
    ...files,
  });
  await symlink(modules, path.join(root, 'node_modules'), 'dir');
  return root;
}

async function run(root: string, framework?: Framework) {
  const detected = await detectTestCommand(root);
  return runTests({
    command: detected.command,
    framework: framework ?? detected.framework,
    cwd: root,
    runner: createProcessRunner(),
    timeoutMs: 120_000,
  });
}

describe('mocha, whatever reporter its script names', () => {
  it("reads body-parser's `mocha --reporter spec --check-leaks test/`", async () => {
    const root = await project({ test: 'mocha --reporter spec --check-leaks test/' }, MOCHA_TESTS);
    const result = await run(root);
    expect(result.source).toBe('tap');
    expect(result.counts).toEqual({ passed: 2, failed: 0, skipped: 1, total: 3 });
    expect(result.problem).toBeUndefined();
  }, 60_000);

  it("reads express's `mocha --require test/support/env --reporter spec --check-leaks test/ test/acceptance/`", async () => {
    const root = await project(
      { test: 'mocha --require test/support/env --reporter spec --check-leaks test/ test/acceptance/' },
      MOCHA_TESTS,
    );
    const result = await run(root);
    expect(result.exitCode).toBe(1);
    expect(result.counts).toEqual({ passed: 3, failed: 1, skipped: 1, total: 5 });
    expect(result.tests.find((test) => test.status === 'failed')).toMatchObject({
      name: 'app fails',
      failureKind: 'assertion',
    });
  }, 60_000);

  it('reads a reporter chosen in .mocharc, and mocha inside a longer command line (MOCHA_OPTIONS)', async () => {
    const rc = await project({ test: 'mocha test/' }, { ...MOCHA_TESTS, '.mocharc.yml': 'reporter: dot\n' });
    expect((await run(rc)).counts.total).toBe(3);
    const compound = await project({ test: 'mocha test/ && echo done' }, MOCHA_TESTS);
    const result = await run(compound);
    expect(result.counts).toEqual({ passed: 2, failed: 0, skipped: 1, total: 3 });
    expect(result.problem).toBeUndefined();
  }, 60_000);

  it('refuses, before any run, a longer command line that names its own reporter', async () => {
    const root = await project({ test: 'mocha --reporter spec test/ && echo done' }, MOCHA_TESTS);
    const error = await requireReadableResults({ command: 'npm test', framework: 'mocha', cwd: root }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'config', hint: expect.stringContaining('npx mocha') as unknown });
    // Had it run anyway: no per-test result, never a pass.
    const result = await run(root);
    expect(result.problem).toMatchObject({ kind: 'unreadable', hint: expect.stringContaining('npx mocha') as unknown });
  }, 60_000);

  it('takes a run cut short by process.exit(0) in the code under test for what it is', async () => {
    const root = await project(
      { test: 'mocha --reporter spec test/' },
      {
        'test/exit.js': [
          "const assert = require('node:assert');",
          "describe('calc', () => { it('adds', () => { assert.equal(1 + 1, 2); }); it('multiplies', () => { process.exit(0); }); it('divides', () => { assert.equal(1, 2); }); });",
        ].join('\n'),
      },
    );
    const result = await run(root);
    expect(result.exitCode).toBe(0);
    expect(result.problem).toMatchObject({
      kind: 'inconsistent',
      message: expect.stringContaining('without its plan') as unknown,
    });
  }, 60_000);
});

describe('ava', () => {
  it('reads `ava` through npm test (--tap added)', async () => {
    const root = await project(
      { test: 'ava' },
      {
        'test/a.js': [
          "import test from 'ava';",
          "test('adds', (t) => { t.is(1 + 1, 2); });",
          "test('fails', (t) => { t.is(1, 2); });",
          "test.skip('skipped', () => {});",
        ].join('\n'),
      },
      { type: 'module' },
    );
    const result = await run(root);
    expect(result.source).toBe('tap');
    expect(result.counts).toEqual({ passed: 1, failed: 1, skipped: 1, total: 3 });
    expect(result.tests.find((test) => test.status === 'failed')).toMatchObject({ name: 'fails' });
  }, 60_000);
});
