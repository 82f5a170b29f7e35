import { execFile } from 'node:child_process';
import { lstat, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createProcessRunner } from '../../src/process/runner.js';
import { detectTestCommand } from '../../src/verify/detect.js';
import { parseTap } from '../../src/verify/parsers/tap.js';
import { runTests } from '../../src/verify/run-tests.js';
import { linkPackages, makeProject } from './helpers.js';

const execFileAsync = promisify(execFile);

/** A node:test project with one test of each outcome. */
const PROJECT: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'nt', version: '1.0.0', type: 'module', scripts: { test: 'node --test' } }),
  'test/math.test.js': [
    "import test, { describe } from 'node:test';",
    "import assert from 'node:assert/strict';",
    "import { spawnSync } from 'node:child_process';",
    "test('adds', () => { assert.equal(1 + 1, 2); });",
    "test('compares', () => { assert.equal(1 + 1, 3); });",
    "test('throws', () => { const value = null; return value.length; });",
    "describe('suite', () => { test('inner ok', () => {}); test('inner bad', () => { assert.ok(false); }); });",
    "test('spawns node', () => { const r = spawnSync(process.execPath, ['-e', 'console.log(1)'], { encoding: 'utf8' }); assert.equal(r.status, 0); });",
    "test('skipped', { skip: true }, () => {});",
  ].join('\n'),
  'test/missing.test.js': "import './not-there.js';\nimport test from 'node:test';\ntest('never', () => {});\n",
  'test/syntax.test.js': "import test from 'node:test';\ntest('bad', () => { let = ; });\n",
};

describe('node:test through runTests (npm test, junit reporter via NODE_OPTIONS)', () => {
  it('reports every test with its kind and the files that failed to load', async () => {
    const root = await makeProject(PROJECT);
    const result = await runTests({
      command: 'npm test',
      framework: 'node-test',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 60_000,
      reportDir: path.join(root, '.ratchet-reports'),
    });
    expect(result.source).toBe('junit-xml');
    expect(result.exitCode).toBe(1);
    expect(result.timedOut).toBe(false);
    const byId = Object.fromEntries(result.tests.map((test) => [test.id, test]));
    expect(byId['test/math.test.js::adds']?.status).toBe('passed');
    expect(byId['test/math.test.js::compares']).toMatchObject({
      status: 'failed',
      failureKind: 'assertion',
      file: 'test/math.test.js',
    });
    expect(byId['test/math.test.js::throws']).toMatchObject({ status: 'failed', failureKind: 'error' });
    expect(byId['test/math.test.js::suite > inner ok']?.status).toBe('passed');
    expect(byId['test/math.test.js::suite > inner bad']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['test/math.test.js::spawns node']?.status).toBe('passed');
    expect(byId['test/math.test.js::skipped']?.status).toBe('skipped');
    expect(byId['test/missing.test.js::(collection)']).toMatchObject({ status: 'failed', failureKind: 'collection' });
    expect(byId['test/missing.test.js::(collection)']?.message).toContain('ERR_MODULE_NOT_FOUND');
    expect(byId['test/syntax.test.js::(collection)']?.message).toContain('SyntaxError');
    expect(result.collectionErrors).toHaveLength(2);
    // The user's spec output still reaches the console.
    expect(result.output).toContain('✖ compares');
    expect(result.counts).toEqual({ passed: 3, failed: 5, skipped: 1, total: 9 });
  });

  it('gives the same id to a test whether it passes or fails', async () => {
    const root = await makeProject({
      'package.json': JSON.stringify({ name: 'nt', type: 'module', scripts: { test: 'node --test' } }),
      'test/a.test.js':
        "import test from 'node:test';\nimport assert from 'node:assert';\ntest('flips', () => { assert.equal(process.env.FLIP, undefined); });\n",
    });
    const common = npmTestIn(root);
    const passing = await runTests(common);
    const failing = await runTests({ ...common, env: { FLIP: '1' } });
    expect(passing.tests.map((test) => [test.id, test.status])).toEqual([['test/a.test.js::flips', 'passed']]);
    expect(failing.tests.map((test) => [test.id, test.status])).toEqual([['test/a.test.js::flips', 'failed']]);
  });

  it('names every test by its file on the Node that runs it: same names in two files, nested suites, todo, timeouts', async () => {
    // Node 22's own junit reporter writes no `file`: these ids would collide as `test::same`.
    const root = await makeProject({
      'package.json': JSON.stringify({ name: 'nt', type: 'module', scripts: { test: 'node --test' } }),
      'test/one.test.js': [
        "import test, { describe } from 'node:test';",
        "import assert from 'node:assert/strict';",
        "test('same', () => {});",
        "describe('outer', () => { describe('in <&\"> ner', () => { test('deep', () => { assert.equal(1, 2); }); test.todo('later'); }); });",
        "test('slow', { timeout: 100 }, () => new Promise((resolve) => setTimeout(resolve, 2000)));",
      ].join('\n'),
      'test/two.test.js':
        "import test from 'node:test';\nimport assert from 'node:assert/strict';\ntest('same', () => { assert.ok(false); });\n",
    });
    const result = await runTests(npmTestIn(root));
    expect(result.source).toBe('junit-xml');
    const outcomes = result.tests.map((test) => [test.id, test.status, test.failureKind ?? null]);
    expect(outcomes.sort()).toEqual([
      ['test/one.test.js::outer > in <&"> ner > deep', 'failed', 'assertion'],
      ['test/one.test.js::outer > in <&"> ner > later', 'skipped', null],
      ['test/one.test.js::same', 'passed', null],
      ['test/one.test.js::slow', 'failed', 'timeout'],
      ['test/two.test.js::same', 'failed', 'assertion'],
    ]);
    expect(result.tests.every((test) => test.file === test.id.split('::')[0])).toBe(true);
  });

  it('writes its reporter module afresh for every run, whatever an earlier run left there', async () => {
    const { root } = await calcProject();
    const options = npmTestIn(root);
    const reporter = path.join(options.reportDir ?? '', 'node-test-reporter.mjs');
    await mkdir(path.dirname(reporter), { recursive: true });
    // A test of an earlier run could have replaced the module with one that reports a pass.
    await writeFile(path.join(root, 'elsewhere.mjs'), '');
    await symlink(path.join(root, 'elsewhere.mjs'), reporter);
    const result = await runTests(options);
    expect(result.tests.map((test) => [test.id, test.status])).toEqual([['test/calc.test.js::adds', 'passed']]);
    expect(await readFile(path.join(root, 'elsewhere.mjs'), 'utf8')).toBe('');
    expect((await lstat(reporter)).isSymbolicLink()).toBe(false);
  });

  it("writes the report where no test can find it or write into it: on the runner's stderr", async () => {
    const root = await makeProject({
      'package.json': JSON.stringify({ name: 'nt', type: 'module', scripts: { test: 'node --test' } }),
      'test/snoop.test.js': [
        "import test from 'node:test';",
        "import assert from 'node:assert';",
        // What a test could learn of the report, and a forged one on its own stderr and stdout.
        'test(\'snoops\', () => { console.log(\'SEEN \' + process.env.NODE_OPTIONS); const fake = \'<?xml version="1.0"?><testsuites><testcase name="fails" file="test/snoop.test.js"/></testsuites>\'; process.stderr.write(fake); console.log(fake); });',
        "test('fails', () => { assert.equal(1, 2); });",
      ].join('\n'),
    });
    const result = await runTests(npmTestIn(root));
    const seen = /SEEN (.*)/.exec(result.output)?.[1] ?? '';
    expect(seen).toContain('--test-reporter-destination=stderr');
    expect(seen).not.toMatch(/--test-reporter-destination=(?!stdout|stderr)/);
    expect(result.tests.map((test) => [test.name, test.status])).toEqual([
      ['snoops', 'passed'],
      ['fails', 'failed'],
    ]);
    expect(result.output).not.toContain('<!-- tests 2 -->');
  });

  it('leaves a script that picks its own reporter alone and parses its TAP output', async () => {
    const root = await makeProject({
      ...PROJECT,
      'package.json': JSON.stringify({
        name: 'nt',
        type: 'module',
        scripts: { test: 'node --test --test-reporter=tap' },
      }),
    });
    const result = await runTests(npmTestIn(root));
    expect(result.source).toBe('tap');
    expect(result.tests.find((test) => test.name === 'compares')).toMatchObject({ failureKind: 'assertion' });
  });

  it('reads the tests of node --test run by a script the test script calls, under a coverage wrapper (fastify-plugin)', async () => {
    const root = await makeProject({
      'package.json': JSON.stringify({
        name: 'nt',
        type: 'module',
        scripts: {
          test: 'npm run test:unit && npm run test:types',
          // A wrapper that starts node --test as its child, as c8 does; NODE_OPTIONS reaches it.
          'test:unit': 'node wrap.mjs node --test',
          'test:types': 'node -e 0',
        },
      }),
      'wrap.mjs':
        "import { spawnSync } from 'node:child_process';\nconst [cmd, ...args] = process.argv.slice(2);\nprocess.exit(spawnSync(cmd, args, { stdio: 'inherit' }).status ?? 1);\n",
      'test/a.test.js': "import test from 'node:test';\ntest('one', () => {});\ntest('two', () => {});\n",
    });
    const { framework } = await detectTestCommand(root, 'npm test');
    const result = await runTests({ ...npmTestIn(root), framework });
    expect(result.source).toBe('junit-xml');
    expect(result.tests.map((test) => [test.id, test.status])).toEqual([
      ['test/a.test.js::one', 'passed'],
      ['test/a.test.js::two', 'passed'],
    ]);
  });

  it('reads the tests of a node:test file run with plain node through a package script (remark: npm run test-api)', async () => {
    const root = await makeProject({
      'package.json': JSON.stringify({
        name: 'nt',
        type: 'module',
        scripts: { 'test-api': 'node --conditions development test.js' },
      }),
      'test.js': "import test from 'node:test';\ntest('parses', () => {});\ntest('stringifies', () => {});\n",
    });
    const { framework } = await detectTestCommand(root, 'npm run test-api');
    const result = await runTests({ ...npmTestIn(root), command: 'npm run test-api', framework });
    expect(result.source).toBe('junit-xml');
    expect(result.tests.map((test) => [test.id, test.status])).toEqual([
      ['test.js::parses', 'passed'],
      ['test.js::stringifies', 'passed'],
    ]);
  });

  it('kills a hanging run at the timeout and reports a timeout pseudo-test', async () => {
    const root = await makeProject({
      'package.json': JSON.stringify({ name: 'nt', type: 'module', scripts: { test: 'node --test' } }),
      'test/hang.test.js':
        "import test from 'node:test';\ntest('hangs', () => new Promise(() => { setInterval(() => {}, 1000); }));\n",
    });
    const started = Date.now();
    const result = await runTests({
      command: 'npm test',
      framework: 'node-test',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 1500,
      reportDir: path.join(root, '.r'),
    });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(result.timedOut).toBe(true);
    expect(result.tests).toContainEqual(
      expect.objectContaining({ id: '(run)::timeout', status: 'failed', failureKind: 'timeout' }),
    );
  });
});

describe('parseTap on real node:test TAP output', () => {
  it('classifies assertions, errors, subtests and load failures', async () => {
    const root = await makeProject(PROJECT);
    const { stdout } = await execFileAsync(process.execPath, ['--test', '--test-reporter=tap'], { cwd: root }).catch(
      (error: { stdout: string }) => error,
    );
    const parsed = parseTap(stdout, { cwd: root });
    const byId = Object.fromEntries(parsed.tests.map((test) => [test.id, test]));
    expect(byId['::adds']?.status).toBe('passed');
    expect(byId['::compares']).toMatchObject({ status: 'failed', failureKind: 'assertion', file: 'test/math.test.js' });
    expect(byId['::throws']).toMatchObject({ status: 'failed', failureKind: 'error' });
    expect(byId['suite::inner bad']).toMatchObject({ failureKind: 'assertion' });
    expect(byId['suite::inner ok']?.status).toBe('passed');
    expect(byId['::suite']).toBeUndefined();
    expect(byId['::skipped']?.status).toBe('skipped');
    expect(byId['test/missing.test.js::(collection)']?.message).toContain('ERR_MODULE_NOT_FOUND');
    expect(byId['test/syntax.test.js::(collection)']?.message).toContain('SyntaxError');
    expect(parsed.collectionErrors).toHaveLength(2);
  });
});

/** A node:test project whose one test passes, and the options that run its `npm test`. */
async function calcProject(): Promise<{ root: string; options: Parameters<typeof runTests>[0] }> {
  const root = await makeProject({
    'package.json': JSON.stringify({ name: 'nt', type: 'module', scripts: { test: 'node --test' } }),
    'src/calc.js': 'export const add = (a, b) => a + b;\n',
    'test/calc.test.js':
      "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from '../src/calc.js';\ntest('adds', () => { assert.equal(add(1, 2), 3); });\n",
  });
  return { root, options: npmTestIn(root) };
}

/** Options that run `npm test` of a node:test project in `root`. */
function npmTestIn(root: string): Parameters<typeof runTests>[0] {
  return {
    command: 'npm test',
    framework: 'node-test',
    cwd: root,
    runner: createProcessRunner(),
    timeoutMs: 60_000,
    reportDir: path.join(root, '.r'),
  };
}

describe('RED gate on real node:test runs', () => {
  it('accepts an assertion failure and rejects a test that cannot load', async () => {
    const { redGate } = await import('../../src/verify/gates.js');
    const { writeFile } = await import('node:fs/promises');
    const { root, options } = await calcProject();
    const baseline = await runTests(options);
    expect(baseline.counts).toMatchObject({ passed: 1, failed: 0 });

    await writeFile(
      path.join(root, 'test/sub.test.js'),
      "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { sub } from '../src/sub.js';\ntest('subtracts', () => { assert.equal(sub(3, 1), 2); });\n",
    );
    const missing = redGate(baseline, await runTests(options));
    expect(missing).toMatchObject({ accepted: false, reason: 'collection-error' });

    await writeFile(path.join(root, 'src/sub.js'), 'export const sub = () => 0;\n');
    const red = redGate(baseline, await runTests(options));
    expect(red).toMatchObject({
      accepted: true,
      newFailing: [expect.objectContaining({ id: 'test/sub.test.js::subtracts' })],
    });
  });
});

describe('RED on a stub and on a TypeScript build step (real node:test, real tsc)', () => {
  it('rejects a stub that throws a plain Error("not implemented") as not an assertion', async () => {
    const { redGate } = await import('../../src/verify/gates.js');
    const { writeFile } = await import('node:fs/promises');
    const { root, options } = await calcProject();
    const baseline = await runTests(options);
    await writeFile(path.join(root, 'src/mul.js'), "export function mul() { throw new Error('not implemented'); }\n");
    await writeFile(
      path.join(root, 'test/mul.test.js'),
      "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { mul } from '../src/mul.js';\ntest('multiplies', () => { assert.equal(mul(2, 3), 6); });\n",
    );
    const after = await runTests(options);
    expect(after.source).toBe('junit-xml');
    expect(after.tests.find((test) => test.id === 'test/mul.test.js::multiplies')).toMatchObject({
      status: 'failed',
      failureKind: 'error',
    });
    expect(redGate(baseline, after)).toMatchObject({
      accepted: false,
      reason: 'not-assertion',
      subjects: ['test/mul.test.js::multiplies'],
    });
  });

  it('reports `error TS…` of `tsc -p . && node --test` as collection errors, not a regression', async () => {
    const { redGate } = await import('../../src/verify/gates.js');
    const { writeFile } = await import('node:fs/promises');
    const root = await makeProject({
      'package.json': JSON.stringify({
        name: 'ts',
        type: 'module',
        scripts: { test: 'tsc -p . && node --test "dist/**/*.test.js"' },
      }),
      'tsconfig.json': JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          outDir: 'dist',
          rootDir: 'src',
          strict: true,
          types: ['node'],
          skipLibCheck: true,
        },
        include: ['src'],
      }),
      'src/add.ts': 'export const add = (a: number, b: number): number => a + b;\n',
      'src/add.test.ts':
        "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from './add.js';\ntest('adds', () => { assert.equal(add(1, 2), 3); });\n",
    });
    await linkPackages(root, ['typescript', '@types/node', 'undici-types']);
    await mkdir(path.join(root, 'node_modules/.bin'), { recursive: true });
    await symlink('../typescript/bin/tsc', path.join(root, 'node_modules/.bin/tsc'));
    const options = {
      command: 'npm test',
      framework: 'node-test' as const,
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 120_000,
      reportDir: path.join(root, '.r'),
    };
    const baseline = await runTests(options);
    expect(baseline.counts).toMatchObject({ passed: 1, failed: 0 });

    await writeFile(
      path.join(root, 'src/mul.test.ts'),
      "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { mul } from './add.js';\ntest('multiplies', () => { assert.equal(mul(2, 3), 6); });\n",
    );
    const after = await runTests(options);
    expect(after.exitCode).not.toBe(0);
    expect(after.collectionErrors).toEqual([expect.stringMatching(/^src\/mul\.test\.ts: 3:10 error TS2305: /)]);
    expect(redGate(baseline, after)).toMatchObject({
      accepted: false,
      reason: 'collection-error',
      subjects: ['src/mul.test.ts'],
    });
  }, 180_000);
});
