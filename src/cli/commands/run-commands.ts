import { relative } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { rollbacksOf } from '../../engine/rollbacks.js';
import { resolveRun } from '../../engine/run-lookup.js';
import { repairNotes } from '../../engine/verbs/repair-notes.js';
import { rollbackRun } from '../../engine/verbs/rollback-run.js';
import { writeRunReport } from '../../report/write-report.js';
import { renderSolveTrace } from '../../report/solve-trace.js';
import { createCliOutput, openExistingRepoLedger, repositoryRoot } from '../context.js';
import { gitLockRemoveLine } from '../reporters/plain-reporter.js';
import type { CliSetup } from './cli-setup.js';
import { acceptAndReport, rejectAndReport } from './run-decisions.js';
import { readRunCommand, runCommand } from './run-session.js';

/** `ratchet report [run]`: writes the run's Markdown and HTML reports and prints the Markdown. */
export function registerReportCommand(program: Command): void {
  readRunCommand<{ trace?: boolean }>(
    program,
    'report',
    'Write the run report (Markdown and self-contained HTML) under .ratchet/runs/<run-id>/',
    async ({ output, repoRoot, ledger, run }, _runId, flags) => {
      if (flags.trace) {
        const trace = await ledger.solveTrace(run.id);
        const modelCalls = await ledger.modelCalls(run.id);
        const verifications = await ledger.verifications(run.id);
        if (output.json) output.out(JSON.stringify({ run: run.id, trace, modelCalls, verifications }));
        else output.out(renderSolveTrace({ run, trace, modelCalls, verifications }));
        return;
      }
      const { markdown, markdownPath, htmlPath } = await writeRunReport(repoRoot, run, ledger);
      if (output.json) {
        const rollback = (await rollbacksOf(ledger, run.id)).at(-1) ?? null;
        // The test and check runs too, each with its task (of a tasks run), for a script to tell whose failed.
        const verifications = await ledger.verifications(run.id);
        output.out(
          JSON.stringify({
            run: run.id,
            status: run.status,
            rollback,
            markdown: markdownPath,
            html: htmlPath,
            verifications,
          }),
        );
        return;
      }
      output.out(markdown);
      output.out(
        pc.dim(`Written to ${relative(process.cwd(), markdownPath) || 'report.md'} and report.html beside it.`),
      );
    },
  ).option(
    '--trace',
    'print the chain of a plan or solve run instead: passes, attempts, validation, every model call with its full prompt and response',
  );
}

/** `ratchet rollback <target>`: moves a run back to one of its checkpoints, or to its start. */
export function registerRollbackCommand(program: Command, { loadRegistry }: CliSetup): void {
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
      const registry = await loadRegistry([run]);
      const result = await rollbackRun(repoRoot, run, target, { ledger, registry });
      if (output.json) {
        const { commit, state, removedLocks } = result;
        output.out(JSON.stringify({ run: run.id, commit, state, removedLocks }));
      } else {
        if (result.removedLocks.length > 0) output.out(pc.yellow(gitLockRemoveLine(result.removedLocks)));
        const where = `Run ${pc.cyan(run.id)} is back at ${pc.yellow(result.commit.slice(0, 8))}${result.state ? ` (${result.state.phase} -> ${result.state.nextPhase ?? '-'})` : ' (its start)'}.`;
        // A run its workflow does not resume (refactor): what is left of it is accepted or dropped.
        const then =
          registry.of(run).resume !== undefined
            ? `Continue with ${pc.cyan('ratchet resume')}.`
            : `Keep its batches up to here with ${pc.cyan(`ratchet accept ${run.id} --force`)}, or drop it with ${pc.cyan(`ratchet reject ${run.id}`)}.`;
        output.out(`${where} ${then}`);
      }
    });
}

/** `ratchet accept [run]` and `ratchet reject [run]`: the user's decision on a run. */
export function registerDecisionCommands(program: Command, { loadRegistry }: CliSetup): void {
  runCommand<{ force?: boolean }>(
    program,
    'accept',
    'Merge a finished run into the branch it started from (fast-forward when possible) and remove its worktree',
    async ({ output, repoRoot, ledger, run }, _runId, flags) => {
      const registry = await loadRegistry([run]);
      await acceptAndReport(output, repoRoot, run, { ledger, registry }, { force: Boolean(flags.force) });
    },
  ).option('--force', 'accept a run that did not complete (its checkpoints as they are)');

  runCommand(
    program,
    'reject',
    'Drop a run: remove its worktree and branch (your checkout was never touched)',
    async ({ output, repoRoot, ledger, run }) => {
      await rejectAndReport(output, repoRoot, run, { ledger, registry: await loadRegistry([run]) });
    },
  );
}

/** `ratchet repair-notes [run]`: rewrites a run's handoff notes from the ledger. */
export function registerRepairNotesCommand(program: Command, { loadRegistry, setExit }: CliSetup): void {
  runCommand(
    program,
    'repair-notes',
    'Repair the handoff notes (refs/notes/tdd-handoffs) of a run from the ledger',
    async ({ output, repoRoot, ledger, run }) => {
      const result = await repairNotes(repoRoot, run, { ledger, registry: await loadRegistry([run]) });
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
