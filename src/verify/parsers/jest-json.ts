import { z } from 'zod';
import type { FailureKind, TestCaseResult, TestStatus } from '../../core/verification.js';
import {
  kindFromText,
  relativeFile,
  shortMessage,
  testId,
  type ParsedTestOutput,
  type ParseOptions,
} from './classify.js';

/*
 * The JSON report of jest (`--json --outputFile=...`) and vitest (`--reporter=json`), which
 * share jest's shape. A file that failed to load (missing module, syntax error) has no
 * assertion results and a non-empty `message`. Jest's matchers throw plain `Error`s, so
 * `failureDetails[].matcherResult` (jest) or the `AssertionError` name (vitest, node:assert)
 * marks an assertion.
 */

const assertionSchema = z.looseObject({
  ancestorTitles: z.array(z.string()).default([]),
  title: z.string(),
  fullName: z.string().nullish(),
  status: z.string(),
  duration: z.number().nullish(),
  failureMessages: z.array(z.string()).nullish(),
  failureDetails: z.array(z.unknown()).nullish(),
});
type Assertion = z.infer<typeof assertionSchema>;

const reportSchema = z.looseObject({
  testResults: z.array(
    z.looseObject({
      name: z.string(),
      status: z.string().optional(),
      message: z.string().nullish(),
      assertionResults: z.array(assertionSchema).default([]),
    }),
  ),
});

const matcherDetailSchema = z.looseObject({ matcherResult: z.looseObject({}) });

/** Extracts the JSON report from text that may carry other output around it. */
export function extractJestJson(text: string): unknown {
  const start = text.indexOf('{"num');
  const candidate = start >= 0 ? text.slice(start, text.lastIndexOf('}') + 1) : text;
  return JSON.parse(candidate) as unknown;
}

/** Parses a jest/vitest JSON report (already `JSON.parse`d). Throws when it has another shape. */
export function parseJestJson(report: unknown, options: ParseOptions = {}): ParsedTestOutput {
  const parsed = reportSchema.parse(report);
  const result: ParsedTestOutput = { tests: [], collectionErrors: [] };
  for (const suite of parsed.testResults) {
    const file = relativeFile(suite.name, options.cwd);
    const message = suite.message ?? '';
    if (suite.assertionResults.length === 0 && message.trim() !== '') {
      const text = shortMessage(stripAnsi(message));
      result.collectionErrors.push(`${file}: ${text}`);
      result.tests.push({
        id: testId(file, '(collection)'),
        name: '(collection)',
        file,
        status: 'failed',
        failureKind: 'collection',
        message: text,
      });
      continue;
    }
    for (const assertion of suite.assertionResults) result.tests.push(toCase(file, assertion));
    const anyFailed = suite.assertionResults.some((assertion) => assertion.status === 'failed');
    // A suite-level error next to passing tests (a failing afterAll hook) belongs to no test.
    if (suite.status === 'failed' && !anyFailed && message.trim() !== '') {
      result.collectionErrors.push(`${file}: ${shortMessage(stripAnsi(message))}`);
    }
  }
  return result;
}

function toCase(file: string, assertion: Assertion): TestCaseResult {
  const name = [...assertion.ancestorTitles, assertion.title].join(' > ');
  const status: TestStatus =
    assertion.status === 'passed' ? 'passed' : assertion.status === 'failed' ? 'failed' : 'skipped';
  const base = {
    id: testId(file, name),
    name,
    file,
    ...(typeof assertion.duration === 'number' ? { durationMs: Math.round(assertion.duration) } : {}),
  };
  if (status !== 'failed') return { ...base, status };
  const text = stripAnsi((assertion.failureMessages ?? []).join('\n'));
  return { ...base, status, failureKind: classify(assertion, text), message: shortMessage(text) };
}

function classify(assertion: Assertion, text: string): FailureKind {
  const details = assertion.failureDetails ?? [];
  if (details.some((detail) => matcherDetailSchema.safeParse(detail).success)) return 'assertion';
  if (/Test timed out in \d+ ?ms|Exceeded timeout of \d+ ?ms/.test(text)) return 'timeout';
  return kindFromText(text, 'error');
}

function stripAnsi(text: string): string {
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}

/**
 * Jest finding no test file at all (`No tests found, exiting with code 1` without
 * `--passWithNoTests`): it exits 1 and, racing its own exit, often writes no report. Its own lines
 * are the empty suite, when no test file ran (no `PASS`/`FAIL` line). Exit code 1 is never a pass,
 * so code that prints them can at most make a failing run read "nothing ran".
 */
export function jestFoundNoTests(output: string): ParsedTestOutput | undefined {
  const text = stripAnsi(output);
  const said =
    /^No tests found, exiting with code 1$/m.test(text) &&
    /^Run with `--passWithNoTests` to exit with code 0$/m.test(text) &&
    !/^\s*(?:PASS|FAIL)\s/m.test(text);
  return said ? { tests: [], collectionErrors: [], emptySuite: true } : undefined;
}
