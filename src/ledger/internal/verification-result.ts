import { z } from 'zod';
import { RatchetError } from '../../core/errors.js';
import type { CheckResult, TestRunResult } from '../../core/verification.js';

/**
 * `verify-end` carries either a `TestRunResult` (test and baseline runs) or a `CheckResult`
 * (lint, typecheck). They are told apart by shape, checked with these schemas (only the fields
 * the ledger stores; others pass through).
 */
const TestCaseShape = z.looseObject({
  id: z.string(),
  status: z.enum(['passed', 'failed', 'skipped']),
  failureKind: z.enum(['assertion', 'error', 'collection', 'timeout', 'missing']).optional(),
  message: z.string().optional(),
});

const CommonShape = {
  command: z.string(),
  exitCode: z.number().int().nullable(),
  timedOut: z.boolean(),
  durationMs: z.number().nonnegative(),
};

const Count = z.number().int().nonnegative();

const TestRunResultShape = z.looseObject({
  ...CommonShape,
  tests: z.array(TestCaseShape),
  collectionErrors: z.array(z.string()),
  counts: z.object({
    passed: Count,
    failed: Count,
    skipped: Count,
    total: Count,
  }),
});

const CheckResultShape = z.looseObject({
  ...CommonShape,
  name: z.string(),
  ok: z.boolean(),
});

type ParsedTestRun = z.infer<typeof TestRunResultShape>;
type ParsedCheck = z.infer<typeof CheckResultShape>;

export type ParsedVerification = { type: 'test-run'; result: ParsedTestRun } | { type: 'check'; result: ParsedCheck };

/** Validates a `verify-end` result and says which kind it is. Throws `internal` when malformed. */
export function parseVerificationResult(result: TestRunResult | CheckResult): ParsedVerification {
  if (typeof result === 'object' && 'tests' in result) {
    const parsed = TestRunResultShape.safeParse(result);
    if (!parsed.success) throw malformed('TestRunResult', parsed.error);
    return { type: 'test-run', result: parsed.data };
  }
  const parsed = CheckResultShape.safeParse(result);
  if (!parsed.success) throw malformed('CheckResult', parsed.error);
  return { type: 'check', result: parsed.data };
}

function malformed(shape: string, error: z.ZodError): RatchetError {
  return new RatchetError('internal', `verify-end carries a malformed ${shape}: ${z.prettifyError(error)}`, {
    cause: error,
  });
}
