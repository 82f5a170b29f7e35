import { z } from 'zod';

/**
 * The structured outputs of seed 002, section 15. Models answer through `--json-schema` (Claude
 * Code) or the StructuredOutput tool (our tool loop); both are validated again here.
 */
const PlannedBatchSchema = z.object({
  id: z.string(),
  goal: z.string().min(1),
  scope_globs: z.array(z.string()).min(1),
  allowed_operations: z.array(z.string()),
  diff_budget_loc: z.number().int().positive(),
  risk_score: z.number().int().min(0).max(100),
  verifier_level: z.enum(['fast', 'full']),
  notes: z.string().optional(),
});
export type PlannedBatch = z.infer<typeof PlannedBatchSchema>;

export const PlannerResponseSchema = z.object({ batches: z.array(PlannedBatchSchema) });
export type PlannerResponse = z.infer<typeof PlannerResponseSchema>;

export const PatchResponseSchema = z.object({
  status: z.enum(['ok', 'noop', 'blocked']),
  rationale: z.string(),
  risk_notes: z.array(z.string()),
  patch_unified_diff: z.string(),
  touched_files: z.array(z.string()),
  expected_verifier: z.array(z.string()),
  followups: z.array(z.string()).optional(),
});
export type PatchResponse = z.infer<typeof PatchResponseSchema>;

export const CriticResponseSchema = z.object({
  decision: z.enum(['accept', 'reject', 'shrink_scope', 'shrink_diff', 'noop']),
  reasons: z.array(z.string()),
  suggested_constraints: z.record(z.string(), z.unknown()).optional(),
});
