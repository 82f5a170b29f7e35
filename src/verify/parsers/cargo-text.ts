import type { FailureKind, TestStatus } from '../../core/verification.js';
import { shortMessage, testId, type ParsedTestOutput } from './classify.js';

/*
 * `cargo test` console output. Each test binary starts with `Running <target> (<path>)` or
 * `Doc-tests <crate>`, lists `test <path> ... ok|FAILED|ignored`, then prints a
 * `---- <path> stdout ----` block per failure with its panic message. A failed `assert!`/
 * `assert_eq!` panics with "assertion failed" / "assertion `left == right` failed"; any other
 * panic (unwrap, index out of bounds, explicit panic!) is an 'error'. `assert!(cond, "msg")`
 * panics with the bare message and cannot be told apart from `panic!("msg")`.
 * Compiler errors (`error[E0425]: ...`, `error: could not compile ...`) are collection errors.
 * Ids are `<target source>::<test path>`, e.g. `src/lib.rs::tests::adds`.
 */

const RUNNING = /^\s*Running (?:unittests )?(\S+)/;
const DOC_TESTS = /^\s*Doc-tests (\S+)/;
const RESULT = /^test (.+?) \.\.\. (ok|FAILED|ignored(?:, .*)?)\s*$/;
const BLOCK = /^---- (.+?) stdout ----$/;
const COMPILER_ERROR = /^error(?:\[E\d+\])?: /;
const RUNNER_ERROR = /^error: (?:test failed, to rerun|\d+ targets? failed)/;

/** Parses `cargo test` output (stdout and stderr together). */
export function parseCargoText(text: string): ParsedTestOutput {
  const lines = text.split('\n').map((line) => line.replace(/\r$/, ''));
  const result: ParsedTestOutput = { tests: [], collectionErrors: [] };
  const outcomes: { target: string; name: string; word: string }[] = [];
  const blocks = new Map<string, string[]>();
  // `Running <target>` goes to stderr and `running N tests` to stdout, so in merged output
  // their order against each other is not reliable; within each stream it is. The k-th
  // `running N tests` block belongs to the k-th target.
  const targets = lines.flatMap((line) => {
    const doc = DOC_TESTS.exec(line);
    if (doc?.[1] !== undefined) return [`doc-tests ${doc[1]}`];
    const running = RUNNING.exec(line);
    return running?.[1] !== undefined ? [running[1]] : [];
  });
  let binaries = 0;
  let target = '(unknown)';
  let block: string[] | undefined;

  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] ?? '';
    if (RUNNING.test(line) || DOC_TESTS.test(line)) continue;
    if (/^running \d+ tests?$/.test(line)) {
      target = targets[binaries] ?? '(unknown)';
      binaries += 1;
      block = undefined;
      continue;
    }
    const header = BLOCK.exec(line);
    if (header?.[1] !== undefined) {
      block = [];
      blocks.set(testId(target, header[1]), block);
      continue;
    }
    if (/^failures:$/.test(line) || /^test result: /.test(line)) block = undefined;
    const outcome = RESULT.exec(line);
    if (outcome?.[1] !== undefined && outcome[2] !== undefined) {
      outcomes.push({ target, name: outcome[1].replace(/ - should panic$/, ''), word: outcome[2] });
      continue;
    }
    if (COMPILER_ERROR.test(line) && !RUNNER_ERROR.test(line)) {
      result.collectionErrors.push(compilerBlock(lines, index));
      continue;
    }
    block?.push(line);
  }

  for (const { target: file, name, word } of outcomes) {
    const id = testId(file, name);
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
      failureKind: classifyPanic(detail),
      message: shortMessage(detail || 'FAILED'),
    });
  }
  return result;
}

function classifyPanic(detail: string): FailureKind {
  if (/assertion `[^`]*` failed|assertion failed|panicked at 'assertion/.test(detail)) return 'assertion';
  return 'error';
}

/** The compiler message starting at `start`: up to the next blank line. */
function compilerBlock(lines: string[], start: number): string {
  const block: string[] = [];
  for (let index = start; index < lines.length && index < start + 30; index += 1) {
    const line = lines[index] ?? '';
    if (index > start && line.trim() === '') break;
    block.push(line);
  }
  return shortMessage(block.join('\n'));
}
