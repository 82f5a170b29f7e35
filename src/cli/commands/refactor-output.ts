import { describeChanges, type ChangeCount } from '../../git/change-count.js';
import { join } from 'node:path';
import pc from 'picocolors';
import type { IndexSummary } from '../../code/index/summary.js';
import type { BackupRestoreResult } from '../../engine/verbs/restore-backup.js';
import { failedTests, failingTestLines } from '../../verify/failing-tests.js';
import type { RunInfo } from '../../workflows/definition.js';
import type { VerifierRun } from '../../workflows/refactor/ports.js';
import type { PreparedRefactor } from '../../workflows/refactor/prepare.js';
import type { PlannedBatch } from '../../workflows/refactor/schemas.js';
import type { Output } from '../output.js';

export function printIndexSummary(output: Output, summary: IndexSummary, artifacts: string | null): void {
  const languages =
    Object.entries(summary.languages)
      .map(([language, count]) => `${language} ${count}`)
      .join(', ') || 'none';
  output.out(`${pc.bold('Indexed')} ${summary.root}${summary.git ? '' : pc.dim(' (not a git repository: no churn)')}`);
  output.out(
    `  files     ${summary.files} (${summary.sourceFiles} in a supported language: ${languages}; ${summary.testFiles} of them tests)`,
  );
  output.out(`  symbols   ${summary.symbols} (${summary.exportedSymbols} exported)`);
  output.out(`  graphs    ${summary.importEdges} import edges, ${summary.callEdges} call edges`);
  output.out(
    `  this run  ${summary.parsed} parsed, ${summary.reused} reused from the cache, ${summary.removed} removed, ${summary.durationMs} ms`,
  );
  if (summary.riskiest.length > 0) {
    output.out(
      '  riskiest  ' + summary.riskiest.map((entry) => `${entry.path} ${pc.dim(`(${entry.score})`)}`).join(', '),
    );
  }
  if (artifacts) output.out(`  artifacts ${artifacts}`);
}

export function printPlan(output: Output, plan: PlannedBatch[]): void {
  output.out(pc.bold(`Plan: ${plan.length} ${plan.length === 1 ? 'batch' : 'batches'}`));
  if (plan.length === 0)
    output.out(
      pc.dim(
        '  Nothing to do: the index found no dead code, over-long file or function, untested module or tangled structure in scope (and no formatter is configured). `ratchet index` shows the risk register.',
      ),
    );
  for (const batch of plan) {
    output.out(`  ${pc.cyan(batch.id)} ${batch.goal}`);
    output.out(
      pc.dim(
        `      scope ${batch.scope_globs.join(', ')} · budget ${batch.diff_budget_loc} lines · risk ${batch.risk_score} · ${batch.verifier_level} verifier`,
      ),
    );
    // Why it is planned: its finding, or what put it there without one.
    if (batch.notes) output.out(pc.dim(`      why: ${batch.notes}`));
  }
}

/** What `refactor verify` found, as JSON or lines (a red test run names what failed, as doctor does). */
export function printVerify(
  output: Output,
  verified: { result: VerifierRun; commit: string | null; sandboxed: boolean; warnings: readonly string[] },
  where: { target: string; logRoot: string; uncommitted: ChangeCount },
): void {
  const { result, commit, sandboxed, warnings } = verified;
  const { target, logRoot, uncommitted } = where;
  const environment = { node: process.versions.node, platform: `${process.platform}-${process.arch}` };
  if (output.json)
    output.out(
      JSON.stringify({
        ok: result.ok,
        environment,
        commit,
        sandboxed,
        warnings,
        results: result.results.map((entry) => ({
          command: entry.result.command,
          exitCode: entry.result.exitCode,
          durationMs: entry.result.durationMs,
          outputFile: entry.outputFile ? join(logRoot, entry.outputFile) : null,
          failingTests:
            'tests' in entry.result
              ? failedTests(entry.result).map((test) => ({
                  id: test.id,
                  name: test.name,
                  file: test.file,
                  kind: test.failureKind ?? null,
                  message: test.message ?? null,
                }))
              : [],
          collectionErrors: 'tests' in entry.result ? entry.result.collectionErrors : [],
        })),
      }),
    );
  else {
    output.out(
      pc.dim(
        commit === null
          ? `Verifying a copy of ${target} in a temporary directory${sandboxed ? ', sandboxed' : ''}.`
          : `Verifying HEAD ${commit.slice(0, 8)} in a temporary worktree${sandboxed ? ', sandboxed' : ''}, as a run starts from HEAD${uncommitted.changes > 0 ? `, without your ${describeChanges(uncommitted)}` : ''}.`,
      ),
    );
    for (const entry of result.results) {
      output.out(
        `${entry.result.ok ? pc.green('✓') : pc.red('✗')} ${entry.result.command} ${pc.dim(`exit ${String(entry.result.exitCode)}, ${entry.result.durationMs} ms, output ${entry.outputFile ? join(logRoot, entry.outputFile) : '-'}`)}`,
      );
      // A red test run names what failed, as doctor does.
      if (!entry.result.ok && 'tests' in entry.result)
        for (const line of failingTestLines(entry.result)) output.out(`    ${pc.red('✗')} ${line}`);
    }
    for (const warning of warnings) output.err(pc.yellow(`! ${warning}`));
    output.out(
      result.ok
        ? pc.green('Baseline is green.')
        : pc.red('Baseline is red: `ratchet refactor run` would refuse to start.'),
    );
  }
}

/** The confirm screen of `refactor run` (seed 002, 18): the plan, the baseline, what keeps the user safe. */
export function showConfirmScreen(output: Output, prepared: PreparedRefactor, run: RunInfo): void {
  if (output.json) {
    output.out(JSON.stringify({ type: 'plan', run: run.id, batches: prepared.plan, backup: prepared.backup }));
    return;
  }
  output.out('');
  printPlan(output, prepared.plan);
  output.out(pc.bold('\nBaseline (passing)'));
  for (const entry of prepared.baseline.results)
    output.out(`  ${pc.green('✓')} ${entry.result.command} ${pc.dim(`(${entry.result.durationMs} ms)`)}`);
  output.out(pc.bold('\nSafety'));
  output.out(`  branch   ${run.branch} (worktree ${run.worktree})`);
  if (prepared.backup)
    output.out(
      `  backup   ${prepared.backup.directory}${prepared.backup.bundle ? ' (git bundle + tar.gz snapshot)' : ' (tar.gz snapshot)'}`,
    );
  output.out(`  artifacts ${prepared.artifacts}`);
  if (run.repoRoot !== run.target)
    output.out(
      `  ${pc.yellow('not a git repository:')} working on a copy in ${run.repoRoot}; ${run.target} is never touched`,
    );
}

/** What `refactor rollback` restored, as JSON or a few sentences. */
export function printRestore(output: Output, restored: BackupRestoreResult): void {
  const { plan, restore, safety, undone, revived, where } = restored;
  const { run } = plan;
  if (output.json) {
    output.out(
      JSON.stringify({
        run: run.id,
        status: 'rolled-back',
        rolledBackAt: restore.timestamp,
        restored: plan.target,
        backup: plan.backup.directory,
        previousState: safety.directory,
        branch: restore.branch,
        alsoRolledBack: undone.ids,
        broughtBack: revived.ids,
      }),
    );
    return;
  }
  output.out(
    `Restored ${plan.target} from ${plan.backup.directory}${restore.branch ? ` (branch ${restore.branch} reset)` : ''}; run ${run.id} is now rolled back.\nThe state before the rollback is kept in ${safety.directory} (${safety.bundle ? 'git bundle + tar.gz snapshot' : 'tar.gz snapshot'}).` +
      (undone.ids.length > 0
        ? `\nThis also undid ${undone.text}, accepted after run ${run.id} started: now rolled back too.`
        : '') +
      (revived.ids.length > 0
        ? `\nThe backup held the changes of ${revived.text}, rolled back before (${revived.at}): they are back on ${where}, and ${revived.they} stay${revived.ids.length === 1 ? 's' : ''} marked rolled back.`
        : ''),
  );
}
