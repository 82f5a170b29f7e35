import { z } from 'zod';
import { PHASES } from './stages.js';

/** Seed 003's TestCase: one item of `test-list.md`. */
const TestCaseSchema = z.object({
  description: z.string().min(1),
  testFile: z.string().min(1),
  implFile: z.string().min(1),
});
export type TestCase = z.infer<typeof TestCaseSchema>;

const ErrorDetailsSchema = z.object({
  type: z.string(),
  message: z.string(),
});

/**
 * Seed 003's HandoffState, written as JSON (camelCase) in a git note under
 * `refs/notes/tdd-handoffs` on the commit of every accepted stage.
 */
export const HandoffStateSchema = z.object({
  phase: z.enum(PHASES),
  nextPhase: z.enum(PHASES).nullable(),
  cycleNumber: z.number().int().min(1),
  currentTest: TestCaseSchema.nullable(),
  completedTests: z.array(z.string()),
  pendingTests: z.array(z.string()),
  testResult: z.enum(['PASS', 'FAIL']).nullable(),
  error: z.string().nullable(),
  errorDetails: ErrorDetailsSchema.nullable(),
  retryCount: z.number().int().min(0),
  /** Ratchet extension: the run this note belongs to. */
  runId: z.string().optional(),
});
export type HandoffState = z.infer<typeof HandoffStateSchema>;

/** Seed 003's PLAN output. `null` means every item of the test list is done. */
export const PlanOutputSchema = z.object({ currentTest: TestCaseSchema.nullable() });
export type PlanOutput = z.infer<typeof PlanOutputSchema>;

export const NOTES_REF = 'refs/notes/tdd-handoffs';

/**
 * A handoff note's text as a state; `problem` says what is wrong with one that is there but does
 * not parse ("is not valid JSON", "does not match the handoff schema"). No text: neither.
 */
export function parseNote(text: string | null): { state: HandoffState | null; problem: string | null } {
  if (text === null) return { state: null, problem: null };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { state: null, problem: 'is not valid JSON' };
  }
  const parsed = HandoffStateSchema.safeParse(json);
  return parsed.success
    ? { state: parsed.data, problem: null }
    : { state: null, problem: 'does not match the handoff schema' };
}
