/**
 * One step of a part plan (seed 004, steps i-iii): IMPLEMENT answers with `<edit>` blocks, which
 * apply all or none; the project's tests then run (always, after any applied edit; lint and
 * typecheck too, for information); a failed attempt is undone and retried with its failure, up
 * to `max_retries_per_step` retries. The edits may not change how the tests run or report (the
 * files `lockVerification` names), or a step could pass by weakening the gate itself.
 */
import type { TestRunResult } from '../../core/verification.js';
import { parseSearchReplace } from '../../edit/search-replace.js';
import { verificationGate, verifyGate } from '../../verify/gates.js';
import { diffVerification, type VerificationLock } from '../../verify/verification-files.js';
import { askInPass, endPass, priorChanges, type SolveContext, type Step } from './model-pass.js';
import { describeStep } from './plan-passes.js';
import type { StepRecord } from './progress.js';
import type { PartPlan, PlanStep } from './schemas.js';

/** A step's record, and what its last test run said (for the adjustment). */
export interface StepOutcome {
  record: StepRecord;
  testSummary: string;
}

/** Test ids that failed, and files that did not collect, for the ledger. */
function failingTests(result: TestRunResult): string[] {
  return [
    ...result.tests.filter((test) => test.status === 'failed').map((test) => test.id),
    ...result.collectionErrors.map((error) => error.split('\n')[0] ?? error),
  ];
}

function describePlan(plan: PartPlan | null, step: PlanStep): string {
  if (plan === null) return '(a single step)';
  return plan.steps
    .map((other) => `${other.id === step.id ? '-> ' : '   '}${other.id}: ${other.description}`)
    .join('\n');
}

export async function* implementStep(
  context: SolveContext,
  step: PlanStep,
  plan: PartPlan | null,
  lock: VerificationLock,
): Step<StepOutcome> {
  const { deps, policy, signal } = context;
  const partId = plan?.partId ?? null;
  const attempts = 1 + policy.maxRetriesPerStep;
  let failure = '';
  let testSummary = 'No test ran: no edit was applied.';
  let attempt = 1;
  for (; attempt <= attempts; attempt++) {
    const answer = yield* askInPass(context, {
      stage: 'IMPLEMENT',
      passType: 'implement',
      partId,
      stepId: step.id,
      attempt,
      retrieval: { task: step.description, seeds: step.targetFiles, symbols: step.targetSymbols },
      vars: {
        task: policy.task,
        step: describeStep(step),
        plan: describePlan(plan, step),
        prior_changes: await priorChanges(context, 'IMPLEMENT'),
        failure,
      },
    });
    const attemptEnd = {
      type: 'solve-attempt-end',
      pass: answer.pass,
      partId,
      stepId: step.id,
      attempt,
      promptTokens: answer.ok ? answer.response.usage.inputTokens : null,
      completionTokens: answer.ok ? answer.response.usage.outputTokens : null,
      latencyMs: answer.ok ? answer.response.latencyMs : 0,
    } as const;
    if (!answer.ok) {
      failure = answer.reason;
      yield { ...attemptEnd, patchApplied: false, files: [], error: failure, validation: null };
      yield endPass(answer.pass, 'failed', answer.summary, failure);
      break; // the same prompt would not fit the next time either
    }
    const parsed = parseSearchReplace(answer.text);
    const applied =
      parsed.errors.length > 0 || parsed.blocks.length === 0
        ? {
            ok: false as const,
            failures:
              parsed.errors.length > 0
                ? parsed.errors
                : [
                    'Your answer has no <edit file="..."><search>...</search><replacement>...</replacement></edit> block.',
                  ],
          }
        : await deps.workspace.applyEdits(parsed.blocks);
    if (!applied.ok) {
      failure = `Attempt ${attempt}: none of your edits was applied.\n${applied.failures.join('\n')}`;
      yield { ...attemptEnd, patchApplied: false, files: [], error: failure, validation: null };
      yield endPass(answer.pass, 'failed', answer.summary, failure);
      continue;
    }
    const guarded = verificationGate(diffVerification(lock, await deps.verifier.lockVerification()));
    if (guarded !== undefined && !guarded.accepted) {
      await deps.workspace.discardChanges();
      failure = `Attempt ${attempt}: your edits were undone.\n${guarded.feedback}`;
      yield { ...attemptEnd, patchApplied: true, files: applied.files, error: failure, validation: null };
      yield endPass(answer.pass, 'failed', answer.summary, failure);
      continue;
    }
    const tests = await deps.verifier.runTests('IMPLEMENT', signal);
    yield { type: 'verify-end', stage: 'IMPLEMENT', kind: 'test', result: tests.result, outputFile: tests.outputFile };
    const checks = await deps.verifier.runChecks('IMPLEMENT', signal);
    for (const check of checks) {
      yield {
        type: 'verify-end',
        stage: 'IMPLEMENT',
        kind: check.kind,
        result: check.result,
        outputFile: check.outputFile,
      };
    }
    const gate = verifyGate(tests.result, []);
    const checkOk = (kind: 'lint' | 'typecheck'): boolean | null =>
      checks.find((check) => check.kind === kind)?.result.ok ?? null;
    const validation = {
      success: gate.accepted,
      failingTests: failingTests(tests.result),
      lintOk: checkOk('lint'),
      typecheckOk: checkOk('typecheck'),
    };
    testSummary = gate.accepted ? gate.summary : gate.feedback;
    if (gate.accepted) {
      yield { ...attemptEnd, patchApplied: true, files: applied.files, error: null, validation };
      yield endPass(answer.pass, 'ok', answer.summary);
      return {
        record: {
          partId: partId ?? '',
          stepId: step.id,
          outcome: 'done',
          attempts: attempt,
          error: null,
          files: applied.files,
        },
        testSummary,
      };
    }
    await deps.workspace.discardChanges();
    failure = `Attempt ${attempt}: your edits applied, but the tests fail, so they were undone.\n${gate.feedback}`;
    yield { ...attemptEnd, patchApplied: true, files: applied.files, error: failure, validation };
    yield endPass(answer.pass, 'failed', answer.summary, failure);
  }
  return {
    record: {
      partId: partId ?? '',
      stepId: step.id,
      outcome: 'failed',
      attempts: Math.min(attempt, attempts),
      error: failure,
      files: [],
    },
    testSummary,
  };
}
