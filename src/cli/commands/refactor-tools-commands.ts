import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import type { CodeIndex } from '../../code/index/types.js';
import type { ResolvedConfig } from '../../config/resolved.js';
import { buildIndex } from '../../code/index/build-index.js';
import { writeIndexArtifacts } from '../../code/index/artifacts.js';
import { summarizeIndex } from '../../code/index/summary.js';
import { RatchetError } from '../../core/errors.js';
import { createRedactor, secretsFromEnv } from '../../core/redact.js';
import { countChanges } from '../../git/change-count.js';
import { Git } from '../../git/git.js';
import { createProcessRunner } from '../../process/runner.js';
import { goTestPlace, untestedGoModulesOf } from '../../verify/go-modules.js';
import { createIdGenerator } from '../../engine/effects.js';
import { excludeRatchetDir, homeFolderOf, indexCacheDir } from '../../engine/project-folders.js';
import { resolveRun } from '../../engine/run-lookup.js';
import { withScratchCheckout } from '../../engine/scratch-worktree.js';
import { restoreRunBackup } from '../../engine/verbs/restore-backup.js';
import { heuristicPlan } from '../../workflows/refactor/plan.js';
import { fileFacts, planBounds, untestedPlanText, verifierCommands } from '../../workflows/refactor/planning.js';
import { loadRefactorSettings } from '../../workflows/refactor/settings.js';
import { createCommandVerifier } from '../../workflows/refactor/verifier.js';
import { configFor, createCliOutput, globalOptions, openExistingRepoLedger, repositoryRoot } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { confirm } from '../prompt.js';
import type { CliSetup } from './cli-setup.js';
import { printIndexSummary, printPlan, printRestore, printVerify } from './refactor-output.js';

/**
 * The refactor workflow's commands beside `refactor run`: `refactor plan`, `refactor verify` and
 * `refactor rollback` (registered on the `refactor` group), and `index`.
 */

/**
 * The directory a refactor command works on: the given one, --cwd, TDD_PROJECT_ROOT or the
 * current directory; inside a git repository, the repository's root (seed 002: `run <repo>`), so
 * that `verify`, `plan`, `index` and `run` all see the same project.
 */
export async function targetOf(repo: string | undefined, command: Command): Promise<string> {
  const dir = resolve(repo ?? globalOptions(command).cwd ?? process.env.TDD_PROJECT_ROOT ?? process.cwd());
  if (!existsSync(dir)) throw missingTarget(repo, dir, command);
  if (!statSync(dir).isDirectory())
    throw new RatchetError('usage', `${dir} is a file, not a directory.`, {
      hint: "Name the project's directory (or run from it).",
    });
  return (await Git.isRepository(dir)) ? await new Git(dir).root() : dir;
}

/**
 * A directory argument that names nothing. A user who writes the goal where the directory goes
 * (`ratchet refactor plan "split the parser"`, as `ratchet tdd "<feature>"` takes its feature) is
 * told where a goal goes, on the commands that take one.
 */
function missingTarget(repo: string | undefined, dir: string, command: Command): RatchetError {
  if (repo === undefined) return new RatchetError('usage', `${dir} does not exist.`);
  const takesGoal = command.options.some((option) => option.long === '--goal');
  const words: string[] = [];
  for (let at: Command | null = command; at !== null; at = at.parent)
    words.unshift(at.parent === null ? 'ratchet' : at.name());
  const name = words.join(' ');
  return new RatchetError(
    'usage',
    `${repo} is no directory: \`${name}\` takes the project's directory there (${dir} does not exist).`,
    {
      hint: takesGoal
        ? `To say what the refactoring should achieve, pass it as --goal: ${name} --goal ${JSON.stringify(repo)}`
        : "Name the project's directory, or leave it out to use the current one.",
    },
  );
}

/** `ratchet refactor plan [repo]`: the heuristic plan, from the index; changes no file. */
export function registerRefactorPlanCommand(refactor: Command): void {
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
      const { config, settings, index } = await indexTarget(target);
      // As `run` plans: no batch for the files that define verification (no patch may change them).
      // Without a verifier yet (nothing detected, nothing configured) the plan is still shown.
      const commands = await verifierCommands(target, settings, config).catch(() => ({ fast: [], full: [] }));
      // Nor in a nested Go module the test command stops at: no test would verify a change there.
      const untested = await untestedGoModulesOf(target, [...commands.fast, ...commands.full]);
      const plan = heuristicPlan(await fileFacts(index, target, config), {
        goal: flags.goal ?? null,
        bounds: planBounds(settings, index, commands, target, untested),
      });
      if (output.json) output.out(JSON.stringify({ batches: plan, untestedModules: untested }));
      else {
        printPlan(output, plan);
        if (untested.length > 0) output.err(pc.yellow(`! ${untestedPlanText(untested, await goTestPlace(target))}`));
      }
    });
}

/** `ratchet refactor verify [repo]`: the baseline verification, as a run would run it. */
export function registerRefactorVerifyCommand(refactor: Command, cli: CliSetup): void {
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
      const uncommitted = isGit ? await countChanges(new Git(target)) : { changes: 0, untracked: 0, paths: [] };
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
          return {
            result,
            commit: scratch.commit,
            sandboxed: scratch.sandboxed,
            warnings: scratch.takeNotices(),
          };
        },
      );
      printVerify(output, verified, { target, logRoot, uncommitted });
      cli.setExit(verified.result.ok ? EXIT.ok : EXIT.gateFailed);
    });
}

/** `ratchet refactor rollback <run-id>`: restores the directory from a run's backup. */
export function registerRefactorRollbackCommand(refactor: Command, cli: CliSetup): void {
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
      const registry = await cli.loadRegistry([run]);
      const context = { ledger, registry, runner: createProcessRunner(), ids: createIdGenerator() };
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
}

/** `ratchet index [repo]`: builds or updates the code index and prints its summary. */
export function registerIndexCommand(program: Command): void {
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
      const { index } = await indexTarget(target);
      if (flags.artifacts) await writeIndexArtifacts(index, resolve(flags.artifacts));
      const summary = summarizeIndex(index);
      if (output.json) output.out(JSON.stringify(summary));
      else printIndexSummary(output, summary, flags.artifacts ? resolve(flags.artifacts) : null);
    });
}

/** The target's configuration, refactor settings and code index (built or updated in its cache). */
async function indexTarget(target: string): Promise<{
  config: ResolvedConfig;
  settings: Awaited<ReturnType<typeof loadRefactorSettings>>;
  index: CodeIndex;
}> {
  const config = await configFor(target);
  const settings = await loadRefactorSettings(target, config);
  const isGit = await Git.isRepository(target);
  const index = await buildIndex({
    root: target,
    cacheDir: await indexCacheDir(target, isGit, config.home),
    excludes: settings.scopeExcludes,
    git: isGit ? new Git(target) : false,
  });
  return { config, settings, index };
}
