import { join } from 'node:path';

/** Where a run keeps its files (DESIGN.md, Files). */
function ratchetDir(repoRoot: string): string {
  return join(repoRoot, '.ratchet');
}
export function ledgerPath(repoRoot: string): string {
  return join(ratchetDir(repoRoot), 'ledger.db');
}
export function runDir(repoRoot: string, runId: string): string {
  return join(ratchetDir(repoRoot), 'runs', runId);
}
/** The refactor run's artifacts (the index's, and `TASK_LEDGER.jsonl`). */
export function artifactsDir(repoRoot: string, runId: string): string {
  return join(runDir(repoRoot, runId), 'artifacts');
}
export function worktreePath(home: string, runId: string): string {
  return join(home, 'worktrees', runId);
}
export function runBranch(runId: string): string {
  return `ratchet/${runId}`;
}
