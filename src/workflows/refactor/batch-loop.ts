/**
 * Longer than 500 lines on purpose: the batch loop of seed 002 (sections 7, 18 and 19) and the
 * steps of one attempt it drives (patch, format, critic, roll back) share their context and
 * outcome types and are read together; the ports they use are in `batch-ports.ts`.
 */
import { pipeEvents } from '../../core/event-pipe.js';
import { RatchetError, isRatchetError } from '../../core/errors.js';
import type { EventInput } from '../../core/events.js';
import type { StageName } from '../../core/stages.js';
import { describeUnsafeEntries } from '../../core/unsafe-entry.js';
import { isFormatBatch } from './plan.js';
import type { CommandsRun, RefactorDependencies, RefactorPolicy, VerifierRun } from './ports.js';
import { CriticResponseSchema, PatchResponseSchema, type PatchResponse, type PlannedBatch } from './schemas.js';

type Step<T> = AsyncGenerator<EventInput, T>;

interface BatchOutcome {
  batch: string;
  /** `rolled-back`: committed, then dropped when the full verifier failed after it. */
  outcome: 'committed' | 'noop' | 'blocked' | 'failed' | 'rolled-back';
  attempts: number;
  commit: string | null;
  reason: string | null;
}

export interface RefactorLoopResult {
  batches: BatchOutcome[];
  /** Set when the run stopped early (seed 002, section 19). */
  stopped: string | null;
  lastCheckpoint: string;
  /**
   * The newest checkpoint known to pass the full verifier (the starting commit passed it as the
   * baseline). When it is older than `lastCheckpoint`, the checkpoints after it passed only the
   * fast verifier.
   */
  lastFullVerified: string;
  /** True when the loop itself stopped because the full verifier failed (it then reset to `lastFullVerified`). */
  fullVerifierFailed: boolean;
}

const READ_ONLY = { read: ['**'], write: [] as string[], denyWrite: ['**'] };

function* verifierEvents(run: VerifierRun, stage: StageName): Generator<EventInput> {
  for (const entry of run.results) {
    yield { type: 'verify-end', stage, kind: 'test', result: entry.result, outputFile: entry.outputFile };
  }
}

/** Resets a rejected attempt to the last checkpoint and closes its stage as rejected. */
async function* rollBackAttempt(
  attempt: {
    workspace: RefactorDependencies['workspace'];
    to: string;
    owner: StageName;
    cycle: number;
    attempt: number;
  },
  rollbackStage: StageName,
  rollbackReason: string,
  rejection: string,
): Step<void> {
  await attempt.workspace.resetTo(attempt.to);
  yield { type: 'checkpoint-rollback', stage: rollbackStage, to: attempt.to, reason: rollbackReason };
  yield {
    type: 'stage-end',
    stage: attempt.owner,
    phase: 'BATCH',
    cycle: attempt.cycle,
    attempt: attempt.attempt,
    outcome: 'rejected',
    reason: rejection,
  };
}

/** The first failing command: its failing tests first (reasons are cut short), then its output's tail. */
function failureText(run: CommandsRun): string {
  const failed = run.results.find((entry) => !entry.result.ok);
  if (!failed) return 'verification failed';
  const { result } = failed;
  const failing = 'tests' in result ? result.tests.filter((test) => test.status === 'failed') : [];
  const names = failing
    .slice(0, 5)
    .map((test) => `${test.id}${test.failureKind ? ` (${test.failureKind})` : ''}`)
    .join('; ');
  const more = failing.length > 5 ? `; and ${failing.length - 5} more` : '';
  return `$ ${result.command} (exit ${String(result.exitCode)}${result.timedOut ? ', timed out' : ''})${names ? `\nFailing: ${names}${more}` : ''}\n${result.output.slice(-6000)}`;
}

async function* askPatcher(
  deps: RefactorDependencies,
  policy: RefactorPolicy,
  batch: PlannedBatch,
  prompt: string,
  worktree: string,
  signal: AbortSignal | undefined,
): Step<PatchResponse | string> {
  const outcome = yield* pipeEvents((emit) =>
    deps.agentFor('PATCHER').runStage({
      stage: 'PATCHER',
      worktree,
      systemPrompt: deps.systemPrompt('PATCHER'),
      prompt,
      paths: READ_ONLY,
      maxTurns: policy.maxTurnsPatcher,
      bashTimeoutMs: policy.bashTimeoutMs,
      outputSchema: PatchResponseSchema,
      ...(signal ? { signal } : {}),
      emit,
    }),
  );
  if (outcome.status !== 'completed' || outcome.output === undefined) {
    return outcome.status === 'completed' ? 'the patcher returned no PatchResponse' : outcome.message;
  }
  return outcome.output;
}

async function* askCritic(
  deps: RefactorDependencies,
  policy: RefactorPolicy,
  batch: PlannedBatch,
  patch: PatchResponse,
  worktree: string,
  signal: AbortSignal | undefined,
): Step<string | null> {
  const outcome = yield* pipeEvents((emit) =>
    deps.agentFor('CRITIC').runStage({
      stage: 'CRITIC',
      worktree,
      systemPrompt: deps.systemPrompt('CRITIC'),
      prompt: `Batch ${batch.id}: ${batch.goal}\nScope: ${batch.scope_globs.join(', ')}\nDiff budget: ${batch.diff_budget_loc} lines\n\nRationale: ${patch.rationale}\n\nPatch:\n${patch.patch_unified_diff}`,
      paths: READ_ONLY,
      maxTurns: Math.max(2, Math.floor(policy.maxTurnsPatcher / 2)),
      bashTimeoutMs: policy.bashTimeoutMs,
      outputSchema: CriticResponseSchema,
      ...(signal ? { signal } : {}),
      emit,
    }),
  );
  // A review that ended without a verdict is no approval: the patch does not land. Provider,
  // authentication and interrupt failures are thrown by the runtime and stop the run, as for the patcher.
  if (outcome.status !== 'completed') return `The critic gave no verdict: ${outcome.message}`;
  if (outcome.output === undefined) return 'The critic gave no verdict: it returned no CriticResponse';
  const { decision, reasons } = outcome.output;
  return decision === 'accept' ? null : `The critic answered "${decision}": ${reasons.join('; ')}`;
}

function minutes(ms: number): string {
  const value = Number((ms / 60_000).toPrecision(3));
  return `${value} minute${value === 1 ? '' : 's'}`;
}

/** The stop reason when `elapsedMs` is over the max runtime, else null. */
function runtimeExceeded(maxRuntimeMs: number | null, elapsedMs: number): string | null {
  if (maxRuntimeMs === null || elapsedMs <= maxRuntimeMs) return null;
  return `the max runtime of ${minutes(maxRuntimeMs)} was exceeded (${minutes(elapsedMs)} elapsed)`;
}

/** Where one attempt at a batch got to before verification. */
type Attempted =
  /** The change is in the worktree, ready for the verifier; `rationale` goes into the commit. */
  | { kind: 'applied'; rationale: string }
  /** The attempt was refused; try again with this feedback. */
  | { kind: 'retry'; feedback: string }
  /** The batch ends here without a checkpoint (noop, blocked, or a formatter that failed). */
  | { kind: 'done'; outcome: BatchOutcome['outcome']; reason: string };

interface AttemptContext {
  deps: RefactorDependencies;
  policy: RefactorPolicy;
  batch: PlannedBatch;
  /** 1-based position of the batch in the plan (the events' cycle). */
  cycle: number;
  attempt: number;
  feedback: string | null;
  lastCheckpoint: string;
  signal: AbortSignal | undefined;
}

/** A patch batch's attempt: patcher, admission checks, optional critic, apply (seed 002, 17-18). */
async function* attemptPatch(context: AttemptContext): Step<Attempted> {
  const { deps, policy, batch, cycle, attempt, signal } = context;
  const { workspace } = deps;
  yield { type: 'stage-start', stage: 'PATCHER', phase: 'BATCH', cycle, attempt };
  const prompt = await deps.contextFor(batch, context.feedback);
  const answer = yield* askPatcher(deps, policy, batch, prompt, workspace.root, signal);
  // The patch is the contract: anything the agent changed in place is dropped.
  await workspace.resetTo(context.lastCheckpoint);
  const refused = (reason: string): EventInput => ({
    type: 'stage-end',
    stage: 'PATCHER',
    phase: 'BATCH',
    cycle,
    attempt,
    outcome: 'rejected',
    reason,
  });
  if (typeof answer === 'string') {
    yield refused(answer);
    return { kind: 'retry', feedback: `Your previous answer could not be used: ${answer}` };
  }
  if (answer.status !== 'ok') {
    yield {
      type: 'stage-end',
      stage: 'PATCHER',
      phase: 'BATCH',
      cycle,
      attempt,
      outcome: 'skipped',
      reason: `${answer.status}: ${answer.rationale}`,
    };
    return { kind: 'done', outcome: answer.status, reason: answer.rationale };
  }
  const admission = await deps.admit(batch, answer.patch_unified_diff, answer.touched_files);
  yield {
    type: 'patch-check',
    batch: batch.id,
    attempt,
    admitted: admission.admitted,
    files: admission.files,
    loc: admission.loc,
    violations: admission.violations,
  };
  if (!admission.admitted) {
    yield refused(`admission: ${admission.violations.join('; ').slice(0, 300)}`);
    return {
      kind: 'retry',
      feedback: `Your patch was rejected by the admission checks:\n- ${admission.violations.join('\n- ')}`,
    };
  }
  if (policy.useCritic) {
    const objection = yield* askCritic(deps, policy, batch, answer, workspace.root, signal);
    // The critic reviews; a runtime with tools of its own (Claude Code) could still have written.
    await workspace.resetTo(context.lastCheckpoint);
    if (objection) {
      yield refused(objection.slice(0, 300));
      return { kind: 'retry', feedback: objection };
    }
  }
  await workspace.apply(admission.patchText);
  return { kind: 'applied', rationale: answer.rationale };
}

/**
 * A formatting-only batch's attempt (seed 002, 17.3): the configured formatter makes the change,
 * not the model, and only formatting-only changes within scope are kept.
 */
async function* attemptFormat(context: AttemptContext): Step<Attempted> {
  const { deps, batch, cycle, attempt, signal } = context;
  yield { type: 'stage-start', stage: 'FORMAT', phase: 'BATCH', cycle, attempt };
  const formatted = await deps.format(batch, signal);
  for (const entry of formatted.run.results) {
    yield { type: 'verify-end', stage: 'FORMAT', kind: 'format', result: entry.result, outputFile: entry.outputFile };
  }
  if (!formatted.run.ok) {
    await deps.workspace.resetTo(context.lastCheckpoint);
    const reason = `the formatter failed: ${failureText(formatted.run).slice(0, 500)}`;
    yield {
      type: 'stage-end',
      stage: 'FORMAT',
      phase: 'BATCH',
      cycle,
      attempt,
      outcome: 'error',
      reason: reason.slice(0, 300),
    };
    return { kind: 'done', outcome: 'failed', reason };
  }
  yield {
    type: 'patch-check',
    batch: batch.id,
    attempt,
    admitted: formatted.files.length > 0,
    files: formatted.files,
    loc: formatted.loc,
    violations: formatted.reverted,
  };
  if (formatted.files.length === 0) {
    const reason =
      formatted.reverted.length === 0
        ? 'the formatter changed nothing'
        : `no formatting-only change within scope (${formatted.reverted.length} restored)`;
    yield { type: 'stage-end', stage: 'FORMAT', phase: 'BATCH', cycle, attempt, outcome: 'skipped', reason };
    return { kind: 'done', outcome: 'noop', reason };
  }
  // The FORMAT stage stays open through verification and the checkpoint, as PATCHER does.
  const restored =
    formatted.reverted.length > 0
      ? `\n\nRestored (not formatting-only or out of scope):\n- ${formatted.reverted.join('\n- ')}`
      : '';
  return {
    kind: 'applied',
    rationale: `Formatting only: ${formatted.files.length} files reformatted by the configured formatter.${restored}`,
  };
}

/**
 * After a failing full verifier reset the branch to `lastFullVerified`: the batches committed
 * after that checkpoint went with the reset. Each becomes `rolled-back`, and its TASK_LEDGER line
 * gets a later one that says so (the last line of a batch counts). Used by the loop's periodic
 * full verifier and by the engine's final one.
 */
export async function markRolledBack(
  outcomes: BatchOutcome[],
  lastFullVerified: string,
  reason: string,
  batches: readonly PlannedBatch[],
  deps: Pick<RefactorDependencies, 'appendTaskLedger'>,
): Promise<void> {
  const keptUpTo = outcomes.findIndex((entry) => entry.commit === lastFullVerified);
  for (const [position, entry] of outcomes.entries()) {
    if (position <= keptUpTo || entry.outcome !== 'committed') continue;
    entry.outcome = 'rolled-back';
    entry.reason = reason;
    const goal = batches.find((planned) => planned.id === entry.batch)?.goal ?? '';
    await deps.appendTaskLedger({
      batch: entry.batch,
      goal,
      outcome: 'rolled-back',
      attempts: entry.attempts,
      commit: entry.commit,
      reason,
    });
  }
}

/**
 * The batch loop of seed 002 (section 18). For each batch: context packet, patcher, admission
 * checks, apply (or, for a formatting-only batch, the formatter), fast (or full) verifier,
 * public-API comparison, checkpoint commit. A failed attempt is rolled back to the last
 * checkpoint and retried with its failure as feedback, up to `retryPerBatch` retries (a formatter
 * is deterministic: its batch gets one attempt); a batch that still fails stops the run (section
 * 19) at the last passing checkpoint. The full verifier runs every `runFullVerifierEvery`
 * committed batches. Once the loop has run longer than `maxRuntimeMs`, it stops before the next
 * batch (section 19). Batches never started are still written to TASK_LEDGER.jsonl.
 */
export async function* runBatchLoop(
  batches: PlannedBatch[],
  deps: RefactorDependencies,
  policy: RefactorPolicy,
  signal?: AbortSignal,
): Step<RefactorLoopResult> {
  const { workspace } = deps;
  const startedAt = deps.now().getTime();
  const outcomes: BatchOutcome[] = [];
  let lastCheckpoint = await workspace.head();
  let lastFullVerified = lastCheckpoint;
  let committed = 0;
  const stop = async (stopped: string, from: number, fullVerifierFailed = false): Promise<RefactorLoopResult> => {
    for (const skipped of batches.slice(from)) {
      await deps.appendTaskLedger({
        batch: skipped.id,
        goal: skipped.goal,
        outcome: 'not-started',
        attempts: 0,
        commit: null,
        reason: stopped.slice(0, 500),
      });
    }
    return { batches: outcomes, stopped, lastCheckpoint, lastFullVerified, fullVerifierFailed };
  };
  // The batch under way: TASK_LEDGER.jsonl says where an interrupt (Ctrl-C) left the plan.
  let position = 0;
  let attemptsStarted = 0;
  try {
    for (const [index, batch] of batches.entries()) {
      position = index;
      attemptsStarted = 0;
      if (signal?.aborted) throw new RatchetError('interrupted', 'Interrupted');
      // The first batch always runs; the limit is checked between batches only.
      const overrun = index > 0 ? runtimeExceeded(policy.maxRuntimeMs, deps.now().getTime() - startedAt) : null;
      if (overrun !== null) {
        const stopped = `${overrun}: stopped before ${batch.id} (${batches.length - index} of ${batches.length} batches not started)`;
        yield { type: 'warning', message: stopped };
        return await stop(stopped, index);
      }
      const cycle = index + 1;
      let feedback: string | null = null;
      let result: BatchOutcome | null = null;
      const formatting = isFormatBatch(batch);
      const maxAttempts = formatting ? 1 : policy.retryPerBatch + 1;
      for (let attempt = 1; attempt <= maxAttempts && result === null; attempt++) {
        if (signal?.aborted) throw new RatchetError('interrupted', 'Interrupted');
        attemptsStarted = attempt;
        yield { type: 'batch-start', batch: batch.id, index: cycle, total: batches.length, goal: batch.goal, attempt };
        const context: AttemptContext = { deps, policy, batch, cycle, attempt, feedback, lastCheckpoint, signal };
        const attempted = formatting ? yield* attemptFormat(context) : yield* attemptPatch(context);
        if (attempted.kind === 'retry') {
          feedback = attempted.feedback;
          continue;
        }
        if (attempted.kind === 'done') {
          result = {
            batch: batch.id,
            outcome: attempted.outcome,
            attempts: attempt,
            commit: null,
            reason: attempted.reason,
          };
          if (attempted.outcome === 'failed') feedback = attempted.reason;
          break;
        }
        const owner: StageName = formatting ? 'FORMAT' : 'PATCHER';
        const level = batch.verifier_level;
        const verifyStage: StageName = level === 'full' ? 'FULL_VERIFY' : 'FAST_VERIFY';
        yield { type: 'stage-start', stage: verifyStage, phase: 'BATCH', cycle, attempt };
        const verified = await deps.verifier.run(level, verifyStage, signal);
        yield* verifierEvents(verified, verifyStage);
        yield {
          type: 'stage-end',
          stage: verifyStage,
          phase: 'BATCH',
          cycle,
          attempt,
          outcome: verified.ok ? 'accepted' : 'rejected',
        };
        const rejected = { workspace, to: lastCheckpoint, owner, cycle, attempt };
        if (!verified.ok) {
          yield* rollBackAttempt(
            rejected,
            verifyStage,
            `${batch.id} failed the ${level} verifier`,
            `${level} verifier failed`,
          );
          feedback = `Your patch applied, but the ${level} verifier failed, so it was rolled back:\n${failureText(verified)}`;
          continue;
        }
        // What the verifier ran (the patched code, its tests) may have made a link, a repository or
        // a gitlink that the checkpoint would stage: never committed.
        const unsafe = await workspace.unsafeEntries();
        if (unsafe.length > 0) {
          const found = describeUnsafeEntries(unsafe);
          yield* rollBackAttempt(rejected, owner, `${batch.id} left ${found}`, 'unsafe entries');
          feedback = `After your patch was applied and verified, the work tree held what no checkpoint may: ${found}. It was rolled back. Make only regular files; never create symbolic links, nested git repositories or submodules (in code or in tests).`;
          continue;
        }
        const api = await deps.apiChanges();
        const breaking = api.removed.length > 0 || api.changed.length > 0;
        if (api.removed.length + api.changed.length + api.added.length > 0) {
          yield { type: 'contract-check', batch: batch.id, ...api, allowed: !breaking || policy.allowPublicApiChanges };
        }
        if (breaking && !policy.allowPublicApiChanges) {
          yield* rollBackAttempt(rejected, owner, `${batch.id} changed the public API`, 'public API changed');
          feedback = `Your patch changed the public API, which this run does not allow. Removed: ${api.removed.join(', ') || 'none'}. Changed: ${api.changed.join(', ') || 'none'}. Keep every export and signature.`;
          continue;
        }
        const subject = `checkpoint: ${batch.id} ${batch.goal}`.slice(0, 100);
        const commit = await workspace.checkpoint(subject, `${attempted.rationale}\n\nRatchet-Batch: ${batch.id}`);
        await deps.acceptApi();
        yield { type: 'checkpoint-create', stage: owner, phase: 'BATCH', commit, subject };
        yield { type: 'stage-end', stage: owner, phase: 'BATCH', cycle, attempt, outcome: 'accepted' };
        lastCheckpoint = commit;
        // A checkpoint that passed the full verifier is fully verified, whichever check ran it.
        if (level === 'full') {
          lastFullVerified = commit;
          yield { type: 'checkpoint-verify', commit, level: 'full' };
        }
        committed++;
        result = { batch: batch.id, outcome: 'committed', attempts: attempt, commit, reason: null };
        if (committed % policy.runFullVerifierEvery === 0) {
          yield { type: 'stage-start', stage: 'FULL_VERIFY', phase: 'BATCH', cycle, attempt: 1 };
          const full = await deps.verifier.run('full', 'FULL_VERIFY', signal);
          yield* verifierEvents(full, 'FULL_VERIFY');
          yield {
            type: 'stage-end',
            stage: 'FULL_VERIFY',
            phase: 'BATCH',
            cycle,
            attempt: 1,
            outcome: full.ok ? 'accepted' : 'rejected',
          };
          if (!full.ok) {
            await workspace.resetTo(lastFullVerified);
            yield {
              type: 'checkpoint-rollback',
              stage: 'FULL_VERIFY',
              to: lastFullVerified,
              reason: 'the full verifier failed',
            };
            const resetTo = `reset to ${lastFullVerified.slice(0, 8)}`;
            await markRolledBack(
              outcomes,
              lastFullVerified,
              `the full verifier failed after ${batch.id}; ${resetTo}`,
              batches,
              deps,
            );
            result.outcome = 'rolled-back';
            result.reason = `the full verifier failed after this batch; ${resetTo}`;
            outcomes.push(result);
            await deps.appendTaskLedger({
              batch: batch.id,
              goal: batch.goal,
              outcome: result.outcome,
              attempts: attempt,
              commit,
              reason: result.reason,
            });
            yield {
              type: 'batch-end',
              batch: batch.id,
              outcome: 'rolled-back',
              attempts: attempt,
              commit,
              reason: result.reason,
            };
            lastCheckpoint = lastFullVerified;
            return await stop(
              `the full verifier failed after ${batch.id}; reset to ${lastFullVerified.slice(0, 8)}`,
              index + 1,
              true,
            );
          }
          lastFullVerified = commit;
          yield { type: 'checkpoint-verify', commit, level: 'full' };
        }
      }
      const final: BatchOutcome = result ?? {
        batch: batch.id,
        outcome: 'failed',
        attempts: maxAttempts,
        commit: null,
        reason: feedback,
      };
      outcomes.push(final);
      await deps.appendTaskLedger({
        batch: batch.id,
        goal: batch.goal,
        outcome: final.outcome,
        attempts: final.attempts,
        commit: final.commit,
        reason: final.reason?.slice(0, 500) ?? null,
      });
      position = index + 1;
      yield {
        type: 'batch-end',
        batch: batch.id,
        outcome: final.outcome,
        attempts: final.attempts,
        commit: final.commit,
        ...(final.reason ? { reason: final.reason.slice(0, 500) } : {}),
      };
      if (final.outcome === 'failed') {
        await workspace.resetTo(lastCheckpoint);
        const why = formatting ? `${batch.id} (formatting) failed` : `${batch.id} failed after ${maxAttempts} attempts`;
        return await stop(why, index + 1);
      }
    }
  } catch (error) {
    // An interrupt (Ctrl-C) or an error that ends the run (a provider's, say): the batch under
    // way loses what it applied, and TASK_LEDGER.jsonl still has a line for every planned batch.
    const current = batches[position];
    if (current !== undefined) {
      const interrupted = isRatchetError(error, 'interrupted');
      const message = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
      try {
        await workspace.resetTo(lastCheckpoint);
        await deps.appendTaskLedger({
          batch: current.id,
          goal: current.goal,
          outcome: interrupted ? 'interrupted' : 'failed',
          attempts: attemptsStarted,
          commit: null,
          reason: `${interrupted ? 'interrupted' : `stopped by an error (${message.slice(0, 300)})`} before it was committed; its changes were dropped`,
        });
        await stop(interrupted ? 'interrupted' : `stopped by an error in ${current.id}`, position + 1);
      } catch {
        // The error that stopped the run is the one to report.
      }
    }
    throw error;
  }
  return { batches: outcomes, stopped: null, lastCheckpoint, lastFullVerified, fullVerifierFailed: false };
}
