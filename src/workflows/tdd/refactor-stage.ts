import type { StageOutcome } from '../../core/agent.js';
import { toRatchetError, type ErrorCode, type RatchetError } from '../../core/errors.js';
import type { HandoffState, TestCase } from '../../core/handoff.js';
import {
  attemptRange,
  checkpoint,
  outcomeProblem,
  refreshCycleFiles,
  runAgentStage,
  stageEnd,
  stageStart,
  subjectFor,
  type Step,
  type TddContext,
} from './context.js';
import { judgeImplementation, lockTests } from './green-stage.js';
import { testVariables } from './red-stage.js';
import { TEST_LIST_FILE } from './test-list.js';

/** Model failures that survived their retries: REFACTOR gives up on them instead of failing the cycle. */
const AGENT_FAILURES: ReadonlySet<ErrorCode> = new Set(['provider', 'rate-limit', 'overloaded', 'network', 'timeout']);

/**
 * REFACTOR, gated by RE_VERIFY. A refactoring that breaks anything is rolled back to the
 * pre-refactor commit and tried again; when every attempt fails the cycle still succeeds with
 * an empty `refactor:` commit (seed 000: REFACTOR is best effort, never a gate on the cycle).
 * So does a model failure that survived its retries (the tree is reset to GREEN's commit);
 * `interrupted`, `auth` and every other error still end the run.
 */
export async function* refactorStage(context: TddContext, state: HandoffState, test: TestCase): Step<HandoffState> {
  const { deps, policy } = context;
  const cycle = state.cycleNumber;
  const maxAttempts = policy.stage('REFACTOR').maxAttempts;
  const preRefactor = await deps.workspace.head();
  const lockedTests = await lockTests(context, test);
  await refreshCycleFiles(context);
  const check = await deps.refactorCheck([test.implFile]);
  const reasons =
    check.reasons.length > 0
      ? check.reasons.map((reason) => `- ${reason}`).join('\n')
      : '(the static checker found nothing; improve names and duplication only if clearly worth it)';
  const range = attemptRange(context, 'REFACTOR', cycle, maxAttempts);
  let feedback = '';
  let subject = 'refactor: no changes needed';
  let acceptedAttempt = 0;
  let attempts = range.first - 1;
  let agentFailure: RatchetError | undefined;
  /**
   * Why each rolled-back attempt was rejected: `timeout`, `path-violation` or a verification
   * reason (those of a process before a resume first).
   */
  const rejections: string[] = [...(range.prior?.rejections ?? [])];
  // The tree after this stage is either GREEN's (already verified) or the verified refactoring.
  let verifiedRun = context.lastRun?.run;
  for (let attempt = range.first; attempt <= range.last && acceptedAttempt === 0; attempt++) {
    attempts = attempt;
    yield stageStart('REFACTOR', 'REFACTOR', cycle, attempt);
    let outcome: StageOutcome<unknown>;
    try {
      outcome = yield* runAgentStage(context, {
        stage: 'REFACTOR',
        phase: 'REFACTOR',
        cycle,
        attempt,
        variables: { ...testVariables(context, state, test), reasons, feedback: feedback || '(none)' },
        paths: { read: ['**'], write: ['**'], denyWrite: [...lockedTests.globs, TEST_LIST_FILE] },
        lastAttempt: range.last,
      });
    } catch (error) {
      // Seed 000: a model that errors or times out in REFACTOR does not fail the cycle.
      const failure = toRatchetError(error);
      if (!AGENT_FAILURES.has(failure.code)) throw error;
      yield stageEnd('REFACTOR', 'REFACTOR', cycle, attempt, 'error', failure.code);
      await deps.workspace.resetTo(preRefactor);
      context.treeClean = true;
      agentFailure = failure;
      break;
    }
    const problem = outcomeProblem(outcome);
    if (outcome.status === 'path-violation' || outcome.status === 'timeout') {
      rejections.push(outcome.status);
      // It changed tests or the test list, or was stopped half-way: the whole attempt goes.
      yield stageEnd('REFACTOR', 'REFACTOR', cycle, attempt, 'rejected', outcome.status);
      await deps.workspace.resetTo(preRefactor);
      context.treeClean = true;
      yield { type: 'checkpoint-rollback', stage: 'REFACTOR', to: preRefactor, reason: outcome.status };
      feedback = `Your previous refactoring was rolled back: ${outcome.message}`;
      continue;
    }
    if (!(await deps.workspace.hasChanges())) {
      yield stageEnd('REFACTOR', 'REFACTOR', cycle, attempt, 'accepted', problem ?? 'no changes');
      acceptedAttempt = attempt;
      break;
    }
    yield stageStart('RE_VERIFY', 'REFACTOR', cycle, attempt);
    const verdict = yield* judgeImplementation(context, 'RE_VERIFY', lockedTests, { checks: true });
    yield stageEnd(
      'RE_VERIFY',
      'REFACTOR',
      cycle,
      attempt,
      verdict.accepted ? 'accepted' : 'rejected',
      verdict.accepted ? verdict.summary : verdict.reason,
    );
    if (verdict.accepted) {
      yield stageEnd('REFACTOR', 'REFACTOR', cycle, attempt, 'accepted', verdict.summary);
      subject = subjectFor('refactor', test.description);
      acceptedAttempt = attempt;
      verifiedRun = verdict.run;
      break;
    }
    yield stageEnd('REFACTOR', 'REFACTOR', cycle, attempt, 'rejected', verdict.reason);
    rejections.push(verdict.reason);
    await deps.workspace.resetTo(preRefactor);
    context.treeClean = true;
    yield { type: 'checkpoint-rollback', stage: 'REFACTOR', to: preRefactor, reason: verdict.reason };
    feedback = `Your previous refactoring was rolled back because it broke verification:\n${verdict.feedback}`;
  }
  if (acceptedAttempt === 0) {
    // Attempts rejected for another reason than verification (a time limit, a protected file) say so.
    const others = [...new Set(rejections.filter((reason) => reason === 'timeout' || reason === 'path-violation'))];
    const rejectedFor =
      others.length === 0
        ? 'broke verification'
        : `were rejected (${[...others, ...(rejections.length > others.length ? ['verification'] : [])].join(', ')})`;
    subject = agentFailure
      ? `refactor: no changes kept (the agent failed: ${agentFailure.code})`
      : `refactor: no changes kept (${maxAttempts} attempts ${rejectedFor})`;
    const why = agentFailure ? `the agent failed (${agentFailure.message})` : `every attempt ${rejectedFor}`;
    yield { type: 'warning', stage: 'REFACTOR', message: `REFACTOR: ${why}; kept the code as it was after GREEN.` };
  }
  const next: HandoffState = {
    ...state,
    phase: 'REFACTOR',
    nextPhase: 'PLAN',
    testResult: 'PASS',
    error: null,
    errorDetails: null,
    // Retries made, as in every note: attempts - 1 (seed 003 6.2).
    retryCount: acceptedAttempt === 0 ? attempts - 1 : acceptedAttempt - 1,
  };
  const commit = yield* checkpoint(context, 'REFACTOR', subject, next, { allowEmpty: true });
  context.lastRun = verifiedRun ? { commit, run: verifiedRun } : undefined;
  return next;
}
