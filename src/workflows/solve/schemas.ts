/**
 * The plans of seed 004 (its `execute/dataclasses.py`), camelCase as everywhere in Ratchet.
 * Models are asked for camelCase; seed-style snake_case keys (`task_summary`, `depends_on`) are
 * read too (`camelizeKeys`), and a list left out is an empty list: small models drop empty
 * fields, and neither reading is a guess. Ids and descriptions are required.
 */
import { z } from 'zod';

const id = () => z.string().trim().min(1);
const text = () => z.string().trim().min(1);
const list = () => z.array(z.string().trim().min(1)).default([]);

const PlanStepSchema = z.object({
  id: id(),
  description: text(),
  targetFiles: list(),
  targetSymbols: list(),
  dependsOn: list(),
});
export type PlanStep = z.infer<typeof PlanStepSchema>;

const MetaPlanPartSchema = z.object({
  id: id(),
  description: text(),
  affectedFiles: list(),
  dependsOn: list(),
});
export type MetaPlanPart = z.infer<typeof MetaPlanPartSchema>;

export const MetaPlanSchema = z.object({
  taskSummary: text(),
  parts: z.array(MetaPlanPartSchema).min(1, 'a plan needs at least one part'),
  rationale: z.string().default(''),
});
export type MetaPlan = z.infer<typeof MetaPlanSchema>;

export const PartPlanSchema = z.object({
  partId: id(),
  taskSummary: text(),
  steps: z.array(PlanStepSchema).min(1, 'a part plan needs at least one step'),
  rationale: z.string().default(''),
});
export type PartPlan = z.infer<typeof PartPlanSchema>;

/** The remaining steps as they should now be (an empty list: nothing left to do). */
export const PlanAdjustmentSchema = z.object({
  revisedSteps: z.array(PlanStepSchema),
  rationale: z.string().default(''),
  changesMade: list(),
});
export type PlanAdjustment = z.infer<typeof PlanAdjustmentSchema>;

const AffectedFileSchema = z.object({
  path: text(),
  /** `modify`, `create`, `test`, `read`... as the planner saw it. */
  role: z.string().default('modify'),
  changes: z.string().default(''),
});

/** What `ratchet plan` writes and `ratchet solve --plan` reads (seed 004, pipeline-and-modes 3.3). */
export const PlanArtifactSchema = z.object({
  taskSummary: text(),
  affectedFiles: z.array(AffectedFileSchema).min(1, 'a plan names at least one file'),
  executionOrder: list(),
  rationale: z.string().default(''),
});
export type PlanArtifact = z.infer<typeof PlanArtifactSchema>;

function camelize(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

/** A copy with every object key in camelCase (`task_summary` -> `taskSummary`); values untouched. */
export function camelizeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelizeKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [camelize(key), camelizeKeys(inner)]));
}
