import { XMLParser } from 'fast-xml-parser';
import { z } from 'zod';
import type { FailureKind } from '../../core/verification.js';
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
 * JUnit XML as written by pytest (`--junitxml`, xunit1 adds `file`), node:test's `junit`
 * reporter, Maven Surefire (`target/surefire-reports/TEST-*.xml`) and Gradle
 * (`build/test-results/<task>/TEST-*.xml`). The producers disagree on details:
 * - pytest puts every exception of a test in `<failure>` and a module that failed to import in
 *   `<error message="collection failure">`;
 * - Surefire uses `<failure>` for assertion errors and `<error>` for other exceptions; Gradle
 *   uses `<failure type="...">` for both, so the `type` attribute decides;
 * - node:test nests `<testsuite>` per `describe`, names a file that failed to load as a test
 *   whose name is the file path, and leaves the real error in the process output.
 */

const issueSchema = z.union([
  z.string(),
  z.looseObject({
    '@_message': z.string().optional(),
    '@_type': z.string().optional(),
    '#text': z.string().optional(),
  }),
]);
type Issue = z.infer<typeof issueSchema>;

const caseSchema = z.looseObject({
  '@_name': z.string(),
  '@_classname': z.string().optional(),
  '@_file': z.string().optional(),
  '@_time': z.string().optional(),
  failure: z.array(issueSchema).optional(),
  error: z.array(issueSchema).optional(),
  skipped: z.array(issueSchema).optional(),
});
type Case = z.infer<typeof caseSchema>;

interface Suite {
  '@_name'?: string | undefined;
  testcase?: Case[] | undefined;
  testsuite?: Suite[] | undefined;
}
const suiteSchema: z.ZodType<Suite> = z.lazy(() =>
  z.looseObject({
    '@_name': z.string().optional(),
    testcase: z.array(caseSchema).optional(),
    testsuite: z.array(suiteSchema).optional(),
  }),
);
const documentSchema = z.looseObject({
  testsuites: z.union([z.literal(''), suiteSchema]).optional(),
  testsuite: z.array(suiteSchema).optional(),
});

const ARRAYS = new Set(['testsuite', 'testcase', 'failure', 'error', 'skipped']);

/** True when `text` looks like a JUnit XML document. */
export function looksLikeJunitXml(text: string): boolean {
  return /<testsuites?[\s>]/.test(text);
}

/**
 * Parses one JUnit XML document. Throws when the text is not XML of that shape, so callers can
 * fall back to another source.
 */
export function parseJunitXml(xml: string, options: ParseOptions & { output?: string } = {}): ParsedTestOutput {
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    parseTagValue: false,
    parseAttributeValue: false,
    isArray: (name) => ARRAYS.has(name),
  });
  const document = documentSchema.parse(parser.parse(xml));
  const result: ParsedTestOutput = { tests: [], collectionErrors: [] };
  const visit = (suite: Suite, suitePath: string[]): void => {
    for (const testCase of suite.testcase ?? []) addCase(result, testCase, suitePath, options);
    for (const child of suite.testsuite ?? []) visit(child, [...suitePath, child['@_name'] ?? '']);
  };
  if (document.testsuites !== undefined && document.testsuites !== '') visit(document.testsuites, []);
  for (const suite of document.testsuite ?? []) visit(suite, [suite['@_name'] ?? '']);
  return result;
}

function addCase(
  result: ParsedTestOutput,
  testCase: Case,
  suitePath: string[],
  options: ParseOptions & { output?: string },
): void {
  const name = testCase['@_name'];
  const classname = testCase['@_classname'] ?? '';
  const file = testCase['@_file'] === undefined ? null : relativeFile(testCase['@_file'], options.cwd);
  const durationMs = testCase['@_time'] === undefined ? undefined : Math.round(Number(testCase['@_time']) * 1000);
  const base = { name, file, ...(Number.isFinite(durationMs) ? { durationMs } : {}) };
  const failure = testCase.failure?.[0];
  const error = testCase.error?.[0];
  const issue = failure ?? error;

  if (issue === undefined) {
    const status = testCase.skipped === undefined ? 'passed' : 'skipped';
    result.tests.push({ id: caseId(name, classname, file, suitePath), ...base, status });
    return;
  }
  const text = issueText(issue);
  if (isCollectionCase(name, classname, file, issue)) {
    const where = file ?? name;
    // pytest's element holds the whole traceback; node:test leaves the real error in the output.
    const pytest = typeof issue !== 'string' && issue['@_message'] === 'collection failure';
    const detail = (pytest ? undefined : contextFromOutput(options.output, testCase['@_file'] ?? name)) ?? text;
    const message = shortMessage(detail);
    result.collectionErrors.push(`${where}: ${message}`);
    result.tests.push({
      id: testId(where, '(collection)'),
      ...base,
      status: 'failed',
      failureKind: 'collection',
      message,
    });
    return;
  }
  const failureKind = classifyIssue(issue, failure !== undefined ? 'failure' : 'error');
  result.tests.push({
    id: caseId(name, classname, file, suitePath),
    ...base,
    status: 'failed',
    failureKind,
    message: shortMessage(text),
  });
}

/**
 * pytest (xunit1) ids become pytest node ids (`tests/test_a.py::TestK::test_m`); other files
 * with a `file` attribute use the suite path (node:test `describe` blocks); without one the
 * class name is the scope (Surefire, Gradle, pytest xunit2).
 */
function caseId(name: string, classname: string, file: string | null, suitePath: string[]): string {
  if (file !== null && file.endsWith('.py')) {
    const moduleName = file.slice(0, -3).split('/').join('.');
    const classes = classname.startsWith(`${moduleName}.`) ? classname.slice(moduleName.length + 1).split('.') : [];
    return [file, ...classes, name].join('::');
  }
  if (file !== null) return testId(file, [...suitePath.filter((part) => part !== ''), name].join(' > '));
  const scope = classname !== '' ? classname : suitePath.filter((part) => part !== '').join(' > ');
  return testId(scope, name);
}

function isCollectionCase(name: string, classname: string, file: string | null, issue: Issue): boolean {
  const message = typeof issue === 'string' ? '' : (issue['@_message'] ?? '');
  const type = typeof issue === 'string' ? '' : (issue['@_type'] ?? '');
  // pytest: a module that failed to import.
  if (message === 'collection failure') return true;
  // node:test: the file itself is reported as the failing test (it never produced tests).
  if (file !== null && type === 'testCodeFailure' && (file === name || file.endsWith(`/${name}`))) return true;
  // JUnit 4: a class that could not be initialised.
  return name === 'initializationError' && classname !== '';
}

function classifyIssue(issue: Issue, element: 'failure' | 'error'): FailureKind {
  const text = issueText(issue);
  const type = typeof issue === 'string' ? '' : (issue['@_type'] ?? '');
  if (type === 'testTimeoutFailure') return 'timeout';
  if (type !== '' && type !== 'testCodeFailure') {
    const kind = kindFromExceptionName(type);
    // A qualified exception type (Java, Gradle) is authoritative; a bare word is a hint only.
    if (kind !== 'error' || type.includes('.') || /(?:Error|Exception)$/.test(type)) return kind;
  }
  return kindFromText(text, element === 'failure' ? 'assertion' : 'error');
}

function issueText(issue: Issue): string {
  if (typeof issue === 'string') return issue;
  const body = issue['#text'] ?? '';
  const message = issue['@_message'] ?? '';
  return body.trim() !== '' ? body : message;
}

/** node:test leaves a load failure's real error in the output; pick the block naming the file. */
function contextFromOutput(output: string | undefined, file: string): string | undefined {
  if (output === undefined) return undefined;
  const lines = output.split('\n');
  const index = lines.findIndex((line) => line.includes(file) && /Error|error|:\d+$/.test(line));
  if (index < 0) return undefined;
  const block = lines.slice(index, index + 8).filter((line) => !/^\s+at /.test(line));
  return block.join('\n');
}
