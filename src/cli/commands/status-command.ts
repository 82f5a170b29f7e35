import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import pc from 'picocolors';
import { checkpointsOf, type Checkpoint } from '../../engine/checkpoints.js';
import { isClosed } from '../../engine/git-run.js';
import { readRunConfig } from '../../engine/run-config.js';
import { rollbacksOf } from '../../engine/rollbacks.js';
import { orphanedRuns } from '../../engine/run-lookup.js';
import { runDir } from '../../engine/run-paths.js';
import { Git } from '../../git/git.js';
import type { EventOf } from '../../core/events.js';
import type { WorkflowRegistry } from '../../engine/registry.js';
import type { RunSummary } from '../../ledger/types.js';
import {
  costText,
  runCostUsd,
  rollbackText,
  stageOutcomesText,
  statusText,
  tokensText,
} from '../../report/summary-text.js';
import type { CliSetup } from './cli-setup.js';
import { counted } from './history-command.js';
import { runCommand, type RunSession } from './run-session.js';

/** What `ratchet status` shows beside the run: read once, printed as JSON or text. */
interface StatusFacts {
  checkpoints: Checkpoint[];
  summary: RunSummary;
  orphaned: boolean;
  rollback: EventOf<'backup-restore'> | null;
  worktree: string | null;
  /** The lines of a workflow that shows its progress itself (`progress.kind === 'own'`). */
  own: ReadonlyArray<readonly [string, string]>;
}

/** `ratchet status [run]`: the state of a run, its progress as its workflow keeps it, and its cost. */
export function registerStatusCommand(program: Command, { loadRegistry }: CliSetup): void {
  runCommand(
    program,
    'status',
    'Show the state of a run: phase, cycle, current test (or committed batches), progress, cost',
    async (session) => {
      const { output, repoRoot, ledger, run } = session;
      const registry = await loadRegistry([run]);
      const checkpoints = await checkpointsOf(new Git(repoRoot), run, ledger);
      const facts: StatusFacts = {
        checkpoints,
        summary: await ledger.summary(run.id),
        orphaned: (await orphanedRuns(repoRoot, [run])).has(run.id),
        rollback: (await rollbacksOf(ledger, run.id)).at(-1) ?? null,
        // A run that is over has no worktree (accept, reject and rollback remove it), nor has one
        // whose directory is gone.
        worktree: !isClosed(run) && existsSync(run.worktree) ? run.worktree : null,
        own: await ownProgress(session, registry),
      };
      if (output.json) {
        const last = [...checkpoints].reverse().find((checkpoint) => checkpoint.state !== null);
        output.out(
          JSON.stringify({
            run,
            active: run.status === 'running' && !facts.orphaned,
            handoff: last?.state ?? null,
            checkpoint: last?.sha ?? null,
            // The run's worktree while it exists (`run.worktree` is where it was made).
            worktree: facts.worktree,
            // The latest `ratchet refactor rollback` (a `backup-restore` event), null when none.
            rollback: facts.rollback,
            // The cost the text says: null when it is unknown (see `runCostUsd`).
            summary: {
              ...facts.summary,
              modelCalls: {
                ...facts.summary.modelCalls,
                costUsd: runCostUsd(facts.summary.modelCalls, await costBasis(session)),
              },
            },
          }),
        );
        return;
      }
      printStatus(session, facts, registry);
      await printCosts(session, facts.summary);
    },
  );
}

function printStatus({ output, run }: RunSession, facts: StatusFacts, registry: WorkflowRegistry): void {
  const { checkpoints, orphaned, rollback, worktree } = facts;
  const { workflow, settings } = readRunConfig(registry, run);
  const state = [...checkpoints].reverse().find((checkpoint) => checkpoint.state !== null)?.state;
  const next =
    workflow.resume !== undefined
      ? `\`ratchet resume ${run.id}\` continues from the last checkpoint`
      : `\`ratchet accept ${run.id} --force\` keeps its checkpoints, \`ratchet reject ${run.id}\` drops it`;
  const shownStatus = orphaned
    ? pc.yellow('running, but its process is gone (killed?)')
    : run.status === 'rolled-back' && rollback
      ? pc.yellow(`rolled back at ${rollback.timestamp}`)
      : statusText(run.status);
  output.out(`${pc.bold('Run')} ${pc.cyan(run.id)} ${pc.dim(`(${run.workflow})`)}  ${shownStatus}`);
  if (orphaned) output.out(`  next      ${next}`);
  output.out(`  feature   ${run.feature}`);
  const gone = isClosed(run) ? `; ${statusText(run.status)}, the branch was removed` : '';
  output.out(
    `  branch    ${run.branch} (from ${run.baseBranch ?? 'detached HEAD'} @ ${run.baseCommit.slice(0, 8)}${gone})`,
  );
  if (worktree) output.out(`  worktree  ${worktree}`);
  output.out(`  provider  ${[run.provider ?? 'unknown', run.model].filter(Boolean).join(' ')}`);
  const { progress } = workflow;
  if (progress.kind === 'checkpoints') {
    const tip = checkpoints.at(-1);
    const done = checkpoints.filter((checkpoint) => checkpoint.subject.startsWith(progress.counted)).length;
    output.out(
      `  ${progress.noun.padEnd(9)} ${done} committed${tip ? ` (last ${tip.sha.slice(0, 8)} ${tip.subject})` : ''}`,
    );
    const backup = workflow.backups?.of(settings)?.directory;
    if (backup !== undefined) output.out(`  backup    ${backup}`);
    if (rollback) output.out(`  rollback  ${rollbackText(rollback)}`);
  } else if (progress.kind === 'own') {
    for (const [label, text] of facts.own) output.out(`  ${label.padEnd(9)} ${text}`);
  } else if (state) {
    output.out(`  phase     ${state.phase} -> ${state.nextPhase ?? '-'} (cycle ${state.cycleNumber})`);
    output.out(`  test      ${state.currentTest?.description ?? '(none)'}`);
    output.out(`  progress  ${state.completedTests.length} done, ${state.pendingTests.length} pending`);
    if (state.error) output.out(pc.red(`  error     ${state.error}`));
  } else {
    output.out('  phase     no checkpoint yet (starts at PLAN, cycle 1)');
  }
}

async function ownProgress(
  { repoRoot, ledger, run }: RunSession,
  registry: WorkflowRegistry,
): Promise<ReadonlyArray<readonly [string, string]>> {
  const { progress } = registry.of(run);
  return progress.kind === 'own' ? progress.lines({ id: run.id, runDir: runDir(repoRoot, run.id) }, ledger) : [];
}

/** What the cost is priced on: the run's model, else (only when that decides it) those its calls name. */
async function costBasis({ ledger, run }: RunSession): Promise<{ provider: string | null; models: string[] }> {
  const calls = (await ledger.summary(run.id)).modelCalls;
  const models = run.model
    ? [run.model]
    : calls.total > 0 && calls.failed === calls.total
      ? [...new Set((await ledger.modelCalls(run.id)).map((call) => call.model))]
      : [];
  return { provider: run.provider, models };
}

async function printCosts(session: RunSession, summary: RunSummary): Promise<void> {
  const { output, run } = session;
  const { stageAttempts: stages, modelCalls: calls } = summary;
  // A solve or plan run works in passes (its progress line says how many), never in stage attempts.
  if (stages.total > 0) output.out(`  stages    ${counted(stages.total, 'attempt')} (${stageOutcomesText(stages)})`);
  output.out(
    `  model     ${counted(calls.total, 'call')}${calls.failed > 0 ? ` (${calls.failed} failed)` : ''}, ${tokensText(calls, { in: 'in', out: 'out' })}, cost ${costText(calls, await costBasis(session))}`,
  );
  output.out(
    `  tests     ${counted(summary.verifications.total, 'verification run')} (${summary.verifications.failing} failing)`,
  );
  if (run.error) output.out(pc.red(`  last error ${run.error}`));
}
