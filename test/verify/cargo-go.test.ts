import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProcessRunner } from '../../src/process/runner.js';
import { parseCargoText } from '../../src/verify/parsers/cargo-text.js';
import { parseGoJson } from '../../src/verify/parsers/go-json.js';
import { detectFramework, detectTestCommand } from '../../src/verify/detect.js';
import { redGate } from '../../src/verify/gates.js';
import { runTests } from '../../src/verify/run-tests.js';
import { toolchain } from '../support/toolchains.js';
import { FIXTURES, makeProject } from './helpers.js';

const CRATE: Record<string, string> = {
  'Cargo.toml': '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
  'src/lib.rs': [
    'pub fn add(a: i32, b: i32) -> i32 { a + b }',
    '#[cfg(test)]',
    'mod tests {',
    '    use super::*;',
    '    #[test] fn adds() { assert_eq!(add(1, 1), 2); }',
    '    #[test] fn wrong() { assert_eq!(add(1, 1), 3); }',
    '    #[test] fn bare_assert() { assert!(add(1, 1) == 3); }',
    '    #[test] fn unwraps() { let r: Result<i32, String> = Err("bad".into()); r.unwrap(); }',
    '    #[test] #[ignore] fn later() {}',
    '}',
    '',
  ].join('\n'),
  'tests/integration.rs': [
    '#[test] fn integrates() { assert_eq!(calc::add(2, 2), 4); }',
    // An assertion with a message of its own prints only that message, at the test's own line.
    '#[test] fn says_why() { assert!(calc::add(2, 2) == 5, "add(2, 2) should be 5"); }',
    '#[test] #[should_panic] fn should_panic_but_does_not() { calc::add(1, 1); }',
    '#[test] fn stub() { let v: Vec<i32> = vec![]; assert_eq!(v[3], 1); }',
    '',
  ].join('\n'),
};

function cargoRun(root: string) {
  return runTests({
    command: 'cargo test --offline',
    framework: 'cargo',
    cwd: root,
    runner: createProcessRunner(),
    timeoutMs: 240_000,
    reportDir: path.join(root, '.r'),
    env: { CARGO_TERM_COLOR: 'never', RUST_BACKTRACE: '0' },
  });
}

const cargo = toolchain('cargo');
const go = toolchain('go');

describe.skipIf(cargo.missing)(`cargo test (real toolchain)${cargo.note}`, () => {
  it('reports every target with --no-fail-fast and classifies panics', async () => {
    const root = await makeProject(CRATE);
    const result = await cargoRun(root);
    expect(result.command).toBe('cargo test --no-fail-fast --offline');
    expect(result.source).toBe('cargo');
    const byId = Object.fromEntries(result.tests.map((test) => [test.id, test]));
    expect(byId['src/lib.rs::tests::adds']?.status).toBe('passed');
    expect(byId['src/lib.rs::tests::wrong']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['src/lib.rs::tests::bare_assert']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['src/lib.rs::tests::unwraps']).toMatchObject({ status: 'failed', failureKind: 'error' });
    expect(byId['src/lib.rs::tests::later']?.status).toBe('skipped');
    // The integration target still ran although the unit tests failed.
    expect(byId['tests/integration.rs::integrates']?.status).toBe('passed');
    expect(byId['tests/integration.rs::says_why']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['tests/integration.rs::should_panic_but_does_not']).toMatchObject({
      status: 'failed',
      failureKind: 'assertion',
    });
    // An index out of bounds in the test's own file is the code failing, not a check.
    expect(byId['tests/integration.rs::stub']).toMatchObject({ status: 'failed', failureKind: 'error' });
    expect(result.collectionErrors).toEqual([]);
    // stderr (`Running ...`) and stdout (`running N tests`) may interleave in any order.
    const lines = result.output.split('\n');
    const fromStderr = (line: string): boolean => /^\s*(?:Running|Doc-tests) /.test(line);
    const reordered = [...lines.filter((line) => !fromStderr(line)), ...lines.filter(fromStderr)];
    expect(parseCargoText(reordered.join('\n')).tests.map((test) => test.id)).toEqual(
      result.tests.map((test) => test.id),
    );
  }, 300_000);

  it('reports a compile error as a collection error', async () => {
    const root = await makeProject({
      ...CRATE,
      'tests/integration.rs': '#[test] fn multiplies() { assert_eq!(calc::multiply(2, 3), 6); }\n',
    });
    const result = await cargoRun(root);
    expect(result.collectionErrors.join('\n')).toMatch(/error\[E0425\]: cannot find function `multiply`/);
    // Led by the file it is about, which the RED gate names; cargo's "could not compile" recap is left out.
    expect(result.collectionErrors).toEqual([expect.stringMatching(/^tests\/integration\.rs: error\[E0425\]/)]);
    expect(redGate(result, result)).toMatchObject({ reason: 'collection-error', subjects: ['tests/integration.rs'] });
  }, 300_000);

  it('takes the compiler errors a passing test prints (it runs rustc on purpose, as autocfg does) for its output, not a build error', async () => {
    const root = await makeProject({
      ...CRATE,
      'tests/probe.rs': [
        // A feature probe: rustc is expected to fail on this snippet, and prints why on stderr.
        '#[test] fn probes_a_missing_feature() {',
        '    let dir = std::env::temp_dir().join(format!("probe-{}", std::process::id()));',
        '    std::fs::create_dir_all(&dir).unwrap();',
        '    let source = dir.join("probe.rs");',
        '    std::fs::write(&source, "pub use missing::thing;\\n").unwrap();',
        '    let status = std::process::Command::new(std::env::var("RUSTC").unwrap_or("rustc".into()))',
        '        .args(["--crate-type=lib", "--emit=metadata", "--out-dir"]).arg(&dir).arg(&source)',
        '        .status().unwrap();',
        '    assert!(!status.success());',
        '}',
        '',
      ].join('\n'),
    });
    const result = await cargoRun(root);
    expect(result.output).toMatch(/error\[E0432\]: unresolved import `missing`/);
    expect(result.collectionErrors).toEqual([]);
    expect(result.tests.find((test) => test.id === 'tests/probe.rs::probes_a_missing_feature')?.status).toBe('passed');
  }, 300_000);

  it('tells the crates of a workspace apart, and runs `cd <crate> && cargo test` as cargo', async () => {
    const crate = (name: string, want: number): Record<string, string> => ({
      [`crates/${name}/Cargo.toml`]: `[package]\nname = "${name}"\nversion = "0.1.0"\nedition = "2021"\n`,
      [`crates/${name}/src/lib.rs`]: [
        'pub fn add(a: i32, b: i32) -> i32 { a + b }',
        '#[cfg(test)]',
        `mod tests { #[test] fn it_works() { assert_eq!(super::add(2, 2), ${want}); } }`,
        '',
      ].join('\n'),
      [`crates/${name}/tests/it.rs`]: `#[test] fn integrates() { assert_eq!(${name}::add(1, 1), 2); }\n`,
    });
    const root = await makeProject({
      'Cargo.toml': '[workspace]\nmembers = ["crates/*"]\nresolver = "2"\n',
      ...crate('alpha', 4),
      ...crate('beta', 5),
    });
    const result = await cargoRun(root);
    expect(result.tests.map((test) => [test.id, test.status, test.file])).toEqual([
      ['crates/alpha/src/lib.rs::tests::it_works', 'passed', 'crates/alpha/src/lib.rs'],
      ['crates/alpha/tests/it.rs::integrates', 'passed', 'crates/alpha/tests/it.rs'],
      ['crates/beta/src/lib.rs::tests::it_works', 'failed', 'crates/beta/src/lib.rs'],
      ['crates/beta/tests/it.rs::integrates', 'passed', 'crates/beta/tests/it.rs'],
    ]);

    // One crate of a monorepo: the same ids as a single crate, and --no-fail-fast added after the cd.
    const single = await makeProject(
      Object.fromEntries(Object.entries(CRATE).map(([file, text]) => [`rs/${file}`, text])),
    );
    const detected = await detectTestCommand(single, 'cd rs && cargo test --offline');
    expect(detected.framework).toBe('cargo');
    const inCrate = await runTests({
      command: detected.command,
      framework: detected.framework,
      cwd: single,
      runner: createProcessRunner(),
      timeoutMs: 240_000,
      reportDir: path.join(single, '.r'),
      env: { CARGO_TERM_COLOR: 'never', RUST_BACKTRACE: '0' },
    });
    expect(inCrate.command).toBe('cd rs && cargo test --no-fail-fast --offline');
    expect(inCrate.source).toBe('cargo');
    expect(inCrate.tests).toContainEqual(
      expect.objectContaining({ id: 'src/lib.rs::tests::wrong', status: 'failed', failureKind: 'assertion' }),
    );
  }, 300_000);
});

describe('go test -json', () => {
  it('parses captured Go 1.19 output: pass, t.Errorf, panic and a build failure (fixture)', async () => {
    // Captured from `go test -json ./...` (go1.19.8 linux/amd64); stderr held the compiler output.
    const stdout = await readFile(path.join(FIXTURES, 'go/go119-build-failure.stdout.jsonl'), 'utf8');
    const stderr = await readFile(path.join(FIXTURES, 'go/go119-build-failure.stderr.txt'), 'utf8');
    const parsed = parseGoJson(`${stdout}\n${stderr}`);
    const byId = Object.fromEntries(parsed.tests.map((test) => [test.id, test]));
    expect(byId['example.com/gt::TestPass']?.status).toBe('passed');
    expect(byId['example.com/gt::TestFail']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['example.com/gt::TestFail']?.message).toContain('Add(1, 1) = 2, want 3');
    expect(byId['example.com/gt::TestPanic']).toMatchObject({ status: 'failed', failureKind: 'error' });
    expect(parsed.collectionErrors).toHaveLength(1);
    expect(parsed.collectionErrors[0]).toContain('example.com/gt/sub: build failed');
    expect(parsed.collectionErrors[0]).toContain('undefined: Y');
    expect(parsed.readable).toContain('--- FAIL: TestFail');
  });

  it('parses captured subtests and skips, leaving parent tests out (fixture)', async () => {
    // Captured from `go test -json ./...` (go1.19.8).
    const stdout = await readFile(path.join(FIXTURES, 'go/go119-subtests.stdout.jsonl'), 'utf8');
    const parsed = parseGoJson(stdout);
    const byId = Object.fromEntries(parsed.tests.map((test) => [test.id, test]));
    expect(byId['example.com/gt/sub::TestSub/ok']?.status).toBe('passed');
    expect(byId['example.com/gt/sub::TestSub/bad_case']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['example.com/gt/sub::TestSub']).toBeUndefined();
    expect(byId['example.com/gt/sub::TestSkip']?.status).toBe('skipped');
    expect(byId['example.com/gt/sub::TestX']?.status).toBe('passed');
    expect(parsed.collectionErrors).toEqual([]);
  });

  it('reads Go 1.24+ build-output events as collection errors', () => {
    // Constructed from the test2json event fields Go 1.24 documents (build-output, FailedBuild);
    // the installed toolchain (1.19) cannot emit them.
    const lines = [
      {
        ImportPath: 'example.com/m/sub [example.com/m/sub.test]',
        Action: 'build-output',
        Output: '# example.com/m/sub [example.com/m/sub.test]\n',
      },
      {
        ImportPath: 'example.com/m/sub [example.com/m/sub.test]',
        Action: 'build-output',
        Output: 'sub/x_test.go:6:12: undefined: Y\n',
      },
      { ImportPath: 'example.com/m/sub [example.com/m/sub.test]', Action: 'build-fail' },
      { Action: 'start', Package: 'example.com/m/sub' },
      { Action: 'output', Package: 'example.com/m/sub', Output: 'FAIL\texample.com/m/sub [build failed]\n' },
      {
        Action: 'fail',
        Package: 'example.com/m/sub',
        Elapsed: 0,
        FailedBuild: 'example.com/m/sub [example.com/m/sub.test]',
      },
    ];
    const parsed = parseGoJson(lines.map((line) => JSON.stringify(line)).join('\n'));
    expect(parsed.collectionErrors).toHaveLength(1);
    expect(parsed.collectionErrors[0]).toContain('undefined: Y');
  });

  it.skipIf(go.missing)(
    `runs the real toolchain with -json added${go.note}`,
    async () => {
      const root = await makeProject({
        'go.mod': 'module example.com/calc\n\ngo 1.19\n',
        'calc.go': 'package calc\n\nfunc Add(a, b int) int { return a + b }\n',
        'calc_test.go':
          'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 1) != 2 {\n\t\tt.Fatal("bad")\n\t}\n}\n\nfunc TestWrong(t *testing.T) {\n\tif got := Add(1, 1); got != 3 {\n\t\tt.Errorf("Add(1, 1) = %d, want 3", got)\n\t}\n}\n',
      });
      const result = await runTests({
        command: 'go test ./...',
        framework: 'go',
        cwd: root,
        runner: createProcessRunner(),
        timeoutMs: 240_000,
        reportDir: path.join(root, '.r'),
        env: { GOFLAGS: '-mod=mod', GOCACHE: path.join(root, '.gocache'), GOPATH: path.join(root, '.gopath') },
      });
      expect(result.command).toBe('go test -json ./...');
      expect(result.source).toBe('go-json');
      expect(result.tests.map((test) => [test.id, test.status, test.failureKind])).toEqual([
        ['example.com/calc::TestAdd', 'passed', undefined],
        ['example.com/calc::TestWrong', 'failed', 'assertion'],
      ]);
      expect(result.output).toContain('want 3');
      expect(result.output).not.toContain('"Action"');
    },
    300_000,
  );

  it.skipIf(go.missing)(
    `reports the test that hung at -timeout as a timeout, and runs \`cd <module> && go test\` with -json${go.note}`,
    async () => {
      const root = await makeProject({
        'gosvc/go.mod': 'module example.com/calc\n\ngo 1.19\n',
        'gosvc/calc.go': 'package calc\n\nfunc Add(a, b int) int { return a + b }\n',
        'gosvc/calc_test.go':
          'package calc\n\nimport (\n\t"testing"\n\t"time"\n)\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 1) != 2 {\n\t\tt.Fatal("bad")\n\t}\n}\n\nfunc TestHang(t *testing.T) { time.Sleep(30 * time.Second) }\n',
      });
      const result = await runTests({
        command: 'cd gosvc && go test -timeout 2s ./...',
        framework: detectFramework('cd gosvc && go test -timeout 2s ./...'),
        cwd: root,
        runner: createProcessRunner(),
        timeoutMs: 240_000,
        reportDir: path.join(root, '.r'),
        env: { GOFLAGS: '-mod=mod', GOCACHE: path.join(root, '.gocache'), GOPATH: path.join(root, '.gopath') },
      });
      expect(result.command).toBe('cd gosvc && go test -json -timeout 2s ./...');
      expect(result.source).toBe('go-json');
      expect(result.timedOut).toBe(false);
      expect(result.tests.map((test) => [test.id, test.status, test.failureKind])).toEqual([
        ['example.com/calc::TestAdd', 'passed', undefined],
        ['example.com/calc::TestHang', 'failed', 'timeout'],
      ]);
      expect(result.tests[1]?.message).toContain('panic: test timed out after 2s');
      expect(result.collectionErrors).toEqual([]);
    },
    300_000,
  );
});
