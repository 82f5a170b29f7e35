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
  generatedAt: string;
}

export async function gatherReportData(repoRoot: string, run: GitRun, ledger: Ledger, now: Date): Promise<ReportData> {
  const git = new Git(repoRoot);
  const checkpoints = await checkpointsOf(git, run);
  const withDiffs = [];
  for (const checkpoint of checkpoints) {
    withDiffs.push({ ...checkpoint, diff: await git.diff(`${checkpoint.sha}~1`, checkpoint.sha) });
  }
  return {
    run,
    summary: await ledger.summary(run.id),
    stages: await ledger.stages(run.id),
    verifications: await ledger.verifications(run.id),
    modelCalls: await ledger.modelCalls(run.id),
    checkpoints: withDiffs,
    generatedAt: now.toISOString(),
  };
}
