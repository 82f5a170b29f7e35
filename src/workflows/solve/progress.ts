/**
 * Where a solve run stands, kept with every checkpoint so that a killed run resumes from its
 * last one (plans are not made again, finished steps are not run again). Plain JSON, parsed with
 * zod where it is read back.
 */
import { z } from 'zod';
import { MetaPlanSchema, PartPlanSchema } from './schemas.js';

const StepRecordSchema = z.object({
  partId: z.string(),
  stepId: z.string(),
  outcome: z.enum(['done', 'failed']),
  attempts: z.number().int().nonnegative(),
  /** Why the step failed (its last attempt's failure), for the adjustment and the report. */
  error: z.string().nullable(),
  files: z.array(z.string()),
});
export type StepRecord = z.infer<typeof StepRecordSchema>;

export const SolveProgressSchema = z.object({
  mode: z.enum(['orchestrated', 'single-pass']),
  metaPlan: MetaPlanSchema.nullable(),
  /** The current plan of each part planned so far: the steps run, then the remaining ones as last adjusted. */
  partPlans: z.record(z.string(), PartPlanSchema),
  /** Parts whose plan could not be made (their steps never ran). */
  partsFailed: z.array(z.string()),
  steps: z.array(StepRecordSchema),
  /** The last pass number used: passes continue from it after a resume. */
  pass: z.number().int().nonnegative(),
});
export type SolveProgress = z.infer<typeof SolveProgressSchema>;

export function initialProgress(mode: SolveProgress['mode']): SolveProgress {
  return { mode, metaPlan: null, partPlans: {}, partsFailed: [], steps: [], pass: 0 };
}

/** `complete`: every planned step done; `failed`: none done (or no plan); else `partial`. */
export function solveStatus(progress: SolveProgress): 'complete' | 'partial' | 'failed' {
  const done = progress.steps.filter((step) => step.outcome === 'done').length;
  const failed = progress.steps.length - done;
  if (done === 0) return 'failed';
  return failed === 0 && progress.partsFailed.length === 0 && remainingSteps(progress) === 0 ? 'complete' : 'partial';
}

/** Steps planned but not yet run. */
function remainingSteps(progress: SolveProgress): number {
  let remaining = 0;
  for (const plan of Object.values(progress.partPlans)) {
    remaining += plan.steps.filter(
      (step) => !progress.steps.some((record) => record.partId === plan.partId && record.stepId === step.id),
    ).length;
  }
  return remaining;
}

/** The `solve-progress` numbers. */
export function progressCounts(progress: SolveProgress): {
  totalParts: number;
  totalSteps: number;
  partsCompleted: number;
  stepsCompleted: number;
  stepsFailed: number;
} {
  const parts = progress.metaPlan?.parts ?? [];
  const finished = (partId: string): boolean => {
    const plan = progress.partPlans[partId];
    if (progress.partsFailed.includes(partId)) return true;
    return (
      plan !== undefined &&
      plan.steps.every((step) => progress.steps.some((r) => r.partId === partId && r.stepId === step.id))
    );
  };
  return {
    totalParts: progress.mode === 'single-pass' ? 1 : parts.length,
    totalSteps:
      progress.mode === 'single-pass'
        ? 1
        : Object.values(progress.partPlans).reduce((sum, plan) => sum + plan.steps.length, 0),
    partsCompleted:
      progress.mode === 'single-pass' ? progress.steps.length : parts.filter((part) => finished(part.id)).length,
    stepsCompleted: progress.steps.filter((step) => step.outcome === 'done').length,
    stepsFailed: progress.steps.filter((step) => step.outcome === 'failed').length,
  };
}
