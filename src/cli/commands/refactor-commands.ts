import { existsSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, join, relative, resolve, sep } from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import pc from 'picocolors';
import { buildIndex } from '../../code/index/build-index.js';
import { writeIndexArtifacts } from '../../code/index/artifacts.js';
import { summarizeIndex, type IndexSummary } from '../../code/index/summary.js';
import { RatchetError } from '../../core/errors.js';
import { Git } from '../../git/git.js';
import { checkClaudeAuth, checkClaudeCode } from '../../agent/claude-code-runtime.js';
import {
  discardUnusedCopy,
  executeRefactor,
  fileFacts,
  prepareRefactor,
  refactorHome,
  verifierCommands,
  planBounds,
  type PreparedRefactor,
  type RefactorOutcome,
} from '../../engine/refactor/refactor-run.js';
import { loadRefactorSettings } from '../../engine/refactor/refactor-config.js';
import { createBackup, restoreBackup, type Backup } from '../../engine/refactor/backup.js';
import { createCommandVerifier } from '../../engine/refactor/verifier.js';
import { rollbackChain } from '../../engine/refactor/rollback-chain.js';
import { checkpointsOf, recordRollback, rejectRun, resolveRun, rollbacksOf } from '../../engine/run-control.js';
import { isClosed, type GitRun } from '../../engine/git-run.js';
import type { Ledger } from '../../ledger/types.js';
import { heuristicPlan } from '../../workflows/refactor/plan.js';
import type { PlannedBatch } from '../../workflows/refactor/schemas.js';
import { writeRunReport } from '../../report/write-report.js';
import { createProcessRunner } from '../../process/runner.js';
import { createRedactor, secretsFromEnv } from '../../core/redact.js';
import { createIdGenerator } from '../../engine/effects.js';
import { claudeCheckRunner } from '../../engine/tool-sandbox.js';
import {
  configFor,
  createCliOutput,
  engineServices,
  globalOptions,
  openRepoLedger,
  repositoryRoot,
  type ProviderFlags,
} from '../context.js';
import { interruptOnSignals } from '../drive-run.js';
import { exitCodeFor, EXIT } from '../exit-codes.js';
import type { Output } from '../output.js';
import { createJsonReporter, createPlainReporter } from '../reporters/plain-reporter.js';
import { acceptAndReport, rejectAndReport } from './run-decisions.js';
import { failedTests, failingTestLines } from './failing-tests.js';
import { withScratchCheckout } from '../../engine/scratch-worktree.js';
import { addProviderOptions } from './tdd-command.js';

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

/**
 * Where `refactor plan` and `index` keep the index cache: `.ratchet/index` of a git target, kept
 * out of git through `.git/info/exclude` like every `.ratchet/` folder, so the checkout stays
 * clean; for any other directory, which Ratchet never writes into, a folder of its own under
 * `$RATCHET_HOME/index/` (named after the directory's path), so the next index is incremental.
 */
async function indexCacheDir(target: string, isGit: boolean, home: string): Promise<string> {
  if (!isGit) return homeFolderOf(home, 'index', target);
  await excludeRatchetDir(target);
  return join(target, '.ratchet', 'index');
}

/**
 * A folder of its own under `$RATCHET_HOME/<kind>/` for a directory that is not a repository,
 * named after its path (`<name>-<sha256 prefix>`): two directories with the same name, such as
 * `~/a/app` and `~/b/app`, never share (or overwrite) each other's files.
 */
function homeFolderOf(home: string, kind: string, target: string): string {
  return join(home, kind, `${basename(target)}-${createHash('sha256').update(target).digest('hex').slice(0, 12)}`);
}

/** Adds `<target>/.ratchet/` to the repository's `.git/info/exclude`. */
async function excludeRatchetDir(target: string): Promise<void> {
  const git = new Git(target);
  const inRepo = relative(await git.root(), target)
    .split(sep)
    .join('/');
  await git.addInfoExclude([inRepo ? `/${inRepo}/.ratchet/` : '/.ratchet/']);
}

function printIndexSummary(output: Output, summary: IndexSummary, artifacts: string | null): void {
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

function printPlan(output: Output, plan: PlannedBatch[]): void {
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
        `      scope ${batch.scope_globs.join(', ')} · budget ${batch.diff_budget_loc} lines · risk ${batch.risk_score} · ${batch.verifier_level} verifier${batch.notes ? ` · ${batch.notes}` : ''}`,
      ),
    );
  }
}

/**
 * Asks on the terminal (stderr); Ctrl-C or Ctrl-D at the prompt, or `stop` (the run's interrupt:
 * a SIGINT or SIGTERM sent to the process), answers with the default ('').
 */
async function ask(question: string, stop?: AbortSignal): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const controller = new AbortController();
  rl.on('SIGINT', () => controller.abort());
  rl.on('close', () => controller.abort());
  const signal = stop ? AbortSignal.any([controller.signal, stop]) : controller.signal;
  try {
    return (await rl.question(question, { signal })).trim();
  } catch (error) {
    if (!signal.aborted) throw error;
    process.stderr.write('\n');
    return '';
  } finally {
    rl.close();
  }
}

async function confirm(question: string, stop?: AbortSignal): Promise<boolean> {
  return /^y(es)?$/i.test(await ask(question, stop));
}

/**
 * Seed 002, 7.2 and 18: after the report, the user accepts or rejects the run (or keeps it for
 * later). `a` and `r` take the paths of `ratchet accept` and `ratchet reject`; a run that did not
 * complete is accepted (as with --force) only after a second confirmation. Returns whether the
 * run was decided.
 */
async function decideRun(
  output: Output,
  prepared: PreparedRefactor,
  outcome: RefactorOutcome,
  committed: number,
  ledger: Ledger,
): Promise<boolean> {
  const into = prepared.run.baseBranch ?? 'HEAD';
  const answer = (
    await ask(
      `\nAccept the run (merge into ${into}), reject it (drop everything; the backup is kept), or keep it for later? [a/r/K] `,
    )
  ).toLowerCase();
  if (answer === 'r' || answer === 'reject') {
    await rejectAndReport(output, prepared.repoRoot, await resolveRun(ledger, prepared.run.id), ledger);
    output.out(`The backup is kept in ${prepared.backup.directory}.`);
    return true;
  }
  if (answer !== 'a' && answer !== 'accept') return false;
  const force = outcome.status !== 'completed';
  if (force) {
    const why = outcome.error?.message ?? outcome.status;
    const checkpoints = `${committed} checkpoint${committed === 1 ? '' : 's'}`;
    if (
      !(await confirm(
        `The run did not complete: ${why}.\nAccept its ${checkpoints} as they are (as with --force)? [y/N] `,
      ))
    )
      return false;
  }
  await acceptAndReport(output, prepared.repoRoot, await resolveRun(ledger, prepared.run.id), ledger, { force });
  return true;
}

function showConfirmScreen(output: Output, prepared: PreparedRefactor): void {
  output.out('');
  printPlan(output, prepared.plan);
  output.out(pc.bold('\nBaseline (passing)'));
  for (const entry of prepared.baseline.results)
    output.out(`  ${pc.green('✓')} ${entry.result.command} ${pc.dim(`(${entry.result.durationMs} ms)`)}`);
  output.out(pc.bold('\nSafety'));
  output.out(`  branch   ${prepared.run.branch} (worktree ${prepared.run.worktree})`);
  output.out(
    `  backup   ${prepared.backup.directory}${prepared.backup.bundle ? ' (git bundle + tar.gz snapshot)' : ' (tar.gz snapshot)'}`,
  );
  output.out(`  artifacts ${prepared.artifacts}`);
  if (prepared.repoRoot !== prepared.target)
    output.out(
      `  ${pc.yellow('not a git repository:')} working on a copy in ${prepared.repoRoot}; ${prepared.target} is never touched`,
    );
}

async function writeReport(repoRoot: string, runId: string): Promise<{ markdown: string; html: string }> {
  await using ledger = await openRepoLedger(repoRoot);
  const written = await writeRunReport(repoRoot, await resolveRun(ledger, runId), ledger);
  return { markdown: written.markdownPath, html: written.htmlPath };
}

export function registerRefactorCommands(program: Command, setExit: (code: number) => void): void {
  const refactor = program
    .command('refactor')
    .description(
      'Whole-repository refactoring in small verified batches (seed 002): baseline, index, risk-ordered plan, patches, checkpoints, report',
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
    .action(async (repo: string | undefined, flags: RefactorFlags, command: Command) => {
      const output = createCliOutput(command);
      const target = await targetOf(repo, command);
      const yes = Boolean(globalOptions(command).yes);
      const config = await configFor(target, { ...flags, ...(flags.provider ? {} : {}) });
      const settings = await loadRefactorSettings(target, config);
      if (config.provider.name === 'claude-code') {
        const runner = createProcessRunner();
        const version = await checkClaudeCode({ binary: settings.claude.binary, runner, env: process.env });
        // The same endpoint the run's calls will use (`--base-url`, `[provider] base_url`), and the
        // same way there: sandboxed, through the API proxy, but with no tools in an empty directory.
        await checkClaudeAuth({
          binary: settings.claude.binary,
          runner: await claudeCheckRunner(config, runner),
          env: process.env,
          ...(config.provider.baseUrl ? { baseUrl: config.provider.baseUrl } : {}),
        });
        if (!output.json) output.out(pc.dim(`Claude Code ${version.version}: authenticated`));
      }
      if (!yes && !process.stdin.isTTY) {
        throw new RatchetError('usage', 'The plan must be confirmed, and there is no terminal to ask.', {
          hint: 'Pass --yes to proceed without asking.',
        });
      }
      const report = output.json ? createJsonReporter(output) : createPlainReporter(output);
      const interrupt = interruptOnSignals();
      try {
        const home = await refactorHome(target, config, { ids: createIdGenerator() });
        const options = {
          home,
          target,
          goal: flags.goal ?? null,
          config,
          allowDirty: Boolean(flags.allowDirty),
          useCritic: Boolean(flags.critic),
          signal: interrupt.signal,
          ...(flags.record ? { recordPath: resolve(flags.record) } : {}),
        };
        let prepared: PreparedRefactor;
        let recorded = false;
        try {
          await using ledger = await openRepoLedger(home.repoRoot);
          const preparing = prepareRefactor(options, engineServices(ledger));
          try {
            let step = await preparing.next();
            while (!step.done) {
              report(step.value);
              step = await preparing.next();
            }
            prepared = step.value;
          } finally {
            recorded = (await ledger.getRun(home.runId)) !== undefined;
          }
        } catch (error) {
          await discardUnusedCopy(home, recorded);
          throw error;
        }
        if (!output.json) showConfirmScreen(output, prepared);
        else
          output.out(
            JSON.stringify({ type: 'plan', run: prepared.run.id, batches: prepared.plan, backup: prepared.backup }),
          );
        if (!yes && !(await confirm('\nProceed with these batches? [y/N] ', interrupt.signal))) {
          await using ledger = await openRepoLedger(prepared.repoRoot);
          await rejectRun(prepared.repoRoot, await resolveRun(ledger, prepared.run.id), ledger);
          output.out('Cancelled: nothing was changed (the worktree and branch were removed; the backup is kept).');
          if (interrupt.signal.aborted) setExit(interrupt.bySigint() ? EXIT.sigint : EXIT.interrupted);
          return;
        }
        await using ledger = await openRepoLedger(prepared.repoRoot);
        const running = executeRefactor(prepared, options, engineServices(ledger));
        let step = await running.next();
        while (!step.done) {
          report(step.value);
          step = await running.next();
        }
        const outcome = step.value;
        const files = await writeReport(prepared.repoRoot, prepared.run.id);
        const cwd = prepared.repoRoot === target ? '' : ` --cwd ${prepared.repoRoot}`;
        if (output.json)
          output.out(JSON.stringify({ type: 'report', run: prepared.run.id, status: outcome.status, ...files }));
        else {
          // What is on the branch now: an interrupt or error after a checkpoint keeps it, a failing
          // full verifier drops what came after the last fully verified one.
          const committed = (await checkpointsOf(new Git(prepared.repoRoot), prepared.run)).filter((checkpoint) =>
            checkpoint.subject.startsWith('checkpoint: batch-'),
          ).length;
          output.out(
            `\n${committed} of ${prepared.plan.length} batches committed on ${prepared.run.branch}. Report: ${files.html}`,
          );
          // A run that stopped early is accepted only as far as its checkpoints go (--force).
          const force = outcome.status === 'completed' ? '' : ' --force';
          // With nothing committed there is nothing to accept: dropping the run is the next step.
          const printCommands = (): void =>
            output.out(
              committed === 0
                ? `Nothing to accept: drop the run with ${pc.cyan(`ratchet reject ${prepared.run.id}${cwd}`)} (backup: ${prepared.backup.directory}).`
                : `Accept with ${pc.cyan(`ratchet accept ${prepared.run.id}${force}${cwd}`)}, or drop it with ${pc.cyan(`ratchet reject ${prepared.run.id}${cwd}`)} (backup: ${prepared.backup.directory}).`,
            );
          // Asked only on a terminal, without --yes, and not after Ctrl-C.
          const interactive =
            !yes && Boolean(process.stdin.isTTY) && Boolean(process.stderr.isTTY) && !interrupt.signal.aborted;
          let decided = false;
          try {
            decided = interactive && (await decideRun(output, prepared, outcome, committed, ledger));
          } finally {
            // Kept for later, or the accept failed (dirty checkout, other branch): the commands still work.
            if (!decided) printCommands();
          }
        }
        setExit(
          outcome.status === 'completed'
            ? EXIT.ok
            : outcome.error
              ? exitCodeFor(outcome.error.code, interrupt.bySigint())
              : EXIT.gateFailed,
        );
      } finally {
        interrupt.dispose();
      }
    });

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
      const cacheDir = await indexCacheDir(target, isGit, config.home);
      const index = await buildIndex({
        root: target,
        cacheDir,
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
      const uncommitted = isGit ? (await new Git(target).status()).files.length : 0;
      // The commands run where a run's would (a temporary worktree of HEAD, sandboxed): what they
      // write and what the dependencies run stay away from the checkout.
      const { result, commit, sandboxed } = await withScratchCheckout(
        { target, config, runner: createProcessRunner(), env: process.env },
        async (scratch) => {
          const commands = await verifierCommands(scratch.dir, settings, config);
          const verifier = createCommandVerifier({
            cwd: scratch.dir,
            repoRoot: logRoot,
            outputDir,
            fast: commands.fast,
            full: commands.full,
            timeoutMs: config.test.timeoutMs,
            runner: scratch.runner,
            environment: scratch.environment,
            redact: createRedactor(secretsFromEnv(process.env)),
          });
          return {
            result: await verifier.run('baseline', 'BASELINE'),
            commit: scratch.commit,
            sandboxed: scratch.sandboxed,
          };
        },
      );
      const environment = { node: process.versions.node, platform: `${process.platform}-${process.arch}` };
      if (output.json)
        output.out(
          JSON.stringify({
            ok: result.ok,
            environment,
            commit,
            sandboxed,
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
              : `Verifying HEAD ${commit.slice(0, 8)} in a temporary worktree${sandboxed ? ', sandboxed' : ''}, as a run starts from HEAD${uncommitted > 0 ? ` (the ${uncommitted} uncommitted changes are not part of it)` : ''}.`,
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
        output.out(
          result.ok
            ? pc.green('Baseline is green.')
            : pc.red('Baseline is red: `ratchet refactor run` would refuse to start.'),
        );
      }
      setExit(result.ok ? EXIT.ok : EXIT.gateFailed);
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
      await using ledger = await openRepoLedger(repoRoot);
      const run = await resolveRun(ledger, runId);
      const stored = run.config as { target?: string; backup?: Backup; isGit?: boolean } | null;
      if (!stored?.backup || !stored.target)
        throw new RatchetError('not-found', `Run ${runId} has no backup recorded.`);
      const yes = Boolean(globalOptions(command).yes);
      const force = Boolean(flags.force);
      const where = stored.isGit && run.baseBranch ? `branch ${run.baseBranch}` : stored.target;
      // The backup is from before the run: runs accepted since go with it, runs rolled back since
      // whose changes it holds come back. Neither happens silently (seed 002, 8.1: revertable).
      const chain = await rollbackChain(ledger, run, { dir: stored.target, isGit: Boolean(stored.isGit) });
      const undone = runList(chain.undone.map((other) => other.id));
      const revived = runList(chain.revived.map((entry) => entry.run.id));
      const revivedAt =
        chain.revived.length === 1
          ? `at ${chain.revived[0]?.rolledBackAt ?? ''}`
          : chain.revived.map((entry) => `${entry.run.id} at ${entry.rolledBackAt}`).join(', ');
      if (!force && (chain.undone.length > 0 || chain.revived.length > 0)) {
        const newest = chain.undone[0];
        const reasons = [
          newest
            ? `Rolling back run ${run.id} would also undo ${undone.text}, accepted after it started: the backup of run ${run.id} is from before ${undone.text}, so ${where} would lose ${undone.their} changes too, while ${undone.they} would still be marked accepted.`
            : '',
          chain.revived.length > 0
            ? `The backup of run ${run.id} holds the changes of ${revived.text}, rolled back since (${revivedAt}): restoring it would bring them back on ${where}, while ${revived.they} would stay marked rolled back.`
            : '',
        ];
        const hints = [
          newest
            ? hasRefactorBackup(newest)
              ? `Roll back the newest first: \`ratchet refactor rollback ${newest.id}\`; or pass --force to undo ${undone.them} too (marked rolled back as well).`
              : `Run ${newest.id} (${newest.workflow}) has no backup: undo it with git first (git revert), or pass --force to undo ${undone.them} too (marked rolled back as well).`
            : '',
          chain.revived.length > 0
            ? `Pass --force to restore the backup anyway (the changes of ${revived.text} come back).`
            : '',
        ];
        throw new RatchetError('usage', reasons.filter(Boolean).join(' '), {
          hint: hints.filter(Boolean).join(' '),
          details: { undone: undone.ids, revived: revived.ids },
        });
      }
      const previous = run.status === 'rolled-back' ? (await rollbacksOf(ledger, run.id)).at(-1) : undefined;
      const warning =
        `This puts ${stored.target} back as it was before run ${run.id}: ${stored.isGit && run.baseBranch ? `branch ${run.baseBranch} goes back to its commit then (commits made on it since leave it), ` : ''}` +
        'and files changed or added since, committed or not, are replaced or removed.' +
        // Nothing of a run that was never accepted is on the user's branch: reject is enough.
        (run.status === 'rolled-back'
          ? ` Run ${run.id} was already rolled back${previous ? ` at ${previous.timestamp}` : ''}: this restores the same backup again.`
          : isClosed(run)
            ? ''
            : ` Run ${run.id} was never accepted: \`ratchet reject ${run.id}\` drops it and leaves your branch and files as they are.`) +
        (chain.undone.length > 0
          ? ` It also undoes ${undone.text}, accepted after run ${run.id} started: ${undone.they} ${undone.ids.length === 1 ? 'is' : 'are'} marked rolled back too.`
          : '') +
        (chain.revived.length > 0
          ? ` The backup holds the changes of ${revived.text}, rolled back since (${revivedAt}): they come back on ${where}.`
          : '');
      if (!yes) {
        if (!process.stdin.isTTY) {
          throw new RatchetError('usage', `${warning} Confirm with --yes.`, {
            hint: `ratchet refactor rollback ${run.id}${force ? ' --force' : ''} --yes (the current state is backed up first).`,
          });
        }
        output.err(warning);
        if (!(await confirm('Roll back? The current state is backed up first. [y/N] '))) {
          output.err('Nothing changed.');
          setExit(EXIT.usage);
          return;
        }
      }
      // Nothing is lost by a rollback: the state it replaces is backed up first, like the run's.
      const runner = createProcessRunner();
      const safety = await createBackup(
        stored.target,
        join(stored.backup.directory, `before-rollback-${createIdGenerator().runId()}`),
        runner,
        { git: Boolean(stored.isGit) },
      );
      const branch = stored.isGit ? run.baseBranch : null;
      await restoreBackup(stored.target, stored.backup, runner, { branch });
      // A run that was not accepted still has its worktree and branch: the rollback drops them,
      // as a reject would, so that nothing of the run is left.
      if (!isClosed(run)) await rejectRun(repoRoot, run, ledger);
      // On record: status `rolled-back` and a `backup-restore` event (when, from what, and where
      // the state it replaced is kept), which `status`, `history` and `report` show.
      const restored = {
        target: stored.target,
        backup: stored.backup.directory,
        safetyBackup: safety.directory,
        branch: stored.isGit && stored.backup.bundle ? branch : null,
      };
      const restore = await recordRollback(ledger, run, restored);
      // The runs it undid (--force) are rolled back too, each with its own event naming this run.
      for (const other of chain.undone) await recordRollback(ledger, other, { ...restored, undoneBy: run.id });
      if (output.json)
        output.out(
          JSON.stringify({
            run: run.id,
            status: 'rolled-back',
            rolledBackAt: restore.timestamp,
            restored: stored.target,
            backup: stored.backup.directory,
            previousState: safety.directory,
            branch: restore.branch,
            alsoRolledBack: undone.ids,
            broughtBack: revived.ids,
          }),
        );
      else
        output.out(
          `Restored ${stored.target} from ${stored.backup.directory}${restore.branch ? ` (branch ${restore.branch} reset)` : ''}; run ${run.id} is now rolled back.\nThe state before the rollback is kept in ${safety.directory} (${safety.bundle ? 'git bundle + tar.gz snapshot' : 'tar.gz snapshot'}).` +
            (chain.undone.length > 0
              ? `\nThis also undid ${undone.text}, accepted after run ${run.id} started: now rolled back too.`
              : '') +
            (chain.revived.length > 0
              ? `\nThe backup held the changes of ${revived.text}, rolled back before (${revivedAt}): they are back on ${where}, and ${revived.they} stay${revived.ids.length === 1 ? 's' : ''} marked rolled back.`
              : ''),
        );
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

/** Run ids as a sentence names them: `run A`, `runs A and B`, `runs A, B and C`, with pronouns. */
function runList(ids: string[]): { ids: string[]; text: string; they: string; them: string; their: string } {
  const one = ids.length === 1;
  const names = ids.length > 1 ? `${ids.slice(0, -1).join(', ')} and ${ids.at(-1) ?? ''}` : (ids[0] ?? '');
  return {
    ids,
    text: `${one ? 'run' : 'runs'} ${names}`,
    they: one ? 'it' : 'they',
    them: one ? 'it' : 'them',
    their: one ? 'its' : 'their',
  };
}

/** A refactor run with a backup recorded, which `refactor rollback` can restore. */
function hasRefactorBackup(run: GitRun): boolean {
  const stored = run.config as { backup?: { directory?: unknown } } | null;
  return run.workflow === 'refactor' && typeof stored?.backup?.directory === 'string';
}
