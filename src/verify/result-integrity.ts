import { stripVTControlCharacters } from 'node:util';
import { Parser, type FinalResults } from 'tap-parser';
import type { ResultProblem, ResultSource, TestCaseResult } from '../core/verification.js';
import type { Framework } from './detect.js';

/*
 * Whether a run's per-test results can be taken for what they say. A gate that reads "all
 * passed" from a report must not be fooled by a report that was rewritten, a runner that stopped
 * half-way with exit code 0 (`process.exit(0)` / `os._exit(0)` in the code under test), or a
 * command whose output Ratchet could not read at all. Three sources are compared: the report,
 * the runner's own summary on the console, and the exit code. The checks only ever turn a pass
 * into a failure, never the other way round.
 *
 * What they cannot see: code under test runs inside the test process and could, with enough
 * effort, forge all three consistently (the report, the summary lines and the exit code). The
 * locked test scripts and runner configuration keep the command itself out of the model's hands.
 */

/** What became of the report file a run was asked to write. */
export type ReportState = 'read' | 'missing' | 'unparseable' | 'not-asked';

export interface IntegrityInput {
  framework: Framework;
  command: string;
  /** The kind of report file the run was asked to write (`junit` for node:test and pytest). */
  reportKind: 'junit' | 'jest-json' | 'junit-dirs' | 'none';
  reportState: ReportState;
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  output: string;
  tests: readonly TestCaseResult[];
  collectionErrors: readonly string[];
  source: ResultSource;
  /** The runner said it ran no test at all (`ParsedTestOutput.emptySuite`). */
  emptySuite: boolean;
  /** Files whose source declares tests (`cargoDeclaredTests`; empty when not looked for). */
  declaredTests: readonly string[];
}

/** The problem with a run's results, or undefined when they can be taken for what they say. */
export function checkResultIntegrity(input: IntegrityInput): ResultProblem | undefined {
  const exitedZero = input.exitCode === 0 && !input.timedOut;
  if (exitedZero && (input.reportKind === 'junit' || input.reportKind === 'jest-json')) {
    if (input.reportState === 'missing' || input.reportState === 'unparseable') {
      return {
        kind: 'inconsistent',
        message: `the test command exited 0, but the report it was asked to write is ${input.reportState === 'missing' ? 'missing or empty' : 'not a valid report'} (a runner stopped before its end, by process.exit or os._exit in the code under test, or a report rewritten, is never a pass).`,
      };
    }
  }
  if (input.source === 'exit-code' && input.tests.length === 0 && input.collectionErrors.length === 0) {
    const noTestsYet =
      (input.framework === 'maven' || input.framework === 'gradle') &&
      exitedZero &&
      !/Tests run: [1-9]/.test(input.output);
    if (!noTestsYet) return unreadable(input.framework, input.command);
  }
  if (input.emptySuite && input.declaredTests.length > 0) {
    const files = input.declaredTests.slice(0, 5).join(', ') + (input.declaredTests.length > 5 ? ', ...' : '');
    return {
      kind: 'inconsistent',
      message: `${input.framework} printed that it ran no test, but ${files} declare tests: code that ran before them and exited 0 (a constructor in the code under test) is never an empty suite.`,
    };
  }
  const looksGreen =
    exitedZero && input.collectionErrors.length === 0 && input.tests.every((test) => test.status !== 'failed');
  if (!looksGreen) return undefined;
  if (input.framework === 'node-test' && input.reportKind === 'junit') return nodeSummaryProblem(input);
  if (input.framework === 'pytest') return pytestSummaryProblem(input);
  if (input.source === 'tap') return tapProblem(input.stdout);
  return undefined;
}

/** node:test's `spec` summary (`ℹ tests 3`, `ℹ fail 0`, `ℹ cancelled 0`), which Ratchet adds on stdout. */
function nodeSummaryProblem(input: IntegrityInput): ResultProblem | undefined {
  const text = stripVTControlCharacters(input.stdout);
  const count = (name: string): number | undefined => {
    const matches = [...text.matchAll(new RegExp(`^ℹ ${name} (\\d+)\\s*$`, 'gm'))];
    const last = matches.at(-1)?.[1];
    return last === undefined ? undefined : Number(last);
  };
  const tests = count('tests');
  if (tests === undefined) {
    return {
      kind: 'inconsistent',
      message:
        "node:test's own summary (ℹ tests, ℹ pass, ℹ fail) is missing from the output although it exited 0: the runner did not reach its end.",
    };
  }
  const failed = (count('fail') ?? 0) + (count('cancelled') ?? 0);
  if (failed > 0) return disagreement(`node:test's summary counts ${failed} failed or cancelled`);
  if (tests > 0 && input.tests.length === 0) return disagreement(`node:test's summary counts ${tests} tests`);
  return undefined;
}

/** pytest's closing line (`==== 1 failed, 3 passed in 0.12s ====`, or without the rules under `-q`). */
function pytestSummaryProblem(input: IntegrityInput): ResultProblem | undefined {
  const lines = stripVTControlCharacters(input.output)
    .split('\n')
    .filter((line) => /^(?:=+ )?(?:no tests ran|\d+ \w+).* in [\d.]+s(?: \([^)]*\))?(?: =+)?\s*$/.test(line.trim()));
  const last = lines.at(-1);
  if (last === undefined) return undefined;
  const counts = new Map<string, number>();
  for (const match of last.matchAll(/(\d+) (failed|passed|errors?|xpassed)\b/g)) {
    counts.set(match[2] === 'error' ? 'errors' : (match[2] ?? ''), Number(match[1]));
  }
  const failed = (counts.get('failed') ?? 0) + (counts.get('errors') ?? 0);
  if (failed > 0) return disagreement(`pytest's summary counts ${failed} failed or in error`);
  const ran = (counts.get('passed') ?? 0) + (counts.get('xpassed') ?? 0);
  if (ran > 0 && input.tests.length === 0) return disagreement(`pytest's summary counts ${ran} passed`);
  return undefined;
}

/** A TAP stream must end with its plan and hold as many test points as the plan says. */
function tapProblem(stdout: string): ResultProblem | undefined {
  const results = tapResults(stdout);
  if (results === undefined) return undefined;
  const { plan } = results;
  if (plan.end === null || plan.start === null) {
    return {
      kind: 'inconsistent',
      message:
        'the TAP output ends without its plan line (1..N) although the command exited 0: the runner stopped before its end.',
    };
  }
  const planned = plan.end - plan.start + 1;
  if (!plan.skipAll && results.count !== planned) {
    return disagreement(`the TAP plan announces ${planned} tests and the output holds ${results.count}`);
  }
  if (results.fail > 0) return disagreement(`the TAP output holds ${results.fail} failing test points`);
  return undefined;
}

function tapResults(text: string): FinalResults | undefined {
  let final: FinalResults | undefined;
  const parser = new Parser((results) => {
    final = results;
  });
  parser.end(text);
  return final;
}

function disagreement(what: string): ResultProblem {
  return {
    kind: 'inconsistent',
    message: `the per-test results and the runner disagree: ${what}, the results read none of that, and the command exited 0.`,
  };
}

const READ =
  'Ratchet reads per-test results from node:test, jest, vitest, mocha, ava, pytest, unittest, go test, cargo test, Maven and Gradle, and from any command printing TAP or JUnit XML on stdout.';

/** No per-test result could be read: why, and what to configure, per runner. */
function unreadable(framework: Framework, command: string): ResultProblem {
  const hints: Partial<Record<Framework, string>> = {
    'node-test':
      'Let Ratchet add its reporters: remove --test-reporter options from the test command, or use --test-reporter=tap.',
    mocha:
      'Make the test command a bare mocha call (Ratchet adds --reporter tap), e.g. [test] command = "npx mocha" in .ratchet/config.toml.',
    ava: 'Make the test command a bare ava call (Ratchet adds --tap), e.g. [test] command = "npx ava".',
    jest: 'Make the test command a bare jest call (Ratchet adds --json), e.g. [test] command = "npx jest".',
    vitest:
      'Make the test command a bare vitest call (Ratchet adds its JSON reporter), e.g. [test] command = "npx vitest run".',
    unittest: 'Run unittest as `python3 -m unittest` (Ratchet adds -v), or use pytest.',
  };
  const runner = framework === 'npm' || framework === 'custom' ? 'its runner' : framework;
  return {
    kind: 'unreadable',
    message: `no per-test result could be read from its output (${runner}), so no gate could tell a passing test from a failing one.`,
    hint: `${hints[framework] ?? `Set [test] command = "..." in .ratchet/config.toml to the test runner itself, not \`${command}\`.`} ${READ}`,
  };
}
