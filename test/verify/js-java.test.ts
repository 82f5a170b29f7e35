import { copyFile, mkdir, readFile, rename, utimes } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { createProcessRunner } from '../../src/process/runner.js';
import { parseJestJson } from '../../src/verify/parsers/jest-json.js';
import { parseJunitXml } from '../../src/verify/parsers/junit-xml.js';
import { parseTap } from '../../src/verify/parsers/tap.js';
import { detectTestCommand } from '../../src/verify/detect.js';
import { redGate } from '../../src/verify/gates.js';
import { runTests } from '../../src/verify/run-tests.js';
import { FIXTURES, REPO_ROOT, linkPackages, makeProject } from './helpers.js';

const VITEST_BIN = path.join(REPO_ROOT, 'node_modules/.bin/vitest');

describe('vitest (the project’s own vitest on a temp project)', () => {
  const project = async (script?: string): Promise<string> => {
    const root = await makeProject({
      'package.json': JSON.stringify({
        name: 'vt',
        type: 'module',
        ...(script === undefined ? {} : { scripts: { test: script } }),
      }),
      'vitest.config.js': "export default { test: { include: ['test/**/*.test.js'] } };\n",
      'test/math.test.js': [
        "import { describe, expect, test } from 'vitest';",
        "test('adds', () => { expect(1 + 1).toBe(2); });",
        "test('compares', () => { expect(1 + 1).toBe(3); });",
        "test('throws', () => { const value = null; return value.length; });",
        "describe('suite', () => { test('deep', () => { expect([1]).toEqual([2]); }); test.skip('later', () => {}); });",
      ].join('\n'),
      'test/missing.test.js': "import './not-there.js';\nimport { test } from 'vitest';\ntest('never', () => {});\n",
    });
    await linkPackages(root, ['vitest']);
    return root;
  };

  it('appends the JSON reporter to a direct vitest command', async () => {
    const root = await project();
    const result = await runTests({
      command: `${VITEST_BIN} run`,
      framework: 'vitest',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 120_000,
      reportDir: path.join(root, '.r'),
    });
    expect(result.source).toBe('jest-json');
    const byId = Object.fromEntries(result.tests.map((test) => [test.id, test]));
    expect(byId['test/math.test.js::adds']?.status).toBe('passed');
    expect(byId['test/math.test.js::compares']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['test/math.test.js::throws']).toMatchObject({ status: 'failed', failureKind: 'error' });
    expect(byId['test/math.test.js::suite > deep']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['test/math.test.js::suite > later']?.status).toBe('skipped');
    expect(byId['test/missing.test.js::(collection)']).toMatchObject({ failureKind: 'collection' });
    expect(result.collectionErrors).toHaveLength(1);
    expect(result.collectionErrors[0]).toContain('not-there.js');
  });

  it('passes the reporter through `npm test` when the script is a bare vitest call', async () => {
    const root = await project(`${VITEST_BIN} run`);
    const result = await runTests({
      command: 'npm test',
      framework: 'vitest',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 120_000,
      reportDir: path.join(root, '.r'),
    });
    expect(result.command).toContain('npm test -- --reporter=default --reporter=json');
    expect(result.source).toBe('jest-json');
    expect(result.counts).toMatchObject({ passed: 1, skipped: 1 });
  });

  it('reads a monorepo subproject through `cd <dir> && npm test`, and a script that sets variables first', async () => {
    const sub = await project(`NODE_ENV=test ${VITEST_BIN} run`);
    const root = await makeProject({ 'README.md': '# monorepo\n' });
    await rename(sub, path.join(root, 'frontend'));
    const detected = await detectTestCommand(root, 'cd frontend && npm test');
    expect(detected.framework).toBe('vitest');
    const result = await runTests({
      command: detected.command,
      framework: detected.framework,
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 120_000,
      reportDir: path.join(root, '.r'),
    });
    expect(result.command).toMatch(/^cd frontend && npm test -- --reporter=default --reporter=json /);
    expect(result.source).toBe('jest-json');
    expect(result.tests).toContainEqual(
      expect.objectContaining({ id: 'frontend/test/math.test.js::compares', failureKind: 'assertion' }),
    );
    expect(result.counts).toMatchObject({ passed: 1, skipped: 1 });
  });

  it('does not append to a compound script and falls back to the exit code', async () => {
    const root = await project(`${VITEST_BIN} run && echo done`);
    const result = await runTests({
      command: 'npm test',
      framework: 'vitest',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 120_000,
      reportDir: path.join(root, '.r'),
    });
    expect(result.command).toBe('npm test');
    expect(result.source).toBe('exit-code');
    expect(result.exitCode).not.toBe(0);
    expect(result.tests).toEqual([]);
  });
});

describe('jest JSON report (captured fixture)', () => {
  it('classifies matcher failures, errors and files that failed to run', async () => {
    // Captured from `npx jest --json --outputFile=...` with jest 30.5.2 in /tmp/jt.
    const report: unknown = JSON.parse(await readFile(path.join(FIXTURES, 'jest/jest-30-report.json'), 'utf8'));
    const parsed = parseJestJson(report, { cwd: '/tmp/jt' });
    const byId = Object.fromEntries(parsed.tests.map((test) => [test.id, test]));
    expect(byId['test/a.test.js::passes']?.status).toBe('passed');
    expect(byId['test/a.test.js::assert fails']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['test/a.test.js::type error']).toMatchObject({ status: 'failed', failureKind: 'error' });
    expect(byId['test/a.test.js::suite > inner']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['test/a.test.js::suite > skipped']?.status).toBe('skipped');
    expect(byId['test/b.test.js::(collection)']?.message).toContain("Cannot find module './nope'");
    expect(byId['test/c.test.js::(collection)']?.message).toContain('Jest encountered an unexpected token');
    expect(parsed.collectionErrors).toHaveLength(2);
  });

  it('rejects a report of another shape', () => {
    // The schema's refusal naming what is missing: a parser that crashed on the missing field
    // (a TypeError) would throw as well.
    let thrown: unknown;
    try {
      parseJestJson({ results: [] });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ZodError);
    expect((thrown as ZodError).issues).toMatchObject([
      { code: 'invalid_type', expected: 'array', path: ['testResults'] },
    ]);
  });
});

describe('Maven Surefire reports', () => {
  it('parses captured surefire 3.2.5 XML: failure vs error vs skipped', async () => {
    // Captured from `mvn -o test` (surefire 3.2.5, JUnit Jupiter 5.11.4); <property> lines removed.
    const xml = await readFile(path.join(FIXTURES, 'surefire/TEST-com.example.CalcTest$Inner.xml'), 'utf8');
    const parsed = parseJunitXml(xml);
    const byId = Object.fromEntries(parsed.tests.map((test) => [test.id, test]));
    expect(byId['com.example.CalcTest::passes']?.status).toBe('passed');
    expect(byId['com.example.CalcTest::fails']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['com.example.CalcTest::fails']?.message).toContain('expected: <3> but was: <2>');
    expect(byId['com.example.CalcTest::throwsNpe']).toMatchObject({ status: 'failed', failureKind: 'error' });
    expect(byId['com.example.CalcTest::skipped']?.status).toBe('skipped');
    expect(byId['com.example.CalcTest$Inner::innerOk']?.status).toBe('passed');
  });

  it('calls a JUnit 5 @Timeout (java.util.concurrent.TimeoutException) a timeout', async () => {
    // Captured from `mvn -o test` (surefire 3.2.5, JUnit Jupiter 5.11.4); <property> lines removed.
    const xml = await readFile(path.join(FIXTURES, 'surefire/TEST-ex.FailTest$Inner.xml'), 'utf8');
    const kinds = Object.fromEntries(
      parseJunitXml(xml).tests.map((test) => [test.id, test.failureKind ?? test.status]),
    );
    expect(kinds).toEqual({
      'ex.FailTest::timesOut': 'assertion', // assertTimeoutPreemptively fails an assertion
      'ex.FailTest::plainRuntime': 'error',
      'ex.FailTest::npe': 'error',
      'ex.FailTest::unsupported': 'error',
      'ex.FailTest::assertFails': 'assertion',
      'ex.FailTest::annotatedTimeout': 'timeout',
      'ex.FailTest::skipped': 'skipped',
      'ex.FailTest$Inner::innerFails': 'assertion',
    });
  });

  it('reads only report files written by this run', async () => {
    const root = await makeProject({ 'pom.xml': '<project/>\n' });
    const reports = path.join(root, 'target/surefire-reports');
    await mkdir(reports, { recursive: true });
    // A stale report from an earlier run must be ignored.
    await copyFile(
      path.join(FIXTURES, 'surefire/TEST-com.example.CalcTest$Inner.xml'),
      path.join(reports, 'TEST-com.example.Old.xml'),
    );
    const old = new Date(Date.now() - 3_600_000);
    await utimes(path.join(reports, 'TEST-com.example.Old.xml'), old, old);
    const source = path.join(FIXTURES, 'surefire/TEST-com.example.CalcTest.xml');
    const result = await runTests({
      command: `cp '${source}' target/surefire-reports/ && exit 1`,
      framework: 'maven',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 30_000,
      reportDir: path.join(root, '.r'),
    });
    // The fresh file is the surefire suite file for the outer class, which holds no test cases.
    expect(result.source).toBe('exit-code');
    const fresh = await runTests({
      command: `cp '${path.join(FIXTURES, 'surefire/TEST-com.example.CalcTest$Inner.xml')}' target/surefire-reports/TEST-New.xml`,
      framework: 'maven',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 30_000,
      reportDir: path.join(root, '.r'),
    });
    expect(fresh.source).toBe('junit-xml');
    expect(fresh.tests).toHaveLength(5);
  });

  it('reports a test compilation failure from the console when no report exists', async () => {
    const root = await makeProject({ 'pom.xml': '<project/>\n' });
    // Captured console output of `mvn -o -B test` with a test that does not compile.
    const fixture = path.join(FIXTURES, 'maven/mvn-test-compile-error.txt');
    const result = await runTests({
      command: `cat '${fixture}'; exit 1`,
      framework: 'maven',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 30_000,
      reportDir: path.join(root, '.r'),
    });
    expect(result.source).toBe('exit-code');
    expect(result.collectionErrors).toHaveLength(1);
    expect(result.collectionErrors[0]).toContain('cannot find symbol');
  });

  it('strips the colours Maven writes even into a pipe, and names the file that does not compile', async () => {
    const root = await makeProject({ 'pom.xml': '<project/>\n' });
    // Captured console output of `mvn -o test` (no -B) through a pipe.
    const fixture = path.join(FIXTURES, 'maven/mvn-test-compile-error-color.txt');
    const result = await runTests({
      command: `cat '${fixture}'; exit 1`,
      framework: 'maven',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 30_000,
      reportDir: path.join(root, '.r'),
    });
    expect(result.collectionErrors).toHaveLength(1);
    const [error = ''] = result.collectionErrors;
    expect(error).not.toContain('\u001b');
    expect(error).toMatch(/^\/tmp\/mvc\/src\/test\/java\/ex\/MulTest\.java: \[ERROR\] COMPILATION ERROR/);
    expect(error).toContain('cannot find symbol');
    expect(redGate(result, result)).toMatchObject({ subjects: ['/tmp/mvc/src/test/java/ex/MulTest.java'] });
  });
});

describe('mocha TAP (captured fixture)', () => {
  it('classifies assertions, errors, a plain Error stub and timeouts from the TAP 13 diagnostics', async () => {
    // Captured from `npx mocha --reporter tap --reporter-option tapVersion=13` with mocha 12.0.3.
    const tap = await readFile(path.join(FIXTURES, 'mocha/mocha-12-tap13.txt'), 'utf8');
    const parsed = parseTap(tap);
    expect(parsed.tests.map((test) => [test.id, test.status, test.failureKind])).toEqual([
      ['::m ok', 'passed', undefined],
      ['::m bad', 'failed', 'assertion'],
      ['::outer type error', 'failed', 'error'],
      ['::outer plain error', 'failed', 'error'],
      ['::outer later', 'skipped', undefined],
      ['::outer slow', 'failed', 'timeout'],
      ['::outer inner deep ok', 'passed', undefined],
    ]);
    expect(parsed.tests[1]?.message).toContain('AssertionError [ERR_ASSERTION]: 1 == 2');
  });
});
