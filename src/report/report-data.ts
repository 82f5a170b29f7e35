import type { EventOf } from '../core/events.js';
import { Git } from '../git/git.js';
import type { Ledger, RunSummary, StageRow, VerificationRow, ModelCallRow } from '../ledger/types.js';
import type { GitRun } from '../engine/git-run.js';
import { checkpointsOf, type Checkpoint } from '../engine/run-control.js';

/** Everything a run report shows, gathered once from the ledger and git. */
export interface ReportData {
  run: GitRun;
  summary: RunSummary;
  stages: StageRow[];
  verifications: VerificationRow[];
  modelCalls: ModelCallRow[];
  checkpoints: Array<Checkpoint & { diff: string }>;
  /** Refactor runs: batch outcomes, admission checks, contract changes, backup and plan. */
  refactor: {
    batches: Array<EventOf<'batch-end'>>;
    patchChecks: Array<EventOf<'patch-check'>>;
    contracts: Array<EventOf<'contract-check'>>;
    backup: EventOf<'backup-create'> | null;
    plan: EventOf<'plan-create'> | null;
  };
  generatedAt: string;
}

export async function gatherReportData(repoRoot: string, run: GitRun, ledger: Ledger, now: Date): Promise<ReportData> {
  const git = new Git(repoRoot);
  const checkpoints = await checkpointsOf(git, run);
  const withDiffs = [];
  for (const checkpoint of checkpoints) {
    withDiffs.push({ ...checkpoint, diff: await git.diff(`${checkpoint.sha}~1`, checkpoint.sha) });
  }
  const events = await ledger.events(run.id, { types: ['batch-end', 'patch-check', 'contract-check', 'backup-create', 'plan-create'] });
  const refactor: ReportData['refactor'] = { batches: [], patchChecks: [], contracts: [], backup: null, plan: null };
  for (const event of events) {
    if (event.type === 'batch-end') refactor.batches.push(event);
    else if (event.type === 'patch-check') refactor.patchChecks.push(event);
    else if (event.type === 'contract-check') refactor.contracts.push(event);
    else if (event.type === 'backup-create') refactor.backup = event;
    else if (event.type === 'plan-create') refactor.plan = event;
  }
  return {
    refactor,
    run,
    summary: await ledger.summary(run.id),
    stages: await ledger.stages(run.id),
    verifications: await ledger.verifications(run.id),
    modelCalls: await ledger.modelCalls(run.id),
    checkpoints: withDiffs,
    generatedAt: now.toISOString(),
  };
}
