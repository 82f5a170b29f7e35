// `openLedger`, the ledger's types and `secretsFromEnv` (see `./ledger.js`), plus the redactor
// and the migrations.
export * from './ledger.js';
export { createRedactor, redactValue, REDACTED } from '../core/redact.js';
export { MIGRATIONS } from './migrate.js';
