/**
 * A readable empty suite: a runner that states it ran no test (go's `[no test files]` package
 * skip, cargo's `running 0 tests` for every binary, jest's and vitest's "No tests found",
 * node:test's `ℹ tests 0`) gives results that read "nothing ran", as pytest's exit 5 does, so
 * TDD's baseline can start before the first test. What code under test prints (a Go `init` or a
 * Rust `.init_array` constructor that prints the empty-suite lines and exits 0, a test that prints
 * `running 0 tests`) is never taken for one, and an empty suite is never GREEN.
 */
import { readFile, symlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestRunResult } from '../../src/core/verification.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { greenGate, redGate, verifyGate } from '../../src/verify/gates.js';
import { parseCargoText } from '../../src/verify/parsers/cargo-text.js';
import { parseGoJson } from '../../src/verify/parsers/go-json.js';
import { jestFoundNoTests } from '../../src/verify/parsers/jest-json.js';
import { runTests } from '../../src/verify/run-tests.js';
import { requireGreenBaseline } from '../../src/workflows/tdd/context.js';
import { toolchain } from '../support/toolchains.js';
import { FIXTURES, linkPackages, makeProject, REPO_ROOT } from './helpers.js';

const fixture = (file: string): Promise<string> => readFile(path.join(FIXTURES, file), 'utf8');

describe('parsers on captured output (go 1.19.8, cargo 1.95.0)', () => {
  it('reads go test -json on a module without test files as an empty suite', async () => {
    const parsed = parseGoJson(await fixture('go/go119-no-test-files.stdout.jsonl'));
    expect(parsed).toMatchObject({ tests: [], collectionErrors: [], emptySuite: true });
  });

  it('does not read an init() that prints "[no test files]" and a skip event, then exits 0, as an empty suite', async () => {
    const parsed = parseGoJson(await fixture('go/go119-init-exit-0.stdout.jsonl'));
    expect(parsed.tests).toEqual([]);
    expect(parsed.emptySuite).toBeUndefined();
  });

  it('reads cargo test on a crate without tests (unit and doc-test binaries) as an empty suite', async () => {
    const parsed = parseCargoText(await fixture('cargo/cargo-195-no-tests.txt'));
    expect(parsed).toEqual({ tests: [], collectionErrors: [], emptySuite: true });
  });

  it('does not read a test that prints "running 0 tests" and exits 0 as an empty suite', async () => {
    const parsed = parseCargoText(await fixture('cargo/cargo-195-test-prints-running-0.txt'));
    expect(parsed.emptySuite).toBeUndefined();
  });

  it('reads jest 29 finding no test file as an empty suite, but not once a test file ran', async () => {
    const output = await fixture('jest/jest-29-no-tests.txt');
    expect(jestFoundNoTests(output)).toEqual({ tests: [], collectionErrors: [], emptySuite: true });
    expect(jestFoundNoTests(`PASS ./reverse.spec.js\n${output}`)).toBeUndefined();
  });

  it('reads the output of an .init_array constructor as cargo would print it: only the sources can tell', async () => {
    // The limit of reading the console: this forgery is byte for byte an empty suite.
    expect(parseCargoText(await fixture('cargo/cargo-195-init-array-exit-0.txt')).emptySuite).toBe(true);
  });
});

function result(tests: TestRunResult['tests'], exitCode = 0): TestRunResult {
  const counts = { passed: 0, failed: 0, skipped: 0, total: tests.length };
  for (const test of tests) counts[test.status] += 1;
  return {
    command: 'go test -json ./...',
    exitCode,
    timedOut: false,
    durationMs: 1,
    output: '',
    tests,
    collectionErrors: [],
    source: 'go-json',
    counts,
  };
}

describe('gates on an empty suite', () => {
  const empty = result([]);
  const red = result(
    [{ id: 'hamming::TestOne', name: 'TestOne', file: null, status: 'failed', failureKind: 'assertion' }],
    1,
  );

  it('lets a cycle start from it, and RED still needs a new test failing by assertion', () => {
    expect(() => requireGreenBaseline(empty, 'RED')).not.toThrow();
    expect(redGate(empty, empty)).toMatchObject({ accepted: false, reason: 'no-new-test' });
    expect(redGate(empty, red)).toMatchObject({ accepted: true });
  });

  it('never counts as GREEN, even with no test expected from RED', () => {
    expect(greenGate(empty, {}, {}, [])).toMatchObject({ accepted: false, reason: 'tests-not-run' });
    expect(greenGate(empty, {}, {}, ['hamming::TestOne'])).toMatchObject({ accepted: false, reason: 'tests-not-run' });
    const passing = result([{ id: 'hamming::TestOne', name: 'TestOne', file: null, status: 'passed' }]);
    expect(greenGate(passing, {}, {}, ['hamming::TestOne'])).toMatchObject({ accepted: true });
    // VERIFY after GREEN is unchanged: nothing failed.
    expect(verifyGate(empty, [])).toMatchObject({ accepted: true });
    // Jest's empty suite exits 1: never a pass for any gate.
    const jestEmpty = { ...result([], 1), source: 'jest-json' as const };
    expect(greenGate(jestEmpty, {}, {}, [])).toMatchObject({ accepted: false, reason: 'tests-failing' });
    expect(verifyGate(jestEmpty, [])).toMatchObject({ accepted: false, reason: 'tests-failing' });
  });
});

const go = toolchain('go');
const cargo = toolchain('cargo');
const jest = toolchain('polyglot-jest');
const runner = createProcessRunner();

const GO_MOD = 'module hamming\n\ngo 1.19\n';
const GO_CODE = 'package hamming\n\nfunc Distance(a, b string) int { return 0 }\n';

describe.skipIf(go.missing)(`go test ./... (real toolchain)${go.note}`, () => {
  const run = (root: string): Promise<TestRunResult> =>
    runTests({ command: 'go test ./...', framework: 'go', cwd: root, runner, timeoutMs: 120_000 });

  it('reads a module without test files as an empty suite, with no problem', async () => {
    const root = await makeProject({ 'go.mod': GO_MOD, 'hamming.go': GO_CODE });
    const read = await run(root);
    expect(read).toMatchObject({ exitCode: 0, source: 'go-json', tests: [], collectionErrors: [] });
    expect(read.problem).toBeUndefined();
  });

  it('does not take code that prints "[no test files]" in init() and exits 0 for an empty suite', async () => {
    const forger = [
      'package hamming',
      '',
      'import (',
      '\t"fmt"',
      '\t"os"',
      ')',
      '',
      'func init() {',
      '\tfmt.Println("?   \\thamming\\t[no test files]")',
      '\tfmt.Fprintln(os.Stderr, `{"Action":"skip","Package":"hamming","Elapsed":0}`)',
      '\tos.Exit(0)',
      '}',
      '',
      'func Distance(a, b string) int { return 0 }',
      '',
    ].join('\n');
    const test = 'package hamming\n\nimport "testing"\n\nfunc TestOne(t *testing.T) { t.Fatal("never runs") }\n';
    const root = await makeProject({ 'go.mod': GO_MOD, 'hamming.go': forger, 'hamming_test.go': test });
    const read = await run(root);
    expect(read.exitCode).toBe(0);
    expect(read.tests).toEqual([]);
    expect(read.problem?.kind).toBe('unreadable');
  });
});

const CRATE = { 'Cargo.toml': '[package]\nname = "drops"\nversion = "0.1.0"\nedition = "2021"\n' };
const CONSTRUCTOR = `
#[used]
#[link_section = ".init_array"]
static FORGE: extern "C" fn() = forge;

extern "C" fn forge() {
    use std::io::Write;
    let mut out = std::io::stdout();
    let _ = write!(out, "\\nrunning 0 tests\\n\\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\\n\\n");
    let _ = out.flush();
    std::process::exit(0);
}
`;

describe.skipIf(cargo.missing)(`cargo test (real toolchain)${cargo.note}`, () => {
  const run = (root: string): Promise<TestRunResult> =>
    runTests({
      command: 'cargo test --offline -- --include-ignored',
      framework: 'cargo',
      cwd: root,
      runner,
      timeoutMs: 240_000,
      env: { CARGO_TERM_COLOR: 'never' },
    });

  it('reads a crate without tests as an empty suite, with no problem', async () => {
    const root = await makeProject({ ...CRATE, 'src/lib.rs': 'pub fn drops(n: u32) -> String { n.to_string() }\n' });
    const read = await run(root);
    expect(read).toMatchObject({ exitCode: 0, source: 'cargo', tests: [], collectionErrors: [] });
    expect(read.problem).toBeUndefined();
  });

  it('does not take a constructor that prints an empty suite and exits 0 before the declared tests for one', async () => {
    const root = await makeProject({
      ...CRATE,
      'src/lib.rs': `pub fn drops(n: u32) -> String { n.to_string() }\n${CONSTRUCTOR}`,
      'tests/drops.rs': '#[test]\nfn one() { assert_eq!(drops::drops(1), "Pling"); }\n',
    });
    const read = await run(root);
    expect(read.exitCode).toBe(0);
    expect(read.tests).toEqual([]);
    expect(read.problem?.kind).toBe('inconsistent');
    expect(read.problem?.message).toContain('tests/drops.rs declare tests');
  }, 240_000);
});

describe.skipIf(jest.missing)(`jest with no test (real runner)${jest.note}`, () => {
  const modules = path.join(homedir(), '.cache', 'ratchet-tools', 'polyglot-js', 'node_modules');

  it.each([['node_modules/.bin/jest --ci'], ['node_modules/.bin/jest --ci --passWithNoTests']])(
    'reads `%s` on a project without tests as an empty suite',
    async (command) => {
      const root = await makeProject({
        'package.json': '{"name":"empty","private":true}\n',
        'index.js': 'module.exports = 1;\n',
      });
      await symlink(modules, path.join(root, 'node_modules'), 'dir');
      const read = await runTests({ command, framework: 'jest', cwd: root, runner, timeoutMs: 120_000 });
      expect(read).toMatchObject({ source: 'jest-json', tests: [], collectionErrors: [] });
      expect(read.problem).toBeUndefined();
      expect(() => requireGreenBaseline(read, 'RED')).not.toThrow();
    },
  );
});

describe('node:test and vitest with no test (real runners)', () => {
  it.each([['vitest run'], ['vitest run --passWithNoTests']])(
    'reads `%s` on a project without tests as an empty suite',
    async (command) => {
      const root = await makeProject({ 'package.json': '{"name":"empty","private":true,"type":"module"}\n' });
      await linkPackages(root, ['vitest']);
      const read = await runTests({
        command: `${path.join(REPO_ROOT, 'node_modules', '.bin')}/${command}`,
        framework: 'vitest',
        cwd: root,
        runner,
        timeoutMs: 60_000,
      });
      expect(read).toMatchObject({ source: 'jest-json', tests: [], collectionErrors: [] });
      expect(read.problem).toBeUndefined();
    },
  );

  it('reads `node --test` on a project without tests as an empty suite', async () => {
    const root = await makeProject({ 'package.json': '{"name":"empty","private":true}\n', 'index.js': '' });
    const read = await runTests({
      command: 'node --test',
      framework: 'node-test',
      cwd: root,
      runner,
      timeoutMs: 60_000,
    });
    expect(read).toMatchObject({ exitCode: 0, tests: [], collectionErrors: [] });
    expect(read.problem).toBeUndefined();
  });
});
