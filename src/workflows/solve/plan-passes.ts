/**
 * The planning passes of seed 004: META_PLAN (the task into parts), PART_PLAN (a part into small
 * steps) and ADJUSTMENT (after every step, the remaining steps revised). Each answers with JSON
 * checked by `parse-plan.ts`; an answer that cannot be used is sent back with its problem, up to
 * `maxPlanAttempts` answers in all, each its own pass with a fresh context.
 */
import type { MetaPlan, MetaPlanPart, PartPlan, PlanAdjustment, PlanStep } from './schemas.js';
import { parseAdjustment, parseMetaPlan, parsePartPlan, type ParsedPlan } from './parse-plan.js';
import { askInPass, endPass, priorChanges, type PassRequest, type SolveContext, type Step } from './model-pass.js';
import type { StepRecord } from './progress.js';

const DEFAULT_PLAN_ATTEMPTS = 2;

export type PlanOutcome<T> = { ok: true; value: T } | { ok: false; reason: string };

async function* planPass<T>(
  context: SolveContext,
  request: Omit<PassRequest, 'attempt' | 'note'>,
  parse: (text: string) => ParsedPlan<T>,
): Step<PlanOutcome<T>> {
  const attempts = context.policy.maxPlanAttempts ?? DEFAULT_PLAN_ATTEMPTS;
  let problem: string | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const note =
      problem === undefined
        ? undefined
        : `Your previous answer could not be used:\n${problem}\nAnswer again with exactly one JSON object.`;
    const answer = yield* askInPass(context, { ...request, attempt, ...(note === undefined ? {} : { note }) });
    if (!answer.ok) {
      // The prompt does not fit: another answer would not change that.
      yield endPass(answer.pass, 'failed', answer.summary, answer.reason);
      return { ok: false, reason: answer.reason };
    }
    const parsed = parse(answer.text);
    if (parsed.ok) {
      const repaired = parsed.repairs.length > 0 ? `repaired: ${parsed.repairs.join(', ')}` : undefined;
      yield endPass(answer.pass, 'ok', answer.summary, repaired);
      return { ok: true, value: parsed.value };
    }
    problem = parsed.problem;
    yield endPass(answer.pass, 'failed', answer.summary, problem);
  }
  return { ok: false, reason: `${request.stage} gave no usable plan in ${attempts} answers: ${problem ?? ''}` };
}

function describePart(part: MetaPlanPart): string {
  const files = part.affectedFiles.length > 0 ? `\nFiles: ${part.affectedFiles.join(', ')}` : '';
  const after = part.dependsOn.length > 0 ? `\nAfter: ${part.dependsOn.join(', ')}` : '';
  return `${part.id}: ${part.description}${files}${after}`;
}

export function describeStep(step: PlanStep): string {
  const lines = [`${step.id}: ${step.description}`];
  if (step.targetFiles.length > 0) lines.push(`Files: ${step.targetFiles.join(', ')}`);
  if (step.targetSymbols.length > 0) lines.push(`Symbols: ${step.targetSymbols.join(', ')}`);
  if (step.dependsOn.length > 0) lines.push(`After: ${step.dependsOn.join(', ')}`);
  return lines.join('\n');
}

export function metaPlanPass(context: SolveContext): Step<PlanOutcome<MetaPlan>> {
  const { task } = context.policy;
  return planPass(
    context,
    {
      stage: 'META_PLAN',
      passType: 'meta_plan',
      partId: null,
      stepId: null,
      retrieval: { task, seeds: [], symbols: [] },
      vars: { task },
    },
    parseMetaPlan,
  );
}

export async function* partPlanPass(
  context: SolveContext,
  plan: MetaPlan,
  part: MetaPlanPart,
): Step<PlanOutcome<PartPlan>> {
  return yield* planPass(
    context,
    {
      stage: 'PART_PLAN',
      passType: 'part_plan',
      partId: part.id,
      stepId: null,
      retrieval: { task: part.description, seeds: part.affectedFiles, symbols: [] },
      vars: {
        task: context.policy.task,
        part: describePart(part),
        meta_plan: plan.parts.map(describePart).join('\n\n'),
        prior_changes: await priorChanges(context, 'PART_PLAN'),
      },
    },
    (text) => parsePartPlan(text, part.id),
  );
}

function describeRecord(record: StepRecord, step: PlanStep | undefined): string {
  const what = step === undefined ? record.stepId : `${record.stepId}: ${step.description}`;
  const outcome =
    record.outcome === 'done'
      ? `done (${record.files.join(', ') || 'no file changed'})`
      : `FAILED: ${record.error ?? ''}`;
  return `${what}\n  ${outcome}`;
}

/**
 * After a step of `plan`: what the remaining steps should be. `records` are the part's steps that
 * have run, the last one just now; `testResults` describes the tests after it.
 */
export async function* adjustmentPass(
  context: SolveContext,
  plan: PartPlan,
  records: readonly StepRecord[],
  testResults: string,
): Step<PlanOutcome<PlanAdjustment>> {
  const doneIds = new Set(records.map((record) => record.stepId));
  const done = plan.steps.filter((step) => doneIds.has(step.id));
  const remaining = plan.steps.filter((step) => !doneIds.has(step.id));
  const focus = remaining.length > 0 ? remaining : done.slice(-1);
  return yield* planPass(
    context,
    {
      stage: 'ADJUSTMENT',
      passType: 'adjustment',
      partId: plan.partId,
      stepId: records.at(-1)?.stepId ?? null,
      retrieval: {
        task: focus.map((step) => step.description).join('\n') || plan.taskSummary,
        seeds: focus.flatMap((step) => step.targetFiles),
        symbols: focus.flatMap((step) => step.targetSymbols),
      },
      vars: {
        task: context.policy.task,
        part: `${plan.partId}: ${plan.taskSummary}`,
        completed_steps: records
          .map((record) =>
            describeRecord(
              record,
              plan.steps.find((s) => s.id === record.stepId),
            ),
          )
          .join('\n'),
        remaining_steps: JSON.stringify(remaining, null, 2),
        test_results: testResults,
        prior_changes: await priorChanges(context, 'ADJUSTMENT'),
      },
    },
    (text) => parseAdjustment(text, done),
  );
}
