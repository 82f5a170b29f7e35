import { resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { RatchetError } from '../../core/errors.js';
import { Git } from '../../git/git.js';
import { checkpointsOf } from '../../engine/checkpoints.js';
import { resolveRun } from '../../engine/run-lookup.js';
import type { RunOutcome } from '../../engine/run-process.js';
import { startRun } from '../../engine/start-run.js';
import type { RunInfo } from '../../workflows/definition.js';
import { refactorWorkflow } from '../../workflows/refactor/definition.js';
import type { PreparedRefactor } from '../../workflows/refactor/prepare.js';
import {
  configFor,
  createCliOutput,
  globalOptions,
  openRepoLedger,
  startServices,
  type ProviderFlags,
} from '../context.js';
import { driveRun, interruptOnSignals } from '../drive-run.js';
import { EXIT } from '../exit-codes.js';
import type { Output } from '../output.js';
import { ask, confirm } from '../prompt.js';
import type { CliSetup } from './cli-setup.js';
import { addProviderOptions } from './provider-options.js';
import {
  registerIndexCommand,
  registerRefactorPlanCommand,
  registerRefactorRollbackCommand,
  registerRefactorVerifyCommand,
  targetOf,
} from './refactor-tools-commands.js';
import { showConfirmScreen } from './refactor-output.js';
import { acceptAndReport, rejectAndReport } from './run-decisions.js';
import { writeRunReport } from '../../report/write-report.js';

interface RefactorFlags extends ProviderFlags {
  goal?: string;
  allowDirty?: boolean;
  critic?: boolean;
  record?: string;
}

export function registerRefactorCommands(program: Command, cli: CliSetup): void {
  const refactor = program
    .command('refactor')
    .description(
      'Whole-repository refactoring in small verified batches: baseline, index, risk-ordered plan, patches, checkpoints, report',
    );

  addProviderOptions(
    refactor
      .command('run')
      .description(
        'Back up, verify the baseline, index, plan, confirm, then refactor batch by batch with a checkpoint per batch',
      )
      .argument(
        '[repo]',
        'the directory to refactor (default: --cwd or the current directory; need not be a git repository)',
      ),
  )
    .option('--goal <text>', 'what the refactoring should achieve (default: the index-driven clean-up plan)')
    .option('--critic', 'ask a critic to review every patch before it is applied')
    .option('--allow-dirty', 'start from HEAD even though the working tree has uncommitted changes')
    .action((repo: string | undefined, flags: RefactorFlags, command: Command) =>
      refactorRun(repo, flags, command, cli),
    );
  registerRefactorPlanCommand(refactor);
  registerRefactorVerifyCommand(refactor, cli);
  registerRefactorRollbackCommand(refactor, cli);
  registerIndexCommand(program);
}

/**
 * `ratchet refactor run` (seed 002, 18): the run through the engine, its plan confirmed on the
 * terminal (unless --yes), then the report and, on a terminal, the accept / reject question.
 */
async function refactorRun(
  repo: string | undefined,
  flags: RefactorFlags,
  command: Command,
  cli: CliSetup,
): Promise<void> {
  const output = createCliOutput(command);
  const target = await targetOf(repo, command);
  const yes = Boolean(globalOptions(command).yes);
  const config = await configFor(target, flags);
  if (!yes && !process.stdin.isTTY) {
    throw new RatchetError('usage', 'The plan must be confirmed, and there is no terminal to ask.', {
      hint: 'Pass --yes to proceed without asking.',
    });
  }
  const interrupt = interruptOnSignals();
  try {
    let shown: { prepared: PreparedRefactor; run: RunInfo } | undefined;
    const run = startRun(
      refactorWorkflow,
      {
        directory: target,
        request: { goal: flags.goal ?? null, useCritic: Boolean(flags.critic) },
        config,
        allowDirty: Boolean(flags.allowDirty),
        signal: interrupt.signal,
        ...(flags.record ? { recordPath: resolve(flags.record) } : {}),
        notice: (message) => {
          if (!output.json) output.out(pc.dim(message));
        },
        async confirm(prepared, info) {
          shown = { prepared, run: info };
          showConfirmScreen(output, prepared, info);
          return yes || (await confirm('\nProceed with these batches? [y/N] ', interrupt.signal));
        },
      },
      startServices(),
    );
    const { code, outcome } = await driveRun(run, output, interrupt.bySigint);
    if (outcome.status === 'cancelled') {
      output.out('Cancelled: nothing was changed (the worktree and branch were removed; the backup is kept).');
      if (interrupt.signal.aborted) cli.setExit(interrupt.bySigint() ? EXIT.sigint : EXIT.interrupted);
      return;
    }
    // Asked only on a terminal, without --yes, and not after Ctrl-C.
    const interactive =
      !yes && Boolean(process.stdin.isTTY) && Boolean(process.stderr.isTTY) && !interrupt.signal.aborted;
    if (shown !== undefined) await afterRun(output, shown, outcome, interactive, cli);
    cli.setExit(code);
  } finally {
    interrupt.dispose();
  }
}

/**
 * After a refactor run: its report, then what is on the branch now (an interrupt or error after
 * a checkpoint keeps it, a failing full verifier drops what came after the last fully verified
 * one) and what to do with it, asked on a terminal (seed 002, 7.2 and 18).
 */
async function afterRun(
  output: Output,
  shown: { prepared: PreparedRefactor; run: RunInfo },
  outcome: RunOutcome,
  interactive: boolean,
  cli: CliSetup,
): Promise<void> {
  const { prepared, run: info } = shown;
  await using ledger = await openRepoLedger(info.repoRoot);
  const run = await resolveRun(ledger, info.id);
  const written = await writeRunReport(info.repoRoot, run, ledger);
  const files = { markdown: written.markdownPath, html: written.htmlPath };
  if (output.json) {
    output.out(JSON.stringify({ type: 'report', run: info.id, status: outcome.status, ...files }));
    return;
  }
  const committed = (await checkpointsOf(new Git(info.repoRoot), run)).filter((checkpoint) =>
    checkpoint.subject.startsWith('checkpoint: batch-'),
  ).length;
  output.out(`\n${committed} of ${prepared.plan.length} batches committed on ${info.branch}. Report: ${files.html}`);
  const cwd = info.repoRoot === info.target ? '' : ` --cwd ${info.repoRoot}`;
  // A run that stopped early is accepted only as far as its checkpoints go (--force).
  const force = outcome.status === 'completed' ? '' : ' --force';
  const backup = prepared.backup?.directory ?? '-';
  let decided = false;
  try {
    const context = { ledger, registry: await cli.loadRegistry([{ workflow: refactorWorkflow.name }]) };
    decided = interactive && (await decideRun(output, { info, outcome, committed, backup }, context));
  } finally {
    // Kept for later, or the accept failed (dirty checkout, other branch): the commands still work.
    // With nothing committed there is nothing to accept: dropping the run is the next step.
    if (!decided)
      output.out(
        committed === 0
          ? `Nothing to accept: drop the run with ${pc.cyan(`ratchet reject ${info.id}${cwd}`)} (backup: ${backup}).`
          : `Accept with ${pc.cyan(`ratchet accept ${info.id}${force}${cwd}`)}, or drop it with ${pc.cyan(`ratchet reject ${info.id}${cwd}`)} (backup: ${backup}).`,
      );
  }
}

/**
 * After the report, the user accepts or rejects the run (or keeps it for later). `a` and `r` take
 * the paths of `ratchet accept` and `ratchet reject`; a run that did not complete is accepted (as
 * with --force) only after a second confirmation. Returns whether the run was decided.
 */
async function decideRun(
  output: Output,
  done: { info: RunInfo; outcome: RunOutcome; committed: number; backup: string },
  context: Parameters<typeof acceptAndReport>[3],
): Promise<boolean> {
  const { info, outcome, committed } = done;
  const question = `\nAccept the run (merge into ${info.baseBranch ?? 'HEAD'}), reject it (drop everything; the backup is kept), or keep it for later? [a/r/K] `;
  const answer = (await ask(question)).toLowerCase();
  const run = await resolveRun(context.ledger, info.id);
  if (answer === 'r' || answer === 'reject') {
    await rejectAndReport(output, info.repoRoot, run, context);
    output.out(`The backup is kept in ${done.backup}.`);
    return true;
  }
  if (answer !== 'a' && answer !== 'accept') return false;
  const force = outcome.status !== 'completed';
  if (force) {
    const why = outcome.error?.message ?? outcome.status;
    const checkpoints = `${committed} checkpoint${committed === 1 ? '' : 's'}`;
    const again = `The run did not complete: ${why}.\nAccept its ${checkpoints} as they are (as with --force)? [y/N] `;
    if (!(await confirm(again))) return false;
  }
  await acceptAndReport(output, info.repoRoot, run, context, { force });
  return true;
}
