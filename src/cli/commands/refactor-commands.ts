import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { buildIndex } from '../../code/index/build-index.js';
import { writeIndexArtifacts } from '../../code/index/artifacts.js';
import { summarizeIndex } from '../../code/index/summary.js';
import { RatchetError } from '../../core/errors.js';
import { createRedactor, secretsFromEnv } from '../../core/redact.js';
import { countChanges } from '../../git/change-count.js';
import { Git } from '../../git/git.js';
import { createProcessRunner } from '../../process/runner.js';
import { checkpointsOf } from '../../engine/checkpoints.js';
import { createIdGenerator } from '../../engine/effects.js';
import { excludeRatchetDir, homeFolderOf, indexCacheDir } from '../../engine/project-folders.js';
import { resolveRun } from '../../engine/run-lookup.js';
import type { RunOutcome } from '../../engine/run-process.js';
import { withScratchCheckout } from '../../engine/scratch-worktree.js';
import { startRun } from '../../engine/start-run.js';
import { restoreRunBackup } from '../../engine/verbs/restore-backup.js';
import type { RunInfo } from '../../workflows/definition.js';
import { refactorWorkflow } from '../../workflows/refactor/definition.js';
import { heuristicPlan } from '../../workflows/refactor/plan.js';
import { fileFacts, planBounds, verifierCommands } from '../../workflows/refactor/planning.js';
import type { PreparedRefactor } from '../../workflows/refactor/prepare.js';
import { loadRefactorSettings } from '../../workflows/refactor/settings.js';
import { createCommandVerifier } from '../../workflows/refactor/verifier.js';
import {
  configFor,
  createCliOutput,
  globalOptions,
  openExistingRepoLedger,
  openRepoLedger,
  repositoryRoot,
  startServices,
  type ProviderFlags,
} from '../context.js';
import { driveRun, interruptOnSignals } from '../drive-run.js';
import { EXIT } from '../exit-codes.js';
import type { Output } from '../output.js';
import { ask, confirm } from '../prompt.js';
import type { CliSetup } from './cli-setup.js';
import { addProviderOptions } from './provider-options.js';
import { printIndexSummary, printPlan, printRestore, printVerify, showConfirmScreen } from './refactor-output.js';
import { acceptAndReport, rejectAndReport } from './run-decisions.js';
import { writeRunReport } from '../../report/write-report.js';

interface RefactorFlags extends ProviderFlags {
  goal?: string;
  allowDirty?: boolean;
  critic?: boolean;
  record?: string;
}

/**
 * The directory a refactor command works on: the given one, --cwd, TDD_PROJECT_ROOT or the
 * current directory; inside a git repository, the repository's root (seed 002: `run <repo>`), so
 * that `verify`, `plan`, `index` and `run` all see the same project.
 */
async function targetOf(repo: string | undefined, command: Command): Promise<string> {
  const dir = resolve(repo ?? globalOptions(command).cwd ?? process.env.TDD_PROJECT_ROOT ?? process.cwd());
  if (!existsSync(dir)) throw new RatchetError('usage', `${dir} does not exist.`);
  if (!statSync(dir).isDirectory())
    throw new RatchetError('usage', `${dir} is a file, not a directory.`, {
      hint: "Name the project's directory (or run from it).",
    });
  return (await Git.isRepository(dir)) ? await new Git(dir).root() : dir;
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

  refactor
    .command('plan')
    .description(
      'Index the repository and print the heuristic plan; changes none of your files (the index cache goes to .ratchet/, kept out of git)',
    )
    .argument('[repo]', 'the directory (default: --cwd or the current directory)')
    .option('--goal <text>', 'what the refactoring should achieve')
    .action(async (repo: string | undefined, flags: { goal?: string }, command: Command) => {
      const output = createCliOutput(command);
      const target = await targetOf(repo, command);
      const config = await configFor(target);
      const settings = await loadRefactorSettings(target, config);
      const isGit = await Git.isRepository(target);
      const index = await buildIndex({
        root: target,
        cacheDir: await indexCacheDir(target, isGit, config.home),
        excludes: settings.scopeExcludes,
        git: isGit ? new Git(target) : false,
      });
      // As `run` plans: no batch for the files that define verification (no patch may change them).
      // Without a verifier yet (nothing detected, nothing configured) the plan is still shown.
      const commands = await verifierCommands(target, settings, config).catch(() => ({ fast: [], full: [] }));
      const plan = heuristicPlan(await fileFacts(index, target, config), {
        goal: flags.goal ?? null,
        bounds: planBounds(settings, index, commands, target),
      });
      if (output.json) output.out(JSON.stringify({ batches: plan }));
      else printPlan(output, plan);
    });

  refactor
    .command('verify')
    .description(
      "Run the baseline verification (fast and full verifier commands) as a run would: on HEAD, in a temporary worktree under $RATCHET_HOME, sandboxed; changes none of your files (the commands' output goes to .ratchet/verify/, kept out of git)",
    )
    .argument('[repo]', 'the directory (default: --cwd or the current directory)')
    .action(async (repo: string | undefined, _flags: unknown, command: Command) => {
      const output = createCliOutput(command);
      const target = await targetOf(repo, command);
      const config = await configFor(target);
      const settings = await loadRefactorSettings(target, config);
      // Refuses a project with nothing to verify before anything is set up.
      await verifierCommands(target, settings, config);
      // The command outputs: in the repository's (git-excluded) `.ratchet/verify`, or under
      // RATCHET_HOME for a directory that is not a repository (Ratchet never writes into one).
      const isGit = await Git.isRepository(target);
      if (isGit) await excludeRatchetDir(target);
      const logRoot = isGit ? target : homeFolderOf(config.home, 'verify', target);
      const outputDir = isGit ? join(target, '.ratchet', 'verify') : logRoot;
      const uncommitted = isGit ? await countChanges(new Git(target)) : { changes: 0, untracked: 0 };
      // The commands run where a run's would (a temporary worktree of HEAD, sandboxed): what they
      // write and what the dependencies run stay away from the checkout.
      const verified = await withScratchCheckout(
        { target, config, runner: createProcessRunner(), env: process.env },
        async (scratch) => {
          const commands = await verifierCommands(scratch.dir, settings, config);
          const verifier = createCommandVerifier({
            cwd: scratch.dir,
            repoRoot: logRoot,
            outputDir,
            ...commands,
            timeoutMs: config.test.timeoutMs,
            runner: scratch.runner,
            environment: scratch.environment,
            redact: createRedactor(secretsFromEnv(process.env)),
          });
          const result = await verifier.run('baseline', 'BASELINE');
          return { result, commit: scratch.commit, sandboxed: scratch.sandboxed };
        },
      );
      printVerify(output, verified, { target, logRoot, uncommitted });
      cli.setExit(verified.result.ok ? EXIT.ok : EXIT.gateFailed);
    });

  refactor
    .command('rollback')
    .description(
      "Restore the repository from a run's backup (git bundle + snapshot), as it was before the run: the branch the run started from and the files (other branches stay). Asks first (--yes skips it) and backs up the state it replaces",
    )
    .argument('<run-id>', 'the refactor run')
    .option(
      '--force',
      'also when the rollback undoes runs accepted after this one started (they are marked rolled back too), or brings back the changes of a run rolled back since',
    )
    .action(async (runId: string, flags: { force?: boolean }, command: Command) => {
      const output = createCliOutput(command);
      const target = await targetOf(undefined, command);
      const repoRoot = (await Git.isRepository(target))
        ? await new Git(target).root()
        : await repositoryRoot(command, runId);
      // A repository without a ledger has no run to restore: say so, and create nothing.
      await using ledger = await openExistingRepoLedger(repoRoot, runId);
      const run = await resolveRun(ledger, runId);
      const yes = Boolean(globalOptions(command).yes);
      const force = Boolean(flags.force);
      const context = { ledger, registry: cli.registry, runner: createProcessRunner(), ids: createIdGenerator() };
      const restored = await restoreRunBackup(repoRoot, run, context, {
        force,
        async confirm({ warning }) {
          if (yes) return true;
          if (!process.stdin.isTTY) {
            throw new RatchetError('usage', `${warning} Confirm with --yes.`, {
              hint: `ratchet refactor rollback ${run.id}${force ? ' --force' : ''} --yes (the current state is backed up first).`,
            });
          }
          output.err(warning);
          return confirm('Roll back? The current state is backed up first. [y/N] ');
        },
      });
      if (restored === null) {
        output.err('Nothing changed.');
        cli.setExit(EXIT.usage);
        return;
      }
      printRestore(output, restored);
    });

  program
    .command('index')
    .description(
      'Build or update the code index (.ratchet/index; for a directory outside git, under $RATCHET_HOME/index) and print its summary',
    )
    .argument('[repo]', 'the directory (default: --cwd or the current directory)')
    .option(
      '--artifacts <dir>',
      'also write the index artifacts (ARCHITECTURE_SNAPSHOT.md, SYMBOL_REGISTRY.json, ...) there',
    )
    .action(async (repo: string | undefined, flags: { artifacts?: string }, command: Command) => {
      const output = createCliOutput(command);
      const target = await targetOf(repo, command);
      const config = await configFor(target);
      const settings = await loadRefactorSettings(target, config);
      const isGit = await Git.isRepository(target);
      const index = await buildIndex({
        root: target,
        cacheDir: await indexCacheDir(target, isGit, config.home),
        excludes: settings.scopeExcludes,
        git: isGit ? new Git(target) : false,
      });
      if (flags.artifacts) await writeIndexArtifacts(index, resolve(flags.artifacts));
      const summary = summarizeIndex(index);
      if (output.json) output.out(JSON.stringify(summary));
      else printIndexSummary(output, summary, flags.artifacts ? resolve(flags.artifacts) : null);
    });
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
    const context = { ledger, registry: cli.registry };
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
