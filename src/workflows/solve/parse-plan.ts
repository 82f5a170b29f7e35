/**
 * From a model's answer to a checked plan (seed 004, `parse_plan_response` then
 * `validate_plan`): the JSON object (repaired where unambiguous), its fields against the schema,
 * then the dependency graph. Never throws: a problem is returned for the retry prompt.
 */
import type { z } from 'zod';
import { formatZodIssues } from '../../agent/tools/agent-tool.js';
import { extractJsonObject } from './json-repair.js';
import { adjustmentProblems, dependencyOrder, metaPlanProblems, partPlanProblems } from './plan-validation.js';
import {
  camelizeKeys,
  MetaPlanSchema,
  PartPlanSchema,
  PlanAdjustmentSchema,
  PlanArtifactSchema,
  type MetaPlan,
  type PartPlan,
  type PlanAdjustment,
  type PlanArtifact,
  type PlanStep,
} from './schemas.js';

export type ParsedPlan<T> = { ok: true; value: T; repairs: string[] } | { ok: false; problem: string };

function parseWith<T>(
  text: string,
  schema: z.ZodType<T>,
  problems: (value: T) => string[],
  what: string,
): ParsedPlan<T> {
  const extracted = extractJsonObject(text);
  if (!extracted.ok) return extracted;
  const parsed = schema.safeParse(camelizeKeys(extracted.value));
  if (!parsed.success) {
    return { ok: false, problem: `Your ${what} does not match the schema:\n${formatZodIssues(parsed.error.issues)}` };
  }
  const found = problems(parsed.data);
  if (found.length > 0) return { ok: false, problem: `Your ${what} is not valid:\n- ${found.join('\n- ')}` };
  return { ok: true, value: parsed.data, repairs: extracted.repairs };
}

export function parseMetaPlan(text: string): ParsedPlan<MetaPlan> {
  return parseWith(text, MetaPlanSchema, metaPlanProblems, 'meta-plan');
}

/** A part plan answers for `partId`: whatever id the model wrote, it is that part's plan. */
export function parsePartPlan(text: string, partId: string): ParsedPlan<PartPlan> {
  const parsed = parseWith(text, PartPlanSchema, partPlanProblems, 'part plan');
  if (!parsed.ok || parsed.value.partId === partId) return parsed;
  return {
    ok: true,
    value: { ...parsed.value, partId },
    repairs: [...parsed.repairs, `partId "${parsed.value.partId}" read as "${partId}"`],
  };
}

/** An adjustment of a part whose steps `done` have run. */
export function parseAdjustment(text: string, done: readonly PlanStep[]): ParsedPlan<PlanAdjustment> {
  return parseWith(text, PlanAdjustmentSchema, (value) => adjustmentProblems(value, done), 'adjustment');
}

/** A plan file (`ratchet solve --plan`): plain JSON, no repairs (a file is not a chat reply). */
export function parsePlanArtifact(text: string): ParsedPlan<PlanArtifact> {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    return {
      ok: false,
      problem: `The plan file is not JSON: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const parsed = PlanArtifactSchema.safeParse(camelizeKeys(value));
  if (!parsed.success)
    return {
      ok: false,
      problem: `The plan file does not match PlanArtifact:\n${formatZodIssues(parsed.error.issues)}`,
    };
  return { ok: true, value: parsed.data, repairs: [] };
}

/**
 * The user-facing plan of a meta-plan (what `ratchet plan` writes): each file the parts affect,
 * with the parts' descriptions as its changes, and the parts in dependency order.
 */
export function planArtifactFromMetaPlan(plan: MetaPlan): PlanArtifact {
  const ordered = dependencyOrder(plan.parts);
  const files = new Map<string, string[]>();
  for (const part of ordered) {
    for (const path of part.affectedFiles)
      files.set(path, [...(files.get(path) ?? []), `${part.id}: ${part.description}`]);
  }
  return {
    taskSummary: plan.taskSummary,
    affectedFiles: [...files].map(([path, changes]) => ({ path, role: 'modify', changes: changes.join('\n') })),
    executionOrder: ordered.map((part) => part.id),
    rationale: plan.rationale,
  };
}
