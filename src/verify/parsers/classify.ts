import path from 'node:path';
import type { FailureKind, TestCaseResult } from '../../core/verification.js';

/** What every parser returns: per-test outcomes plus errors that belong to no test. */
export interface ParsedTestOutput {
  tests: TestCaseResult[];
  /** A file that failed to import/compile, a package that failed to build, a crashed runner. */
  collectionErrors: string[];
  /**
   * The runner itself stated that it ran no test at all, in a form the code under test cannot
   * print (go's package-level `skip` event for `[no test files]`; cargo's `running 0 tests` for
   * every test binary it listed and nothing else): a readable empty suite, like pytest's exit 5.
   */
  emptySuite?: boolean;
}

/** Where relative file paths in test ids are anchored. */
export interface ParseOptions {
  /** The directory the test command ran in; absolute paths under it become relative. */
  cwd?: string;
}

/** Builds the stable test id `<file or suite>::<name>`. */
export function testId(scope: string, name: string): string {
  return `${scope}::${name}`;
}

/** Makes `file` relative to `cwd` (POSIX separators) when it lies under it. */
export function relativeFile(file: string, cwd: string | undefined): string {
  let result = file.startsWith('file://') ? new URL(file).pathname : file;
  if (cwd !== undefined && path.isAbsolute(result)) {
    const relative = path.relative(cwd, result);
    if (!relative.startsWith('..') && !path.isAbsolute(relative)) result = relative;
  }
  return result.split(path.sep).join('/');
}

/*
 * Runners report the failure's exception by name (a JUnit `type`, node:test's `name`/`code`,
 * Python's last traceback line). The kind is decided from that name first; the text scans
 * below are the fallback for runners that only print prose (cargo panics, pytest summaries).
 */
const ASSERTION_NAME =
  /^(?:AssertionError|AssertionFailedError|ComparisonFailure|AssertionFailure|ERR_ASSERTION|JestAssertionError|MultipleFailuresError|ExpectationFailedError|Failed)$|Assert(?:ion)?(?:Failed)?(?:Error|Exception)$/;
const COLLECTION_NAME =
  /^(?:ImportError|ModuleNotFoundError|SyntaxError|IndentationError|TabError|ERR_MODULE_NOT_FOUND|MODULE_NOT_FOUND|ERR_REQUIRE_ESM|ERR_UNKNOWN_FILE_EXTENSION|NoClassDefFoundError|ClassNotFoundException|ExceptionInInitializerError)$/;
const TIMEOUT_NAME = /^(?:TimeoutError|TimeoutException|Timeout|ERR_TEST_TIMEOUT|testTimeoutFailure)$/;

/** The kind of failure an exception with this (possibly qualified) name stands for. */
export function kindFromExceptionName(qualified: string): FailureKind {
  const name = qualified.split(/[.$]/).pop() ?? qualified;
  if (ASSERTION_NAME.test(name)) return 'assertion';
  if (COLLECTION_NAME.test(name)) return 'collection';
  if (TIMEOUT_NAME.test(name)) return 'timeout';
  return 'error';
}

const ASSERTION_TEXT =
  /\b(?:AssertionError|AssertionFailedError|ComparisonFailure|ERR_ASSERTION|JestAssertionError)\b|assertion `[^`]*` failed|\bassertion failed\b|\bexpect\((?:received|jest\.fn\(\)|function|element)\)|\bexpect\.(?:assertions|hasAssertions)\(|^assert\s/m;
const COLLECTION_TEXT =
  /\b(?:ERR_MODULE_NOT_FOUND|ModuleNotFoundError|ImportError|SyntaxError|IndentationError|Cannot find module|Failed to import test module|collection failure|NoClassDefFoundError)\b|error\[E\d+\]/;
const TIMEOUT_TEXT = /\b(?:timed out|Exceeded timeout|test timed out after)\b|\bTimeout of \d+ ?ms exceeded\b/i;

/**
 * Classifies a failure from its text alone. `fallback` is returned when nothing is recognised:
 * runners whose failure element means "an assertion did not hold" (JUnit `<failure>`, TAP
 * `not ok`) pass 'assertion', others 'error'.
 */
export function kindFromText(text: string, fallback: FailureKind): FailureKind {
  const exception = firstExceptionName(text);
  // A bare `Error` alone says little (jest's matchers throw plain Errors): look at the text first.
  if (exception !== undefined && exception !== 'Error') return kindFromExceptionName(exception);
  if (ASSERTION_TEXT.test(text)) return 'assertion';
  if (COLLECTION_TEXT.test(text)) return 'collection';
  if (TIMEOUT_TEXT.test(text)) return 'timeout';
  // A plain `Error` that no matcher wrote (`throw new Error('not implemented')`) is not an assertion.
  return exception === 'Error' ? 'error' : fallback;
}

/**
 * The name of the exception a failure text reports, looking at the places runners put it:
 * Python's `E   NameError: ...` lines and `file.py:3: AssertionError` trailers, JavaScript's
 * `cause: TypeError: ...` and leading `TypeError: ...`, Java's `java.lang.X: ...`.
 */
function firstExceptionName(text: string): string | undefined {
  // The prefix is optional: a bare `Error` / `Exception` names an exception too.
  const patterns = [
    /^E\s+([A-Za-z_][\w.]*(?:Error|Exception|Failed|Exit|Interrupt|Warning)|Error|Exception|Failed)\b/m,
    /^\S+:\d+: ([A-Za-z_][\w.]*(?:Error|Exception|Failed)|Error|Exception|Failed)$/m,
    /\bcause: ([A-Za-z_]\w*(?:Error|Exception)|Error|Exception)\b/,
    /^\s*(?:Uncaught )?([A-Za-z_][\w.$]*(?:Error|Exception|Failure)|Error|Exception)(?: \[[A-Z_]+\])?:/m,
  ];
  for (const pattern of patterns) {
    const match = pattern.exec(text);
    if (match?.[1] !== undefined) return match[1];
  }
  return undefined;
}

/** Shortens a failure message for storage and feedback (first lines, capped). */
export function shortMessage(text: string, maxChars = 2000): string {
  const trimmed = text.trim();
  return trimmed.length <= maxChars ? trimmed : `${trimmed.slice(0, maxChars)}\n[...]`;
}
