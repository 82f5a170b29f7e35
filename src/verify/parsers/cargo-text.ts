import { normalize } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import type { FailureKind, TestStatus } from '../../core/verification.js';
import { shortMessage, testId, type ParsedTestOutput } from './classify.js';

/*
 * `cargo test` console output. Each test binary starts with `Running <target> (<path>)` or
 * `Doc-tests <crate>`, lists `test <path> ... ok|FAILED|ignored`, then prints a
 * `---- <path> stdout ----` block per failure with its panic message. A failed `assert!`/
 * `assert_eq!` panics with "assertion failed" / "assertion `left == right` failed"; any other
 * panic (unwrap, index out of bounds, explicit panic!) is an 'error'. `assert!(cond, "msg")`
 * panics with the bare message and cannot be told apart from `panic!("msg")`.
 * Compiler errors (`error[E0425]: ...`; `error: could not compile ...` when nothing else says
 * why) are collection errors, led by the file they are about. cargo builds every test target
 * before it runs any (a build error stops it), so a compiler error printed after a binary
 * started (`Running`, `Doc-tests`), outside a failure's block, is what a test printed: a test
 * that runs rustc on purpose (autocfg probes features that way) is no build error of the suite.
 * Ids are `<target source>::<test path>`, e.g. `src/lib.rs::tests::adds`; in a workspace the
 * caller passes scopes that tell the crates apart (`a/src/lib.rs::tests::adds`).
 *
 * An empty suite (a crate with no test yet) is readable when every test binary cargo announced
 * (`Running`, `Doc-tests`) printed `running 0 tests` and a `test result: ok. 0 passed; 0 failed;
 * 0 ignored` line, and nothing else ran. A test that prints `running 0 tests` and exits 0 cannot
 * pass for one: its binary already printed `running 1 test` before running it.
 */

const RUNNING = /^\s*Running (?:unittests )?(\S+)(?: \((\S+)\))?/;
const DOC_TESTS = /^\s*Doc-tests (\S+)/;
const RESULT = /^test (.+?) \.\.\. (ok|FAILED|ignored(?:, .*)?)\s*$/;
const BLOCK = /^---- (.+?) stdout ----$/;
const COMPILER_ERROR = /^error(?:\[E\d+\])?: /;
const RUNNER_ERROR = /^error: (?:test failed, to rerun|\d+ targets? failed)/;
const EMPTY_RESULT = /^test result: ok\. 0 passed; 0 failed; 0 ignored; 0 measured; \d+ filtered out(?:;|$)/;

/** One test binary cargo ran, in the order it ran them. */
export interface CargoTarget {
  /** The target's source relative to its package (`src/lib.rs`, `tests/it.rs`), or `doc-tests <crate>`. */
  source: string;
  /** The crate of the binary (`target/debug/deps/<crate>-<hash>`), when cargo names it. */
  crate?: string;
}

/** How a workspace scopes the ids of one target's tests (`cargoScopes`). */
export interface CargoScope {
  /** The id scope, e.g. `crates/a/src/lib.rs`. */
  scope: string;
  /** The source file, relative to the workspace when known. */
  file: string;
}

/** The test binaries of some `cargo test` output, in order. */
export function cargoTargets(text: string): CargoTarget[] {
  return stripVTControlCharacters(text)
    .split('\n')
    .flatMap((line): CargoTarget[] => {
      const doc = DOC_TESTS.exec(line);
      if (doc?.[1] !== undefined) return [{ source: `doc-tests ${doc[1]}` }];
      const running = RUNNING.exec(line);
      if (running?.[1] === undefined) return [];
      const crate = /(?:^|[\\/])deps[\\/]([^\\/]+?)-[0-9a-f]{8,}(?:\.exe)?$/.exec(running[2] ?? '')?.[1];
      return [{ source: running[1], ...(crate === undefined ? {} : { crate }) }];
    });
}

export interface CargoParseOptions {
  /**
   * Per target (in `cargoTargets` order), the scope of its ids. A workspace needs them: every
   * crate's unit tests run as `src/lib.rs`. Without them, the scope is the target's source.
   */
  scopes?: CargoScope[];
}

/** Parses `cargo test` output (stdout and stderr together). */
export function parseCargoText(text: string, options: CargoParseOptions = {}): ParsedTestOutput {
  const lines = stripVTControlCharacters(text)
    .split('\n')
    .map((line) => line.replace(/\r$/, ''));
  const result: ParsedTestOutput = { tests: [], collectionErrors: [] };
  const outcomes: { target: CargoScope; name: string; word: string }[] = [];
  const blocks = new Map<string, string[]>();
  // `Running <target>` goes to stderr and `running N tests` to stdout, so in merged output
  // their order against each other is not reliable; within each stream it is. The k-th
  // `running N tests` block belongs to the k-th target.
  const targets = cargoTargets(lines.join('\n')).map(
    ({ source }, index): CargoScope => options.scopes?.[index] ?? { scope: source, file: source },
  );
  const unknown: CargoScope = { scope: '(unknown)', file: '(unknown)' };
  let binaries = 0;
  let nonEmptyBinaries = 0;
  let emptyResults = 0;
  let target = unknown;
  let block: string[] | undefined;
  let couldNotCompile: string[] = [];
  let started = false;

  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] ?? '';
    if (RUNNING.test(line) || DOC_TESTS.test(line)) {
      started = true;
      continue;
    }
    const running = /^running (\d+) tests?$/.exec(line);
    if (running !== null) {
      target = targets[binaries] ?? unknown;
      binaries += 1;
      if (running[1] !== '0') nonEmptyBinaries += 1;
      block = undefined;
      continue;
    }
    const header = BLOCK.exec(line);
    if (header?.[1] !== undefined) {
      block = [];
      blocks.set(testId(target.scope, header[1]), block);
      continue;
    }
    if (/^failures:$/.test(line) || /^test result: /.test(line)) block = undefined;
    if (EMPTY_RESULT.test(line)) emptyResults += 1;
    const outcome = RESULT.exec(line);
    if (outcome?.[1] !== undefined && outcome[2] !== undefined) {
      outcomes.push({ target, name: outcome[1].replace(/ - should panic$/, ''), word: outcome[2] });
      continue;
    }
    if (COMPILER_ERROR.test(line) && !RUNNER_ERROR.test(line) && (block !== undefined || !started)) {
      const error = compilerBlock(lines, index);
      if (/^error: could not compile /.test(line)) couldNotCompile.push(error);
      else result.collectionErrors.push(error);
      continue;
    }
    block?.push(line);
  }
  // `could not compile \`calc\` (test "it")` repeats what the errors before it said.
  if (result.collectionErrors.length === 0) {
    couldNotCompile = couldNotCompile.map((error) => {
      const crate = /^error: could not compile `([^`]+)`(?: \(([^)]*)\))?/.exec(error);
      return crate?.[1] === undefined ? error : `${crate[1]}${crate[2] ? ` (${crate[2]})` : ''}: ${error}`;
    });
    result.collectionErrors.push(...couldNotCompile);
  }

  const emptySuite =
    binaries > 0 &&
    nonEmptyBinaries === 0 &&
    emptyResults === binaries &&
    targets.length === binaries &&
    outcomes.length === 0 &&
    result.collectionErrors.length === 0;
  if (emptySuite) result.emptySuite = true;
  for (const { target, name, word } of outcomes) {
    const { file } = target;
    const id = testId(target.scope, name);
    const status: TestStatus = word === 'ok' ? 'passed' : word === 'FAILED' ? 'failed' : 'skipped';
    if (status !== 'failed') {
      result.tests.push({ id, name, file, status });
      continue;
    }
    const detail = (blocks.get(id) ?? []).filter((line) => !/^\s+(?:\d+: |at )/.test(line)).join('\n');
    result.tests.push({
      id,
      name,
      file,
      status,
      failureKind: classifyPanic(detail, file),
      message: shortMessage(detail || 'FAILED'),
    });
  }
  return result;
}

/** Panics of the standard library and of stubs: the code failed, no check of the test did. */
const ERROR_PANIC =
  /called `(?:Option|Result)::(?:unwrap|expect)(?:_err)?\(\)`|not (?:yet )?implemented|index out of bounds|attempt to \w+ with overflow|attempt to divide by zero|explicit panic|range end index|byte index/;

/**
 * A failed Rust test is an assertion when `assert!`/`assert_eq!`/`assert_ne!` said so, when a
 * `#[should_panic]` test did not panic, or when the panic comes from the test's own file with a
 * message of its own (`assert!(cond, "...")` prints only that message); a panic of the standard
 * library or a stub (`unwrap()`, `todo!()`, an index out of bounds) is an error.
 */
function classifyPanic(detail: string, testFile: string | null): FailureKind {
  if (/assertion `[^`]*` failed|assertion failed|panicked at 'assertion|test did not panic as expected/.test(detail))
    return 'assertion';
  if (ERROR_PANIC.test(detail)) return 'error';
  const at = /panicked at (?:'[^']*', )?([^:\s']+):\d+:\d+/.exec(detail)?.[1];
  return at !== undefined && testFile !== null && normalize(at) === normalize(testFile) ? 'assertion' : 'error';
}

/**
 * The compiler message starting at `start`, up to the next blank line, led by the file it is
 * about (its `--> file:line:col`), which then names the error: `tests/it.rs: error[E0425]: ...`.
 */
function compilerBlock(lines: string[], start: number): string {
  const block: string[] = [];
  for (let index = start; index < lines.length && index < start + 30; index += 1) {
    const line = lines[index] ?? '';
    if (index > start && line.trim() === '') break;
    block.push(line);
  }
  const file = block.map((line) => /^\s*--> (.+?):\d+:\d+\s*$/.exec(line)?.[1]).find((found) => found !== undefined);
  return shortMessage(`${file === undefined ? '' : `${file}: `}${block.join('\n')}`);
}
