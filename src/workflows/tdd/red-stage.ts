import { posix } from 'node:path';
import type { HandoffState, TestCase } from '../../core/handoff.js';
import { redGate } from '../../verify/gates.js';
import { describeVerificationChanges, diffVerification } from '../../verify/verification-files.js';
import {
  attemptRange,
  checkpoint,
  describeTest,
  outcomeProblem,
  requireGreenBaseline,
  runAgentStage,
  runSuite,
  stageEnd,
  stageStart,
  subjectFor,
  type Step,
  type TddContext,
} from './context.js';
import type { StageResult } from './plan-stage.js';
import { TEST_LIST_FILE } from './test-list.js';
import { reviewNewTests } from './test-review.js';

const PASSED_IMMEDIATELY_HINT =
  'The new test PASSED before any implementation: either the behaviour already exists or the assertion does not check it. ' +
  'Tighten the assertion so it checks the new behaviour and fails against the current code.';

/** Common variables of every stage prompt that works on one test case. */
export function testVariables(
  context: TddContext,
  state: HandoffState,
  test: TestCase,
): Record<string, string | number> {
  return {
    feature: context.policy.feature,
    changed_files: context.cycleFiles.join('\n') || `${test.testFile}\n${test.implFile}`,
    cycle: state.cycleNumber,
    current_test: describeTest(test),
    test_file: test.testFile,
    impl_file: test.implFile,
    test_command: context.deps.verifier.testCommand,
    completed_tests: state.completedTests.join('\n') || '(none)',
    pending_tests: state.pendingTests.join('\n') || '(none)',
  };
}

/**
 * RED (then RED_FIX on retries): one new test that fails by assertion while every test that
 * passed before still passes. The suite's result before the stage is the baseline.
 */
export async function* redStage(context: TddContext, state: HandoffState, test: TestCase): Step<StageResult> {
  const { deps, policy } = context;
  const cycle = state.cycleNumber;
  const maxAttempts = policy.stage('RED').maxAttempts;
  const baseline = yield* runSuite(context, 'RED', { reuse: true, baseline: true });
  requireGreenBaseline(baseline.result, 'RED');
  const range = attemptRange(context, 'RED', cycle, maxAttempts);
  // RED may change how the tests run (a new test directory, a fixture): said, and locked after it.
  const verificationBefore = await deps.verifier.lockVerification();
  let feedback = '';
  let reason = range.prior?.rejections.at(-1) ?? '';
  for (let attempt = range.first; attempt <= range.last; attempt++) {
    // RED_FIX works on what the attempt before left; a resumed RED starts from its checkpoint again.
    const stage = attempt === range.first ? 'RED' : 'RED_FIX';
    yield stageStart(stage, 'RED', cycle, attempt);
    const outcome = yield* runAgentStage(context, {
      stage,
      phase: 'RED',
      cycle,
      attempt,
      variables: {
        ...testVariables(context, state, test),
        test_list: (await deps.workspace.readFile(TEST_LIST_FILE)) ?? '(none)',
        feedback: feedback || '(none)',
      },
      paths: { read: ['**'], write: ['**'], denyWrite: [TEST_LIST_FILE] },
      lastAttempt: range.last,
    });
    const problem = outcomeProblem(outcome);
    if (problem) {
      // RED_FIX works on what RED left behind (seed 003: re-run the test agent with the error).
      yield stageEnd(stage, 'RED', cycle, attempt, 'rejected', outcome.status);
      feedback = problem;
      reason = outcome.status;
      continue;
    }
    const after = yield* runSuite(context, stage, { reuse: false });
    const decision = redGate(baseline.result, after.result);
    if (!decision.accepted) {
      if (decision.reason === 'passed-immediately') {
        yield {
          type: 'warning',
          stage,
          message: `RED: the new test for "${test.description}" passed immediately; the behaviour may already exist. Asking for a stricter test.`,
        };
      }
      yield stageEnd(stage, 'RED', cycle, attempt, 'rejected', decision.reason, decision.subjects);
      feedback =
        decision.reason === 'passed-immediately'
          ? `${PASSED_IMMEDIATELY_HINT}\n\n${decision.feedback}`
          : decision.feedback;
      reason = decision.reason;
      continue;
    }
    // The gate accepted: the static review of test quality (seed 000) may still send the test back.
    const review = yield* reviewNewTests(context, test, cycle, attempt, stage);
    if (review.refused) {
      yield stageEnd(stage, 'RED', cycle, attempt, 'rejected', review.reason);
      feedback = review.feedback;
      reason = review.reason;
      continue;
    }
    const next: HandoffState = {
      ...state,
      phase: 'RED',
      nextPhase: 'GREEN',
      testResult: 'FAIL',
      error: null,
      errorDetails: null,
      retryCount: attempt - 1,
    };
    // The test file RED was asked to write is no news, even where the test command names it
    // (remark's `node test.js`): it is locked from GREEN on as every test file is.
    const changes = diffVerification(verificationBefore, await deps.verifier.lockVerification()).filter(
      (change) => change.file !== posix.normalize(test.testFile),
    );
    if (changes.length > 0) {
      yield {
        type: 'warning',
        stage,
        message: `RED changed files that decide how the tests run or are reported: ${describeVerificationChanges(changes).join('; ')}. They are locked from GREEN on.`,
      };
    }
    const commit = yield* checkpoint(context, stage, subjectFor('test', test.description), next);
    context.lastRun = { commit, run: after };
    yield stageEnd(stage, 'RED', cycle, attempt, 'accepted', decision.summary);
    return { accepted: true, state: next };
  }
  return { accepted: false, attempts: maxAttempts, lastAttempt: range.last, reason, feedback };
}
