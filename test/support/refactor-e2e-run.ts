/**
 * What the end-to-end `ratchet refactor run` tests on a scripted repository share on top of
 * refactor-harness.ts: one `--provider claude-code --yes --json` run with the user's repository
 * recorded before it, the scripted patches as patcher answers, and the checks of what every run
 * writes (backup, index artifacts).
 */
import { basename, join } from 'node:path';
import { expect } from 'vitest';
import { checkoutState, readLedger, type CheckoutState, type LedgerSnapshot, type ProjectRepo } from './e2e-run.js';
import { patchAnswer, type PatchAnswer, type RefactorBrain } from './refactor-brain.js';
import type { ScriptedPatches } from './refactor-fixtures.js';
import {
  backupDirectory,
  branches,
  eventsOf,
  isNonEmptyFile,
  ratchet,
  readRunOutput,
  treeHashes,
} from './refactor-harness.js';
import type { CliResult, JsonLine } from './run-cli.js';

/** The field `name` of an output line (undefined without a line). */
export function field(line: JsonLine | undefined, name: string): unknown {
  return line ? (line as Record<string, unknown>)[name] : undefined;
}

/** `batch attempt feedback` of every patcher call the brain answered, in order. */
export function patcherCalls(brain: RefactorBrain): string[] {
  return brain.callsOf('PATCHER').map((call) => `${call.batch ?? '?'} ${call.attempt ?? '?'} ${call.feedback ?? '-'}`);
}

/** `batch outcome attempts` of every `batch-end` line. */
export function batchEnds(lines: readonly JsonLine[]): string[] {
  return eventsOf(lines, 'batch-end').map(
    (line) => `${String(field(line, 'batch'))} ${String(field(line, 'outcome'))} ${String(field(line, 'attempts'))}`,
  );
}

/** The patcher's answer for the scripted patch `variant` of `batch` (throws when there is none). */
export function scriptedPatch(patches: ScriptedPatches, batch: string, variant: string): PatchAnswer {
  const entry = patches[batch]?.[variant];
  if (!entry) throw new Error(`no ${variant} patch for ${batch}`);
  return patchAnswer(entry.diff, entry.files, `${batch} ${variant}`);
}

/** One `ratchet refactor run --json`, the user's repository before it and what the run left. */
export interface RefactorRun {
  beforeState: CheckoutState;
  /** `treeHashes` of the repository without `.git` and `.ratchet`. */
  beforeTree: Record<string, string>;
  beforeBranches: string[];
  result: CliResult;
  lines: JsonLine[];
  runId: string;
  /** `ratchet/<runId>`. */
  branch: string;
  ledger: LedgerSnapshot;
}

/** The user's files as `treeHashes` compares them: all but `.git` and `.ratchet`. */
export function userTree(repo: ProjectRepo): Record<string, string> {
  return treeHashes(repo.dir, ['.git', '.ratchet']);
}

/** Runs `ratchet refactor run <repo> --provider claude-code --yes --json ...extra` on `repo`. */
export async function runRefactor(
  repo: ProjectRepo,
  env: Record<string, string>,
  extra: readonly string[] = [],
): Promise<RefactorRun> {
  const beforeState = checkoutState(repo);
  const beforeTree = userTree(repo);
  const beforeBranches = branches(repo);
  const result = await ratchet(
    ['refactor', 'run', repo.dir, '--provider', 'claude-code', '--yes', '--json', ...extra],
    repo.dir,
    env,
  );
  const { lines, runId } = readRunOutput(result);
  return {
    beforeState,
    beforeTree,
    beforeBranches,
    result,
    lines,
    runId,
    branch: `ratchet/${runId}`,
    ledger: await readLedger(repo.dir, runId),
  };
}

/** What the index writes under a run's `artifacts` folder. */
export const INDEX_ARTIFACTS = [
  'ARCHITECTURE_SNAPSHOT.md',
  'SYMBOL_REGISTRY.json',
  'DEPENDENCY_GRAPH.json',
  'CALL_GRAPH.json',
  'RISK_REGISTER.json',
  'TASK_LEDGER.jsonl',
  'CONTRACTS/public_api_snapshot.json',
];

/** Expects the run's backup (git bundle and tar.gz snapshot) and returns its directory. */
export function expectBackup(repo: ProjectRepo, runId: string): string {
  const backup = backupDirectory(repo, basename(repo.dir), runId);
  expect(isNonEmptyFile(join(backup, 'backup.bundle'))).toBe(true);
  expect(isNonEmptyFile(join(backup, 'snapshot.tar.gz'))).toBe(true);
  return backup;
}
