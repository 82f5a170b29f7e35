// `openLedger`, the ledger's types and `secretsFromEnv` (see `./ledger.js`), plus the redactor,
// the migrations and the database schema.
export * from './ledger.js';
export { createRedactor, redactValue, REDACTED, MIN_SECRET_LENGTH, type Redactor } from './redact.js';
export { MIGRATIONS } from './migrate.js';
export type { LedgerDatabase } from './schema.js';
