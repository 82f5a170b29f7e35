import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { EventOf } from '../core/events.js';
import { TASK_LEDGER_FILE } from '../code/index/artifacts.js';
import { artifactsDir } from '../engine/run-paths.js';
import { Git } from '../git/git.js';
import type { Ledger, RunRow, RunSummary, StageRow, VerificationRow, ModelCallRow } from '../ledger/types.js';
import { checkpointsOf, type Checkpoint } from '../engine/checkpoints.js';
import { workflowRegistry } from '../engine/shipped-registry.js';
import type { RunProgress } from '../workflows/definition.js';

/** One batch of a refactor run as the report shows it. */
interface BatchRow {
  batch: string;
  outcome: string;
  attempts: number;
  commit: string | null;
  reason?: string;
}

const TaskLedgerLine = z.object({
  batch: z.string(),
  outcome: z.string(),
  attempts: z.number(),
  commit: z.string().nullable(),
  reason: z.string().nullable().optional(),
});

/**
 * The run's TASK_LEDGER.jsonl, one row per batch in plan order, the last line of a batch winning
 * (a batch the full verifier dropped has a later `rolled-back` line). Null without the file.
 */
async function taskLedgerRows(repoRoot: string, runId: string): Promise<BatchRow[] | null> {
  let text: string;
  try {
    text = await readFile(join(artifactsDir(repoRoot, runId), TASK_LEDGER_FILE), 'utf8');
  } catch {
    return null;
  }
  const rows = new Map<string, BatchRow>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const parsed = TaskLedgerLine.safeParse(value);
    if (!parsed.success) continue;
    const { reason, ...row } = parsed.data;
    rows.set(row.batch, { ...row, ...(reason ? { reason } : {}) });
  }
  return rows.size > 0 ? [...rows.values()] : null;
}

/** Everything a run report shows, gathered once from the ledger and git. */
export interface ReportData {
  run: RunRow;
  summary: RunSummary;
  stages: StageRow[];
  verifications: VerificationRow[];
  modelCalls: ModelCallRow[];
  checkpoints: Array<Checkpoint & { diff: string }>;
  /** How the run's workflow shows its progress: the checkpoints' handoff notes, or the checkpoints by subject. */
  progress: RunProgress;
  /** Refactor runs: batch outcomes, admission checks, contract changes, backup and plan. */
  refactor: {
    /** Every planned batch with its final outcome (not-started and interrupted ones included). */
    batches: BatchRow[];
    patchChecks: Array<EventOf<'patch-check'>>;
    contracts: Array<EventOf<'contract-check'>>;
    backup: EventOf<'backup-create'> | null;
    plan: EventOf<'plan-create'> | null;
  };
  /** Each `ratchet refactor rollback` of the run (`backup-restore` events), oldest first. */
  rollbacks: Array<EventOf<'backup-restore'>>;
  generatedAt: string;
}

export async function gatherReportData(repoRoot: string, run: RunRow, ledger: Ledger, now: Date): Promise<ReportData> {
  const git = new Git(repoRoot);
  // A note git no longer has (`ratchet reject` removes them) comes from the ledger.
  const checkpoints = await checkpointsOf(git, run, ledger);
  const withDiffs = [];
  for (const checkpoint of checkpoints) {
    withDiffs.push({ ...checkpoint, diff: await git.diff(`${checkpoint.sha}~1`, checkpoint.sha) });
  }
  const events = await ledger.events(run.id, {
    types: ['batch-end', 'patch-check', 'contract-check', 'backup-create', 'plan-create', 'backup-restore'],
  });
  const refactor: ReportData['refactor'] = { batches: [], patchChecks: [], contracts: [], backup: null, plan: null };
  const rollbacks: ReportData['rollbacks'] = [];
  for (const event of events) {
    if (event.type === 'batch-end') refactor.batches.push(event);
    else if (event.type === 'patch-check') refactor.patchChecks.push(event);
    else if (event.type === 'contract-check') refactor.contracts.push(event);
    else if (event.type === 'backup-create') refactor.backup = event;
    else if (event.type === 'plan-create') refactor.plan = event;
    else if (event.type === 'backup-restore') rollbacks.push(event);
  }
  // The task ledger also has the batches that never ended (not started, interrupted).
  refactor.batches = (await taskLedgerRows(repoRoot, run.id)) ?? refactor.batches;
  return {
    refactor,
    run,
    // A team iteration's run has no workflow of the lifecycle, and no checkpoints in the ledger.
    progress: workflowRegistry().workflows.find((workflow) => workflow.name === run.workflow)?.progress ?? {
      kind: 'checkpoints',
      noun: 'checkpoints',
      counted: '',
    },
    summary: await ledger.summary(run.id),
    stages: await ledger.stages(run.id),
    verifications: await ledger.verifications(run.id),
    modelCalls: await ledger.modelCalls(run.id),
    checkpoints: withDiffs,
    rollbacks,
    generatedAt: now.toISOString(),
  };
}
