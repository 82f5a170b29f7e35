import { RatchetError } from '../../src/core/errors.js';
import type { StageName } from '../../src/core/stages.js';
import type { FailureKind, TestCaseResult, TestRunResult } from '../../src/core/verification.js';
import { lockVerification, type VerificationLock } from '../../src/verify/verification-files.js';
import type { StoredCheck, StoredTestRun, VerifierPort } from '../../src/workflows/tdd/ports.js';
import type { FakeWorkspace, FileMap } from './fake-tdd-workspace.js';

// --- the fake test runner ---

/**
 * One test of the fake test language: a JSON line in a test file. The test passes when `impl`
 * contains `contains`; otherwise it fails with `failWith` (default `assertion`). A missing
 * `impl` is a collection error of the whole test file (it "cannot import" the module), and so
 * is a line that is not valid JSON.
 */
export interface FakeTestSpec {
  name: string;
  impl: string;
  contains: string;
  failWith?: FailureKind;
}

export function testLine(spec: FakeTestSpec): string {
  return JSON.stringify(spec);
}

/** A fake test file holding these tests. */
export function testFile(...specs: FakeTestSpec[]): string {
  return `${specs.map(testLine).join('\n')}\n`;
}

function isSpec(value: unknown): value is FakeTestSpec {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.name === 'string' && typeof record.impl === 'string' && typeof record.contains === 'string';
}

export interface SuiteOutcome {
  tests: TestCaseResult[];
  collectionErrors: string[];
}

/** Evaluates the fake test language over a tree; test files are those matching `isTestFile`. */
export function evaluateFakeSuite(files: FileMap, isTestFile: (path: string) => boolean): SuiteOutcome {
  const tests: TestCaseResult[] = [];
  const collectionErrors: string[] = [];
  for (const [path, text] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    if (!isTestFile(path)) continue;
    const specs: FakeTestSpec[] = [];
    let broken: string | undefined;
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        broken = `${path}: SyntaxError: cannot parse ${JSON.stringify(line.slice(0, 40))}`;
        break;
      }
      if (!isSpec(value)) {
        broken = `${path}: SyntaxError: not a test ${JSON.stringify(line.slice(0, 40))}`;
        break;
      }
      specs.push(value);
    }
    const missing = specs.find((spec) => !files.has(spec.impl));
    if (missing !== undefined) broken ??= `${path}: Cannot find module '${missing.impl}'`;
    if (broken !== undefined) {
      collectionErrors.push(broken);
      continue;
    }
    for (const spec of specs) {
      const passed = files.get(spec.impl)?.includes(spec.contains) ?? false;
      tests.push({
        id: `${path}::${spec.name}`,
        name: spec.name,
        file: path,
        status: passed ? 'passed' : 'failed',
        ...(passed
          ? {}
          : {
              failureKind: spec.failWith ?? 'assertion',
              message: `expected ${spec.impl} to contain ${JSON.stringify(spec.contains)}`,
            }),
      });
    }
  }
  return { tests, collectionErrors };
}

/** A lint or typecheck of the fake verifier: returns the problems found in a tree. */
export interface FakeCheck {
  kind: 'lint' | 'typecheck';
  name: string;
  problems(files: FileMap): string[];
}

function markerCheck(kind: 'lint' | 'typecheck', marker: string): FakeCheck {
  return {
    kind,
    name: kind,
    problems: (files) => [...files].filter(([, text]) => text.includes(marker)).map(([path]) => `${path}: ${marker}`),
  };
}

/** Lint fails on any file containing `LINT-ERROR`; typecheck on any containing `TYPE-ERROR`. */
export const DEFAULT_FAKE_CHECKS: readonly FakeCheck[] = [
  markerCheck('lint', 'LINT-ERROR'),
  markerCheck('typecheck', 'TYPE-ERROR'),
];

export interface FakeVerifierOptions {
  /** Which paths are test files (default: `*.test.ts` anywhere). */
  isTestFile?: (path: string) => boolean;
  /** Replaces the fake test language. */
  evaluate?: (files: FileMap) => SuiteOutcome;
  checks?: readonly FakeCheck[];
}

/** A `VerifierPort` that computes results from the `FakeWorkspace`'s tree. */
export class FakeVerifier implements VerifierPort {
  readonly testCommand = 'fake-test --all';
  /** Every test run, in order, with the stage that asked for it. */
  readonly testRuns: { stage: StageName; result: TestRunResult }[] = [];
  /** Every check run, in order. */
  readonly checkRuns: { stage: StageName; checks: StoredCheck[] }[] = [];
  private readonly workspace: FakeWorkspace;
  private readonly evaluate: (files: FileMap) => SuiteOutcome;
  private readonly checks: readonly FakeCheck[];

  constructor(workspace: FakeWorkspace, options: FakeVerifierOptions = {}) {
    this.workspace = workspace;
    const isTestFile = options.isTestFile ?? ((path: string) => path.endsWith('.test.ts'));
    this.evaluate = options.evaluate ?? ((files) => evaluateFakeSuite(files, isTestFile));
    this.checks = options.checks ?? DEFAULT_FAKE_CHECKS;
  }

  /** The real lock over the workspace's files on disk, for the fake test command. */
  lockVerification(): Promise<VerificationLock> {
    return lockVerification(this.workspace.root, [this.testCommand]);
  }

  runTests(stage: StageName, signal?: AbortSignal): Promise<StoredTestRun> {
    if (signal?.aborted) return Promise.reject(new RatchetError('interrupted', 'Interrupted'));
    const { tests, collectionErrors } = this.evaluate(this.workspace.tree());
    const failed = tests.filter((test) => test.status === 'failed').length;
    const passed = tests.filter((test) => test.status === 'passed').length;
    const output = [
      ...tests.map(
        (test) =>
          `${test.status === 'passed' ? 'PASS' : 'FAIL'} ${test.id}${test.message === undefined ? '' : ` - ${test.message}`}`,
      ),
      ...collectionErrors.map((error) => `ERROR ${error}`),
      `${passed} passed, ${failed} failed`,
    ].join('\n');
    const result: TestRunResult = {
      command: this.testCommand,
      exitCode: failed === 0 && collectionErrors.length === 0 ? 0 : 1,
      timedOut: false,
      durationMs: 1,
      output,
      tests,
      collectionErrors,
      source: 'jest-json',
      counts: { passed, failed, skipped: 0, total: tests.length },
    };
    this.testRuns.push({ stage, result });
    return Promise.resolve({ result, outputFile: `.ratchet/runs/fake/test-${this.testRuns.length}.log` });
  }

  runChecks(stage: StageName, signal?: AbortSignal): Promise<StoredCheck[]> {
    if (signal?.aborted) return Promise.reject(new RatchetError('interrupted', 'Interrupted'));
    const tree = this.workspace.tree();
    const checks = this.checks.map((check): StoredCheck => {
      const problems = check.problems(tree);
      return {
        kind: check.kind,
        result: {
          name: check.name,
          command: `fake-${check.kind}`,
          exitCode: problems.length === 0 ? 0 : 1,
          timedOut: false,
          durationMs: 1,
          output: problems.join('\n'),
          ok: problems.length === 0,
        },
        outputFile: null,
      };
    });
    this.checkRuns.push({ stage, checks });
    return Promise.resolve(checks);
  }

  /** How many suite runs each stage asked for. */
  runsByStage(): Partial<Record<StageName, number>> {
    const counts: Partial<Record<StageName, number>> = {};
    for (const run of this.testRuns) counts[run.stage] = (counts[run.stage] ?? 0) + 1;
    return counts;
  }
}
