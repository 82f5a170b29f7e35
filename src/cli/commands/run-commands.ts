import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { NOTES_REF } from '../../core/handoff.js';
import { checkpointsOf } from '../../engine/checkpoints.js';
import { rollbacksOf } from '../../engine/rollbacks.js';
import { orphanedRuns, resolveRun } from '../../engine/run-lookup.js';
import { repairNotes } from '../../engine/verbs/repair-notes.js';
import { rollbackRun } from '../../engine/verbs/rollback-run.js';
import { Git } from '../../git/git.js';
import {
  costText,
  runCostUsd,
  ledgerNotesText,
  rollbackText,
  stageOutcomesText,
  statusText,
  tokensText,
} from '../../report/summary-text.js';
import { writeRunReport } from '../../report/write-report.js';
import { createCliOutput, openExistingRepoLedger, repositoryRoot } from '../context.js';
import type { Output } from '../output.js';
import { acceptAndReport, rejectAndReport } from './run-decisions.js';
import type { CliSetup } from './cli-setup.js';
import { gitLockRemoveLine } from '../reporters/plain-reporter.js';
import { isClosed, type GitRun } from '../../engine/git-run.js';
import type { Ledger } from '../../ledger/types.js';

/** What the commands on one run share: output, repository, ledger (closed on dispose) and the run. */
interface RunSession extends AsyncDisposable {
  output: Output;
  repoRoot: string;
  ledger: Ledger;
  run: GitRun;
}

async function openRunSession(command: Command, runId: string | undefined): Promise<RunSession> {
  const output = createCliOutput(command);
  const repoRoot = await repositoryRoot(command, runId);
  const ledger = await openExistingRepoLedger(repoRoot, runId);
  try {
    const run = await resolveRun(ledger, runId);
    return { output, repoRoot, ledger, run, [Symbol.asyncDispose]: () => ledger.close() };
  } catch (error) {
    await ledger.close();
    throw error;
  }
}

/**
 * Adds a command on one run (`[run]`, default the latest run): `body` gets the run's session,
 * which is closed after it, the run id as given and the command's flags.
 */
function runCommand<Flags>(
  program: Command,
  name: string,
  description: string,
  body: (session: RunSession, runId: string | undefined, flags: Flags) => Promise<void>,
): Command {
  return program
    .command(name)
    .description(description)
    .argument('[run]', 'run id (default: the latest run)')
    .action(async (runId: string | undefined, flags: Flags, command: Command) => {
      await using session = await openRunSession(command, runId);
      await body(session, runId, flags);
    });
}

export function registerRunCommands(program: Command, cli: CliSetup): void {
  const { registry, setExit } = cli;
  runCommand(
    program,
    'status',
    'Show the state of a run: phase, cycle, current test (or committed batches), progress, cost',
    async ({ output, repoRoot, ledger, run }) => {
      const checkpoints = await checkpointsOf(new Git(repoRoot), run, ledger);
      const last = [...checkpoints].reverse().find((checkpoint) => checkpoint.state !== null);
      const summary = await ledger.summary(run.id);
      const orphaned = (await orphanedRuns(repoRoot, [run])).has(run.id);
      const rollback = (await rollbacksOf(ledger, run.id)).at(-1) ?? null;
      // A run that is over has no worktree (accept, reject and rollback remove it), nor has one
      // whose directory is gone.
      const worktree = !isClosed(run) && existsSync(run.worktree) ? run.worktree : null;
      const { stageAttempts: stages, modelCalls: calls } = summary;
      // The models for the cost: the run's, else (only when that decides it) those its calls name.
      const models = run.model
        ? [run.model]
        : calls.total > 0 && calls.failed === calls.total
          ? [...new Set((await ledger.modelCalls(run.id)).map((call) => call.model))]
          : [];
      const cost = { provider: run.provider, models };
      if (output.json) {
        output.out(
          JSON.stringify({
            run,
            active: run.status === 'running' && !orphaned,
            handoff: last?.state ?? null,
            checkpoint: last?.sha ?? null,
            // The run's worktree while it exists (`run.worktree` is where it was made).
            worktree,
            // The latest `ratchet refactor rollback` (a `backup-restore` event), null when none.
            rollback,
            // The cost the text says: null when it is unknown (see `runCostUsd`).
            summary: { ...summary, modelCalls: { ...calls, costUsd: runCostUsd(calls, cost) } },
          }),
        );
        return;
      }
      const state = last?.state;
      const next =
        run.workflow === 'tdd'
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
      if (run.workflow === 'refactor') {
        // Refactor checkpoints carry no handoff note: the batches are the progress.
        const tip = checkpoints.at(-1);
        const batches = checkpoints.filter((checkpoint) => checkpoint.subject.startsWith('checkpoint: batch-')).length;
        output.out(`  batches   ${batches} committed${tip ? ` (last ${tip.sha.slice(0, 8)} ${tip.subject})` : ''}`);
        const backup = (run.config as { backup?: { directory?: unknown } } | null)?.backup?.directory;
        if (typeof backup === 'string') output.out(`  backup    ${backup}`);
        if (rollback) output.out(`  rollback  ${rollbackText(rollback)}`);
      } else if (state) {
        output.out(`  phase     ${state.phase} -> ${state.nextPhase ?? '-'} (cycle ${state.cycleNumber})`);
        output.out(`  test      ${state.currentTest?.description ?? '(none)'}`);
        output.out(`  progress  ${state.completedTests.length} done, ${state.pendingTests.length} pending`);
        if (state.error) output.out(pc.red(`  error     ${state.error}`));
      } else {
        output.out('  phase     no checkpoint yet (starts at PLAN, cycle 1)');
      }
      output.out(`  stages    ${counted(stages.total, 'attempt')} (${stageOutcomesText(stages)})`);
      output.out(
        `  model     ${counted(calls.total, 'call')}${calls.failed > 0 ? ` (${calls.failed} failed)` : ''}, ${tokensText(calls, { in: 'in', out: 'out' })}, cost ${costText(calls, cost)}`,
      );
      output.out(
        `  tests     ${counted(summary.verifications.total, 'verification run')} (${summary.verifications.failing} failing)`,
      );
      if (run.error) output.out(pc.red(`  last error ${run.error}`));
    },
  );

  runCommand(
    program,
    'history',
    'List the runs of this repository and the checkpoints of one run (with their handoff notes)',
    async ({ output, repoRoot, ledger, run }, runId) => {
      const runs = await ledger.listRuns(20);
      const checkpoints = await checkpointsOf(new Git(repoRoot), run, ledger);
      const gone = await orphanedRuns(repoRoot, runs);
      const rollbacks = await rollbacksOf(ledger, run.id);
      if (output.json) {
        output.out(
          JSON.stringify({
            runs: runs.map((entry) => ({ ...entry, active: entry.status === 'running' && !gone.has(entry.id) })),
            run: run.id,
            checkpoints,
            // The run's `ratchet refactor rollback`s (`backup-restore` events), oldest first.
            rollbacks,
          }),
        );
        return;
      }
      if (!runId) {
        output.out(pc.bold('Runs'));
        const rows = runs.map((entry): Cell[] => [
          [entry.id, pc.cyan],
          gone.has(entry.id) ? ['running, but its process is gone (killed?)', pc.yellow] : [statusText(entry.status)],
          [entry.workflow],
          [entry.feature],
        ]);
        for (const line of alignedRows(rows)) output.out(`  ${line}`);
        output.out('');
      }
      for (const rollback of rollbacks) output.out(pc.yellow(`Run ${run.id} was ${rollbackText(rollback)}.`));
      if (run.workflow === 'refactor') {
        output.out(`${pc.bold('Checkpoints of')} ${pc.cyan(run.id)} ${pc.dim(`(branch ${run.branch})`)}`);
        for (const checkpoint of checkpoints)
          output.out(`  ${pc.yellow(checkpoint.sha.slice(0, 8))} ${checkpoint.subject}`);
        if (checkpoints.length === 0) output.out(pc.dim('  none yet'));
        return;
      }
      output.out(
        `${pc.bold('Handoffs of')} ${pc.cyan(run.id)} ${pc.dim(`(git notes --ref=${NOTES_REF.replace('refs/notes/', '')})`)}`,
      );
      const ledgerNote = ledgerNotesText(checkpoints, run.status);
      if (ledgerNote) output.out(pc.dim(`  ${ledgerNote}`));
      // The subject comes last: long subjects cannot push the other columns out of line.
      const rows = checkpoints.map((checkpoint): Cell[] => {
        const state = checkpoint.state;
        const error = state?.error ? pc.red(`  error: ${firstLine(state.error)}`) : '';
        return [
          [checkpoint.sha.slice(0, 8), pc.yellow],
          state ? [`${state.phase} -> ${state.nextPhase ?? '-'}`] : [checkpoint.noteError ?? 'no note', pc.dim],
          [state ? `cycle ${state.cycleNumber}` : ''],
          [state?.retryCount ? `retries ${state.retryCount}` : ''],
          [`${checkpoint.subject}${error}`],
        ];
      });
      for (const line of alignedRows(rows)) output.out(`  ${line}`);
      if (checkpoints.length === 0) output.out(pc.dim('  none yet'));
    },
  );

  runCommand(
    program,
    'report',
    'Write the run report (Markdown and self-contained HTML) under .ratchet/runs/<run-id>/',
    async ({ output, repoRoot, ledger, run }) => {
      const { markdown, markdownPath, htmlPath } = await writeRunReport(repoRoot, run, ledger);
      if (output.json) {
        const rollback = (await rollbacksOf(ledger, run.id)).at(-1) ?? null;
        output.out(
          JSON.stringify({ run: run.id, status: run.status, rollback, markdown: markdownPath, html: htmlPath }),
        );
        return;
      }
      output.out(markdown);
      output.out(
        pc.dim(`Written to ${relative(process.cwd(), markdownPath) || 'report.md'} and report.html beside it.`),
      );
    },
  );

  program
    .command('rollback')
    .description(
      'Move a run back to one of its checkpoints (a commit listed by `ratchet history`), or to its start with the run id; then `ratchet resume` (tdd) or `ratchet accept --force` (refactor)',
    )
    .argument('<target>', 'a checkpoint commit of the run, or the run id')
    .option('--run <id>', 'the run (default: the run whose id is <target>, else the latest run)')
    .action(async (target: string, flags: { run?: string }, command: Command) => {
      const output = createCliOutput(command);
      const repoRoot = await repositoryRoot(command);
      await using ledger = await openExistingRepoLedger(repoRoot, flags.run);
      const byId = await ledger.getRun(target);
      const run = byId ? await resolveRun(ledger, byId.id) : await resolveRun(ledger, flags.run);
      const result = await rollbackRun(repoRoot, run, target, { ledger, registry });
      if (output.json) {
        const { commit, state, removedLocks } = result;
        output.out(JSON.stringify({ run: run.id, commit, state, removedLocks }));
      } else {
        if (result.removedLocks.length > 0) output.out(pc.yellow(gitLockRemoveLine(result.removedLocks)));
        const where = `Run ${pc.cyan(run.id)} is back at ${pc.yellow(result.commit.slice(0, 8))}${result.state ? ` (${result.state.phase} -> ${result.state.nextPhase ?? '-'})` : ' (its start)'}.`;
        // A refactor run is not resumed: what is left of it is accepted or dropped.
        const then =
          run.workflow === 'tdd'
            ? `Continue with ${pc.cyan('ratchet resume')}.`
            : `Keep its batches up to here with ${pc.cyan(`ratchet accept ${run.id} --force`)}, or drop it with ${pc.cyan(`ratchet reject ${run.id}`)}.`;
        output.out(`${where} ${then}`);
      }
    });

  runCommand<{ force?: boolean }>(
    program,
    'accept',
    'Merge a finished run into the branch it started from (fast-forward when possible) and remove its worktree',
    async ({ output, repoRoot, ledger, run }, _runId, flags) => {
      await acceptAndReport(output, repoRoot, run, { ledger, registry }, { force: Boolean(flags.force) });
    },
  ).option('--force', 'accept a run that did not complete (its checkpoints as they are)');

  runCommand(
    program,
    'reject',
    'Drop a run: remove its worktree and branch (your checkout was never touched)',
    async ({ output, repoRoot, ledger, run }) => {
      await rejectAndReport(output, repoRoot, run, { ledger, registry });
    },
  );

  runCommand(
    program,
    'repair-notes',
    'Repair the handoff notes (refs/notes/tdd-handoffs) of a run from the ledger',
    async ({ output, repoRoot, ledger, run }) => {
      const result = await repairNotes(repoRoot, run, { ledger, registry });
      if (output.json) output.out(JSON.stringify({ run: run.id, ...result }));
      else {
        if (result.removedLocks.length > 0) output.out(pc.yellow(gitLockRemoveLine(result.removedLocks)));
        if (result.movedAside) output.out(`The notes ref was broken; moved it aside to ${result.movedAside}.`);
        output.out(`Rewrote ${result.rewritten} handoff note(s) of run ${pc.cyan(run.id)} from the ledger.`);
      }
      setExit(0);
    },
  );
}

/** `1 attempt`, `2 attempts`. */
function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** The first line of a message, marked when more follows (a table row stays one line). */
function firstLine(text: string): string {
  const [first = '', ...rest] = text.split('\n');
  return rest.some((line) => line.trim() !== '') ? `${first} ...` : first;
}

/** A table cell: its text and how to colour it (applied after the padding, so colours cannot skew it). */
type Cell = [text: string, style?: (text: string) => string];

/**
 * Rows of cells as lines whose columns line up: every column but the last is padded to its widest
 * cell, and a column that is empty in every row is left out.
 */
function alignedRows(rows: readonly Cell[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach(([text], index) => (widths[index] = Math.max(widths[index] ?? 0, text.length)));
  return rows.map((row) =>
    row
      .flatMap(([text, style], index) => {
        const last = index === row.length - 1;
        if (!last && widths[index] === 0) return [];
        const padded = last ? text : text.padEnd(widths[index] ?? 0);
        return [style ? style(padded) : padded];
      })
      .join('  '),
  );
}
