import { Parser, type Result } from 'tap-parser';
import { z } from 'zod';
import type { FailureKind, TestCaseResult } from '../../core/verification.js';
import {
  kindFromExceptionName,
  kindFromText,
  relativeFile,
  shortMessage,
  testId,
  type ParsedTestOutput,
  type ParseOptions,
} from './classify.js';

/*
 * TAP 13/14 with YAML diagnostics, as written by node:test's `tap` reporter (subtests indented
 * under `# Subtest:`), mocha's `tap` reporter (`tapVersion=13`: `message` and `stack` in the
 * diagnostics, each test named by its full title) and any other TAP producer.
 *
 * node:test puts the failing error's `name` and `code` (`ERR_ASSERTION`), and a `failureType`
 * (`testCodeFailure`, `testTimeoutFailure`, `hookFailure`, `subtestsFailed`, ...) in the
 * diagnostics. A file that failed to load is reported as a failing test named after the file,
 * with `exitCode` set; its stderr (the ERR_MODULE_NOT_FOUND / SyntaxError) arrives as `#`
 * comments just before it.
 *
 * Ids: TAP gives a file only for failing node:test tests (`location`), so the id must not use
 * it or a test would change id when it starts failing. The id is `<ancestors>::<name>`.
 */

const diagnosticsSchema = z.looseObject({
  failureType: z.string().optional(),
  error: z.unknown().optional(),
  code: z.string().optional(),
  name: z.string().optional(),
  location: z.string().optional(),
  exitCode: z.number().nullable().optional(),
  duration_ms: z.number().optional(),
  message: z.unknown().optional(),
  stack: z.unknown().optional(),
});
type Diagnostics = z.infer<typeof diagnosticsSchema>;

/** True when `text` contains TAP output. */
export function looksLikeTap(text: string): boolean {
  return /^TAP version \d+/m.test(text) || /^(?:not )?ok \d+ /m.test(text);
}

/** Parses TAP output into per-test results. */
export function parseTap(text: string, options: ParseOptions = {}): ParsedTestOutput {
  const result: ParsedTestOutput = { tests: [], collectionErrors: [] };
  const root = new Parser();
  attach(root, [], result, options);
  root.end(text);
  return result;
}

function attach(parser: Parser, ancestors: string[], result: ParsedTestOutput, options: ParseOptions): void {
  // Names of subtests of this level that produced test points: their closing point is a summary.
  const parents = new Set<string>();
  let comments: string[] = [];
  parser.on('child', (child: Parser) => {
    child.on('assert', () => parents.add(child.name));
    attach(child, [...ancestors, child.name], result, options);
  });
  parser.on('comment', (line: string) => {
    if (!/^#\s*Subtest:/.test(line)) comments.push(line.replace(/^#\s?/, '').replace(/\n$/, ''));
  });
  parser.on('assert', (point: Result) => {
    const context = comments;
    comments = [];
    if (parents.has(point.name)) return;
    result.tests.push(toCase(point, ancestors, context, result, options));
  });
}

function toCase(
  point: Result,
  ancestors: string[],
  context: string[],
  result: ParsedTestOutput,
  options: ParseOptions,
): TestCaseResult {
  const parsed = diagnosticsSchema.safeParse(point.diag ?? {});
  const diag: Diagnostics = parsed.success ? parsed.data : {};
  const file = diag.location === undefined ? null : relativeFile(diag.location.replace(/:\d+:\d+$/, ''), options.cwd);
  const id = testId(ancestors.join(' > '), point.name);
  const base = {
    id,
    name: point.name,
    file,
    ...(diag.duration_ms === undefined ? {} : { durationMs: Math.round(diag.duration_ms) }),
  };
  if (point.skip !== false || point.todo !== false) return { ...base, status: 'skipped' };
  if (point.ok) return { ...base, status: 'passed' };

  const errorText = typeof diag.error === 'string' ? diag.error : mochaError(diag);
  if (diag.exitCode !== undefined && diag.failureType === 'testCodeFailure' && errorText === 'test failed') {
    const message = shortMessage(context.filter((line) => !/^\s+at /.test(line)).join('\n') || errorText);
    result.collectionErrors.push(`${file ?? point.name}: ${message}`);
    return {
      ...base,
      id: testId(file ?? point.name, '(collection)'),
      status: 'failed',
      failureKind: 'collection',
      message,
    };
  }
  return {
    ...base,
    status: 'failed',
    failureKind: classify(diag, errorText),
    message: shortMessage(errorText || point.name),
  };
}

/** mocha's `tap` reporter (TAP 13) puts the error in `message` and `stack` (`TypeError: ...`). */
function mochaError(diag: Diagnostics): string {
  return [diag.message, diag.stack].filter((part): part is string => typeof part === 'string').join('\n');
}

function classify(diag: Diagnostics, errorText: string): FailureKind {
  if (diag.failureType === 'testTimeoutFailure') return 'timeout';
  if (diag.code === 'ERR_ASSERTION') return 'assertion';
  if (diag.name !== undefined) return kindFromExceptionName(diag.name);
  if (diag.code !== undefined && diag.code !== 'ERR_TEST_FAILURE') return kindFromExceptionName(diag.code);
  return kindFromText(errorText, 'assertion');
}
