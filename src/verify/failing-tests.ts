import type { TestCaseResult, TestRunResult } from '../core/verification.js';
import { collectionSubject } from './gates.js';

/** A failed test as `doctor` and `refactor verify` name it: `name (file)`. */
export function describeFailingTest(test: Pick<TestCaseResult, 'name' | 'file'>): string {
  return test.file === null || test.name.includes(test.file) ? test.name : `${test.name} (${test.file})`;
}

/** The tests that failed by name in a run (not the files that could not be collected). */
export function failedTests(result: TestRunResult): TestCaseResult[] {
  return result.tests.filter((test) => test.status === 'failed' && test.failureKind !== 'collection');
}

/**
 * What failed in a test run, one line each (`name (file): first line of the message`), at most
 * `max` of them and a line saying how many more; files that could not be collected first.
 */
export function failingTestLines(result: TestRunResult, max = 10): string[] {
  const entries = [
    ...result.collectionErrors.map((error) => `${collectionSubject(error)}: could not be collected`),
    ...failedTests(result).map((test) => {
      const why = test.message
        ?.split('\n')
        .find((line) => line.trim() !== '')
        ?.trim();
      const shown = why === undefined ? '' : `: ${why.length > 160 ? `${why.slice(0, 160)}…` : why}`;
      return `${describeFailingTest(test)}${shown}`;
    }),
  ];
  if (entries.length <= max) return entries;
  return [...entries.slice(0, max), `... and ${entries.length - max} more`];
}
