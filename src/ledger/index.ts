export { openLedger } from './ledger.js';
export { createRedactor, redactValue, secretsFromEnv, REDACTED, MIN_SECRET_LENGTH, type Redactor } from './redact.js';
export { MIGRATIONS } from './migrate.js';
export type { LedgerDatabase } from './schema.js';
export type {
  CheckpointRow,
  EventQuery,
  FailingTest,
  Ledger,
  LedgerOptions,
  ModelCallRow,
  NewRun,
  RunFilter,
  RunPatch,
  RunRow,
  RunStatus,
  RunSummary,
  StageAttemptOutcome,
  StageRow,
  ToolCallRow,
  VerificationKind,
  VerificationRow,
} from './types.js';
