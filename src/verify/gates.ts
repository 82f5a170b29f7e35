import type { CheckResult, TestCaseResult, TestRunResult } from '../core/verification.js';
import { diffFingerprints } from './fingerprint.js';
import { describeVerificationChanges, type VerificationChange } from './verification-files.js';

/*
 * The deterministic gates of the TDD loop (DESIGN.md "The TDD loop"; seed 003's recovery
 * table). Pure functions of test results and fingerprints: no IO, no clock.
 */

/** Why a gate rejected a stage's result. */
type GateRejectionReason =
  /** RED: the new test passes already (the behaviour may exist). */
  | 'passed-immediately'
  /** RED: no test appeared that fails now and did not pass before. */
  | 'no-new-test'
  /** RED: a new test fails, but by an error/collection/timeout rather than an assertion. */
  | 'not-assertion'
  /** RED: a test that passed before fails now (or is gone). */
  | 'regression'
  /** RED: a file failed to import/compile/collect. */
  | 'collection-error'
  /** RED: the test command ran out of time. */
  | 'timeout'
  /** GREEN: a test that ran before did not pass now: it no longer ran, or was skipped. */
  | 'tests-not-run'
  /** GREEN / VERIFY: tests fail, the run errored, or exited non-zero. */
  | 'tests-failing'
  /** GREEN: a test file was changed, added or removed since RED. */
  | 'test-files-changed'
  /** VERIFY: lint or typecheck failed. */
  | 'checks-failing'
  /** GREEN / FIX / REFACTOR: a file (or part) that decides how tests run or are reported changed since RED. */
  | 'verification-files-changed'
  /** Any: the results cannot be read, or disagree with the runner's exit code or its own summary. */
  | 'results-untrusted';

export type GateDecision =
  | { accepted: true; summary: string; newFailing?: TestCaseResult[] }
  | {
      accepted: false;
      reason: GateRejectionReason;
      /** Text for the model's retry prompt: what failed, how, and an output excerpt. */
      feedback: string;
      /** The test ids or file paths the rejection is about. */
      subjects: string[];
    };

const OUTPUT_EXCERPT_CHARS = 4000;
const MESSAGE_CHARS = 600;

/**
 * RED accepts when (a) at least one test that did not pass before fails now, (b) each of those
 * fails by assertion, (c) every test that passed before still passes, (d) nothing failed to
 * collect and (e) the run did not time out. Tests that failed before and still fail are
 * neither new nor regressions. Checked in that order of precedence: timeout, collection,
 * not-assertion, regression, then passed-immediately / no-new-test.
 */
export function redGate(before: TestRunResult, after: TestRunResult): GateDecision {
  if (after.timedOut) {
    return reject('timeout', ['(run)::timeout'], `The test run timed out.`, after);
  }
  if (after.collectionErrors.length > 0) {
    return reject(
      'collection-error',
      after.collectionErrors.map(collectionSubject),
      `The tests could not be collected (import, syntax or compile error). A RED test must load and fail on an assertion; create the missing module, function or stub so the test runs.\n\n${after.collectionErrors.map((error) => `- ${clip(error, MESSAGE_CHARS)}`).join('\n')}`,
      after,
    );
  }
  if (after.problem !== undefined) return untrusted(after);
  const statusBefore = new Map(before.tests.map((test) => [test.id, test.status]));
  const statusAfter = new Map(after.tests.map((test) => [test.id, test.status]));
  const newFailing = after.tests.filter(
    (test) =>
      test.status === 'failed' && statusBefore.get(test.id) !== 'passed' && statusBefore.get(test.id) !== 'failed',
  );
  const regressions = before.tests.filter((test) => test.status === 'passed' && statusAfter.get(test.id) !== 'passed');
  const newPassing = after.tests.filter((test) => test.status === 'passed' && !statusBefore.has(test.id));

  const wrongKind = newFailing.filter((test) => test.failureKind !== 'assertion');
  if (wrongKind.length > 0) {
    const kinds = [...new Set(wrongKind.map((test) => test.failureKind ?? 'error'))].join(', ');
    return reject(
      'not-assertion',
      wrongKind.map((test) => test.id),
      `The new test must fail on an assertion, but it failed with: ${kinds}. Make the code under test exist (a stub returning a wrong value) so the test runs and its assertion fails.\n\n${describeTests(wrongKind)}${regressionNote(regressions, statusAfter)}`,
      after,
    );
  }
  if (regressions.length > 0) {
    return reject(
      'regression',
      regressions.map((test) => test.id),
      `Tests that passed before no longer pass. RED may only add a failing test; leave existing tests and code working.\n\n${describeRegressions(regressions, after)}`,
      after,
    );
  }
  if (newFailing.length === 0) {
    if (newPassing.length > 0) {
      return reject(
        'passed-immediately',
        newPassing.map((test) => test.id),
        `The new test passes without any code change, so it does not drive new behaviour (the behaviour may already exist). Write a test whose assertion fails against the current code.\n\n${newPassing.map((test) => `- ${test.id}`).join('\n')}`,
        after,
      );
    }
    const why = after.source === 'exit-code' ? ' (the test runner gave no per-test results, only an exit code)' : '';
    return reject(
      'no-new-test',
      [],
      `No new failing test was found${why}. Add exactly one test that fails on an assertion.`,
      after,
    );
  }
  return {
    accepted: true,
    summary: `${newFailing.length} new failing test(s) by assertion: ${newFailing.map((test) => test.id).join(', ')}; ${after.counts.passed} passing`,
    newFailing,
  };
}

/**
 * GREEN accepts when every test passes (no failures, no collection errors, exit code 0, no
 * timeout), at least one test ran and passed, and no test file changed, appeared or disappeared
 * since RED's fingerprints.
 */
export function greenGate(
  after: TestRunResult,
  testFingerprintsAtRed: Record<string, string>,
  testFingerprintsNow: Record<string, string>,
  /** Ids of the tests the last accepted run reported (RED's): each must still run and pass. */
  expectedTests: readonly string[] = [],
): GateDecision {
  const diff = diffFingerprints(testFingerprintsAtRed, testFingerprintsNow);
  const touched = [
    ...diff.changed.map((file) => `changed: ${file}`),
    ...diff.added.map((file) => `added: ${file}`),
    ...diff.removed.map((file) => `removed: ${file}`),
  ];
  if (touched.length > 0) {
    return reject(
      'test-files-changed',
      [...diff.changed, ...diff.added, ...diff.removed],
      `GREEN may not change test files; they are fixed after RED. Restore them and change only the implementation.\n\n${touched.map((line) => `- ${line}`).join('\n')}`,
      undefined,
    );
  }
  const failing = testsFailing(after);
  if (failing !== undefined) return failing;
  const gone = testsGone(expectedTests, after);
  if (gone.length > 0) {
    return reject(
      'tests-not-run',
      gone,
      `These tests ran before and did not pass now (they no longer ran, or were skipped); GREEN may not change what the test command runs:\n${gone.map((id) => `- ${id}`).join('\n')}`,
      undefined,
    );
  }
  // An empty suite reads "nothing failed", never "the new test passes" (a runner that ran no test,
  // or output made to look like one: RED's tests deleted, a binary that exits 0 before them).
  if (after.counts.passed === 0) {
    return reject(
      'tests-not-run',
      [],
      'GREEN needs the new test to pass, but the test command ran no test at all. Leave the tests in place and make them pass by changing the implementation.',
      after,
    );
  }
  return { accepted: true, summary: `All ${after.counts.passed} tests pass` };
}

/** Of `expected` (ids of tests that passed before), those that did not pass in `after`: failed, skipped or not run. */
export function testsGone(expected: Iterable<string>, after: TestRunResult): string[] {
  const passed = new Set(after.tests.filter((test) => test.status === 'passed').map((test) => test.id));
  return [...expected].filter((id) => !passed.has(id));
}

/** VERIFY accepts when the tests pass (as in GREEN) and every check (lint, typecheck) passes. */
export function verifyGate(tests: TestRunResult, checks: CheckResult[]): GateDecision {
  const failing = testsFailing(tests);
  if (failing !== undefined) return failing;
  const failedChecks = checks.filter((check) => !check.ok);
  if (failedChecks.length > 0) {
    const details = failedChecks
      .map((check) => {
        const status = check.timedOut ? 'timed out' : `exit code ${check.exitCode ?? 'none'}`;
        return `### ${check.name} (\`${check.command}\`, ${status})\n${tail(check.output, OUTPUT_EXCERPT_CHARS)}`;
      })
      .join('\n\n');
    return reject(
      'checks-failing',
      failedChecks.map((check) => check.name),
      `Static checks failed.\n\n${details}`,
      undefined,
    );
  }
  const names = checks.map((check) => check.name).join(', ');
  return { accepted: true, summary: `All ${tests.counts.passed} tests pass${names === '' ? '' : `; ${names} clean`}` };
}

/**
 * Rejects a change to the files that decide how tests run and are reported (`diffVerification`
 * of the lock taken after RED and the tree now); undefined when nothing locked changed.
 */
export function verificationGate(changes: readonly VerificationChange[]): GateDecision | undefined {
  if (changes.length === 0) return undefined;
  return reject(
    'verification-files-changed',
    [...new Set(changes.map((change) => change.file))],
    `The files that decide how the tests run and are reported are fixed after RED (test scripts, runner configuration, setup files, conftest.py, the settings of lint and typecheck). These changes were undone:\n${describeVerificationChanges(
      changes,
    )
      .map((line) => `- ${line}`)
      .join('\n')}\nMake the tests pass by changing the implementation only.`,
    undefined,
  );
}

function untrusted(run: TestRunResult): GateDecision {
  const problem = run.problem;
  const text =
    problem === undefined
      ? 'The test results cannot be trusted.'
      : `${problem.message}${problem.hint === undefined ? '' : `\n${problem.hint}`}`;
  return reject('results-untrusted', [], `The test results cannot be taken for a pass: ${text}`, run);
}

function testsFailing(run: TestRunResult): GateDecision | undefined {
  const failed = run.tests.filter((test) => test.status === 'failed');
  if (!run.timedOut && failed.length === 0 && run.collectionErrors.length === 0 && run.exitCode === 0)
    return run.problem === undefined ? undefined : untrusted(run);
  const parts: string[] = [];
  if (run.timedOut) parts.push('The test run timed out.');
  if (run.collectionErrors.length > 0) {
    parts.push(
      `Collection errors:\n${run.collectionErrors.map((error) => `- ${clip(error, MESSAGE_CHARS)}`).join('\n')}`,
    );
  }
  const realFailures = failed.filter((test) => test.failureKind !== 'timeout' || !run.timedOut);
  if (realFailures.length > 0) parts.push(`Failing tests:\n${describeTests(realFailures)}`);
  if (parts.length === 0)
    parts.push(`The test command exited with code ${run.exitCode ?? 'none'} although no test was reported failing.`);
  return reject(
    'tests-failing',
    failed.map((test) => test.id),
    parts.join('\n\n'),
    run,
  );
}

function reject(
  reason: GateRejectionReason,
  subjects: string[],
  text: string,
  run: TestRunResult | undefined,
): GateDecision {
  const excerpt =
    run === undefined || run.output.trim() === ''
      ? ''
      : `\n\nTest output (last lines):\n${tail(run.output, OUTPUT_EXCERPT_CHARS)}`;
  return { accepted: false, reason, subjects, feedback: `${text}${excerpt}` };
}

function describeTests(tests: TestCaseResult[]): string {
  return tests
    .map((test) => {
      const kind = test.failureKind === undefined ? '' : ` [${test.failureKind}]`;
      const message =
        test.message === undefined ? '' : `\n  ${clip(test.message, MESSAGE_CHARS).split('\n').join('\n  ')}`;
      return `- ${test.id}${kind}${message}`;
    })
    .join('\n');
}

function describeRegressions(regressions: TestCaseResult[], after: TestRunResult): string {
  const now = new Map(after.tests.map((test) => [test.id, test]));
  return regressions
    .map((test) => {
      const current = now.get(test.id);
      if (current === undefined) return `- ${test.id}: no longer reported (removed, renamed or not run)`;
      if (current.status === 'skipped') return `- ${test.id}: now skipped`;
      return describeTests([current]);
    })
    .join('\n');
}

function regressionNote(regressions: TestCaseResult[], statusAfter: Map<string, string>): string {
  if (regressions.length === 0) return '';
  const lines = regressions.map((test) => `- ${test.id}: ${statusAfter.get(test.id) ?? 'not reported'}`);
  return `\n\nAlso, tests that passed before no longer pass:\n${lines.join('\n')}`;
}

/**
 * What a collection error is about: the file, module or package it starts with
 * (`tests/test_a.py: ImportError ...`), else its first line (`error[E0463]: can't find crate`).
 */
export function collectionSubject(error: string): string {
  const firstLine = (error.split('\n')[0] ?? error).trim();
  const head = firstLine.split(':')[0]?.trim() ?? '';
  if (head !== '' && head !== firstLine && !/^(?:error|warning|\[)/i.test(head)) return head;
  return clip(firstLine, 200);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)} [...]`;
}

function tail(text: string, max: number): string {
  const trimmed = text.trimEnd();
  return trimmed.length <= max ? trimmed : `[...]\n${trimmed.slice(-max)}`;
}
