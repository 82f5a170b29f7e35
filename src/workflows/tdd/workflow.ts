import { isRatchetError, RatchetError, toRatchetError } from '../../core/errors.js';
import type { HandoffState, TestCase } from '../../core/handoff.js';
import type { Phase } from '../../core/stages.js';
import type { Step, TddContext } from './context.js';
import { greenStage } from './green-stage.js';
import { planStage, type StageResult } from './plan-stage.js';
import type { PriorAttempts, StoredTestRun, TddDependencies, TddPolicy } from './ports.js';
import { redStage } from './red-stage.js';
import { refactorStage } from './refactor-stage.js';

export interface TddResult {
  state: HandoffState;
  cycles: number;
}

/** The state a fresh run starts from: PLAN of cycle 1 with nothing done. */
export function initialHandoff(runId: string): HandoffState {
  return {
    phase: 'PLAN',
    nextPhase: 'PLAN',
    cycleNumber: 1,
    currentTest: null,
    completedTests: [],
    pendingTests: [],
    testResult: null,
    error: null,
    errorDetails: null,
    retryCount: 0,
    runId,
  };
}

function requireTest(state: HandoffState, phase: Phase): TestCase {
  if (state.currentTest === null) {
    throw new RatchetError('internal', `The handoff state says ${phase} next but names no current test.`, {
      hint: 'Run `ratchet rollback <commit>` to a PLAN checkpoint, then `ratchet resume`.',
    });
  }
  return state.currentTest;
}

/**
 * The TDD loop of seed 003 with the gates of seed 000: PLAN -> RED -> GREEN -> REFACTOR per
 * item of `test-list.md`, until PLAN reports that every item is done. Each accepted stage is a
 * commit with a handoff note, so `start` may be the note of any checkpoint (resume).
 *
 * The loop ends when (a) the next phase is COMPLETE, (b) a stage exhausts its attempts (the
 * error is written into the note on HEAD and a `gate-failed` error is thrown), (c) a provider
 * error survives its retries (recorded the same way, rethrown), or (d) the signal fires
 * (`interrupted`, nothing recorded: the last checkpoint is the resume point).
 *
 * `options.priorAttempts`: what processes before this one left of the stages after `start` (a
 * resume after a kill or an interruption): those stages number their attempts on from there,
 * within what is left of their limits (see `attemptRange`).
 *
 * `options.knownRun`: a run of the whole suite on a commit, made by someone else on the same tree
 * (the tasks coordinator, after a merge): PLAN's baseline reuses it when HEAD is that commit and
 * the tree is clean, instead of running the suite again.
 */
export async function* runTdd(
  policy: TddPolicy,
  deps: TddDependencies,
  start: HandoffState,
  signal?: AbortSignal,
  options: { priorAttempts?: readonly PriorAttempts[]; knownRun?: { commit: string; run: StoredTestRun } } = {},
): Step<TddResult> {
  const context: TddContext = {
    policy,
    deps,
    signal,
    lastRun: options.knownRun,
    cycleBase: undefined,
    cycleFiles: [],
    lastCheckpoint: await deps.workspace.head(),
    treeClean: false,
    priorAttempts: options.priorAttempts ?? [],
  };
  const refactorNext = async (test: TestCase): Promise<boolean> => {
    if (policy.refactor === 'never') return false;
    if (policy.refactor === 'always') return true;
    return (await deps.refactorCheck([test.implFile])).needsRefactor;
  };
  let state: HandoffState = { ...start, error: null, errorDetails: null, runId: policy.runId };
  let cycles = 0;
  try {
    while (state.nextPhase !== 'COMPLETE' && state.nextPhase !== null) {
      if (signal?.aborted) throw new RatchetError('interrupted', 'Interrupted');
      const phase = state.nextPhase;
      let result: StageResult;
      if (phase === 'PLAN') {
        const cycle = state.phase === 'PLAN' && state.nextPhase === 'PLAN' ? state.cycleNumber : state.cycleNumber + 1;
        const planning: HandoffState = { ...state, cycleNumber: cycle };
        yield { type: 'cycle-start', cycle, test: null };
        result = yield* planStage(context, planning);
        if (result.accepted && result.state.currentTest) cycles++;
      } else if (phase === 'RED') {
        result = yield* redStage(context, state, requireTest(state, phase));
      } else if (phase === 'GREEN') {
        result = yield* greenStage(context, state, requireTest(state, phase), refactorNext);
      } else {
        result = { accepted: true, state: yield* refactorStage(context, state, requireTest(state, phase)) };
      }
      if (!result.accepted) {
        const failed: HandoffState = {
          ...state,
          error: `${result.stage ?? phase} failed after ${result.attempts} attempt${result.attempts === 1 ? '' : 's'}: ${result.reason}${whyFailed(phase, result.reason, result.feedback)}`,
          errorDetails: { type: result.reason, message: result.feedback.slice(0, 4000) },
          // Retries made: after a resume, attempts cut short by a kill count too (their numbers are used).
          retryCount: (result.lastAttempt ?? result.attempts) - 1,
        };
        yield* recordError(context, failed);
        throw new RatchetError('gate-failed', failed.error ?? 'stage failed', {
          hint: result.hint ?? 'Inspect `ratchet status` and the report; fix the cause, then `ratchet resume`.',
          details: { phase, reason: result.reason },
        });
      }
      state = result.state;
    }
  } catch (error) {
    const failure = toRatchetError(error);
    if (failure.code !== 'interrupted' && failure.code !== 'gate-failed' && !isRatchetError(error, 'notes')) {
      yield* recordError(context, {
        ...state,
        error: failure.message,
        errorDetails: { type: failure.code, message: failure.hint ?? failure.message },
      });
    }
    throw failure;
  }
  return { state, cycles };
}

/**
 * Reasons whose feedback is a short explanation of what was wrong: the agent's own outcome (see
 * `StageOutcome`) and the static review of test quality's refusal.
 */
const AGENT_OUTCOMES = new Set(['invalid-output', 'turn-limit', 'timeout', 'path-violation', 'test-quality']);

/** At most this many characters of the explanation go into the error's message. */
const MAX_WHY = 300;

/**
 * What was wrong, for the error's message (` (...)`, or nothing): the explanation the last
 * attempt got, when it is the agent's own outcome (invalid structured output, the turn or time
 * limit, a file it may not change) or PLAN's judgement of its answer. Those are one-line
 * explanations, and before the run's first checkpoint there is no note to keep them: the message
 * is all the ledger and the user see. Gate failures of test runs keep their output in the note.
 */
function whyFailed(phase: Phase, reason: string, feedback: string): string {
  if (!AGENT_OUTCOMES.has(reason) && phase !== 'PLAN') return '';
  const text = feedback.replace(/\s+/g, ' ').trim();
  if (text === '') return '';
  return ` (${text.length > MAX_WHY ? `${text.slice(0, MAX_WHY - 1)}…` : text})`;
}

/**
 * Writes the error into the note of the last checkpoint, keeping the phase to resume from. A
 * commit after it has no note of its own (a checkpoint cut short between commit and note, or a
 * commit the agent made before its stage failed): the branch goes back to the checkpoint, as
 * `resume` would, rather than giving that commit the older state's note. Before the run's first
 * checkpoint there is no note to write: the base commit is the user's, and the error stays in
 * the ledger (`resume` then starts again from PLAN).
 */
async function* recordError(context: TddContext, failed: HandoffState): Step<void> {
  const { workspace } = context.deps;
  const commit = context.lastCheckpoint ?? (await workspace.head());
  await workspace.resetTo(commit);
  context.treeClean = true;
  if (commit === context.policy.baseCommit) return;
  await workspace.writeNote(commit, failed);
  yield { type: 'note-write', commit, state: failed };
}
