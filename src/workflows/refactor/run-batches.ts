import { RatchetError } from '../../core/errors.js';
import type { RunContext, Steps } from '../definition.js';
import { markRolledBack, runBatchLoop, type RefactorLoopResult } from './batch-loop.js';
import { createBatchPorts } from './batch-ports.js';
import type { VerifierRun } from './ports.js';
import type { PreparedRefactor } from './prepare.js';
import type { RefactorRunSettings } from './run-settings.js';

/** What a refactor run's batches did, and its final full verification (null when none ran). */
export interface RefactorResult {
  loop: RefactorLoopResult;
  finalVerifier: VerifierRun | null;
}

/**
 * The batch loop and the final full verifier (seed 002, 18). A run that stopped early (seed 002,
 * 19) or whose final full verifier failed ends with a `gate-failed` error that says why; its
 * checkpoints stay on the branch (up to the newest that passed the full verifier).
 */
export async function* runBatches(
  context: RunContext<RefactorRunSettings>,
  prepared: PreparedRefactor,
): Steps<RefactorResult> {
  const settings = context.config.refactor;
  const { deps, verifier } = await createBatchPorts(context, prepared);
  const result = yield* runBatchLoop(
    prepared.plan,
    deps,
    {
      retryPerBatch: settings.retryPerBatch,
      runFullVerifierEvery: settings.runFullVerifierEvery,
      allowPublicApiChanges: settings.allowPublicApiChanges,
      useCritic: context.settings.critic === true,
      maxTurnsPatcher: settings.claude.maxTurnsPatcher,
      bashTimeoutMs: context.config.bash.timeoutMs,
      maxRuntimeMs: settings.maxRuntimeMinutes === null ? null : settings.maxRuntimeMinutes * 60_000,
    },
    context.signal,
  );
  // The final full verifier, also after an early stop whose last checkpoint passed only the fast
  // verifier: what the run leaves on its branch has passed the full verifier, or the branch goes
  // back to the newest checkpoint that did.
  let finalVerifier: VerifierRun | null = null;
  if (result.stopped === null || (!result.fullVerifierFailed && result.lastCheckpoint !== result.lastFullVerified)) {
    yield { type: 'stage-start', stage: 'FULL_VERIFY', phase: 'SETUP', cycle: 0, attempt: 1 };
    finalVerifier = await verifier.run('full', 'FULL_VERIFY', context.signal);
    for (const entry of finalVerifier.results)
      yield {
        type: 'verify-end',
        stage: 'FULL_VERIFY',
        kind: 'test',
        result: entry.result,
        outputFile: entry.outputFile,
      };
    const outcome = finalVerifier.ok ? 'accepted' : 'rejected';
    yield { type: 'stage-end', stage: 'FULL_VERIFY', phase: 'SETUP', cycle: 0, attempt: 1, outcome };
    if (finalVerifier.ok) yield { type: 'checkpoint-verify', commit: result.lastCheckpoint, level: 'full' };
    if (!finalVerifier.ok && result.lastCheckpoint !== result.lastFullVerified) {
      await deps.workspace.resetTo(result.lastFullVerified);
      yield {
        type: 'checkpoint-rollback',
        stage: 'FULL_VERIFY',
        to: result.lastFullVerified,
        reason: 'the final full verifier failed',
      };
      await markRolledBack(
        result.batches,
        result.lastFullVerified,
        `the final full verifier failed; reset to ${result.lastFullVerified.slice(0, 8)}`,
        prepared.plan,
        deps,
      );
      result.lastCheckpoint = result.lastFullVerified;
    }
  }
  const finalFailure =
    finalVerifier !== null && !finalVerifier.ok
      ? `the final full verifier failed; reset to ${result.lastCheckpoint.slice(0, 8)}`
      : null;
  if (result.stopped !== null || finalFailure !== null) {
    const message = [result.stopped, finalFailure].filter((part) => part !== null).join('; ');
    throw new RatchetError('gate-failed', message);
  }
  return { loop: result, finalVerifier };
}
