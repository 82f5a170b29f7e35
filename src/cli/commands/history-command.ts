import type { Command } from 'commander';
import pc from 'picocolors';
import { NOTES_REF } from '../../core/handoff.js';
import { checkpointsOf, type Checkpoint } from '../../engine/checkpoints.js';
import { rollbacksOf } from '../../engine/rollbacks.js';
import { orphanedRuns } from '../../engine/run-lookup.js';
import { Git } from '../../git/git.js';
import type { RunRow } from '../../ledger/types.js';
import { ledgerNotesText, rollbackText, statusText } from '../../report/summary-text.js';
import type { Output } from '../output.js';
import type { CliSetup } from './cli-setup.js';
import { readRunCommand } from './run-session.js';

/** `ratchet history [run]`: the repository's runs (without a run id), then the checkpoints of one run. */
export function registerHistoryCommand(program: Command, { loadRegistry }: CliSetup): void {
  readRunCommand(
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
      if (!runId) printRuns(output, runs, gone);
      for (const rollback of rollbacks) output.out(pc.yellow(`Run ${run.id} was ${rollbackText(rollback)}.`));
      // A team iteration's run is no run of a registered workflow: its checkpoints are listed by subject.
      const known = (await loadRegistry([run])).workflows.find((workflow) => workflow.name === run.workflow);
      if (known?.progress.kind !== 'handoff-notes') {
        output.out(
          `${pc.bold('Checkpoints of')} ${pc.cyan(run.id)} ${pc.dim(run.branch === null ? '(it made no branch)' : `(branch ${run.branch})`)}`,
        );
        for (const checkpoint of checkpoints)
          output.out(`  ${pc.yellow(checkpoint.sha.slice(0, 8))} ${checkpoint.subject}`);
        if (checkpoints.length === 0) output.out(pc.dim('  none yet'));
        return;
      }
      printHandoffs(output, run, checkpoints);
    },
  );
}

function printRuns(output: Output, runs: readonly RunRow[], gone: ReadonlySet<string>): void {
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

function printHandoffs(output: Output, run: Pick<RunRow, 'id' | 'status'>, checkpoints: readonly Checkpoint[]): void {
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
}

/** `1 attempt`, `2 attempts`. */
export function counted(count: number, noun: string): string {
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
