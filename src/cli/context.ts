import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import type { ResolvedConfig } from '../config/resolved.js';
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, resolveProjectRoot, resolveRatchetHome } from '../config/load.js';
import { RatchetError } from '../core/errors.js';
import { createEngineServices, createIdGenerator, systemClock, type EngineServices } from '../engine/effects.js';
import { ledgerPath } from '../engine/run-paths.js';
import type { StartServices } from '../engine/start-run.js';
import { copyPath, latestCopyOf } from '../engine/plain-directory.js';
import { noRunError } from '../engine/run-lookup.js';
import { RATCHET_EXCLUDES } from '../engine/worktree-setup.js';
import { createProcessRunner } from '../process/runner.js';
import { Git } from '../git/git.js';
import { openLedger, secretsFromEnv, type Ledger } from '../ledger/ledger.js';
import { replaysCassette } from '../llm/provider-kinds.js';
import { createOutput, type Output } from './output.js';

/** Options every command accepts (DESIGN.md, Commands). */
export interface GlobalOptions {
  cwd?: string;
  json?: boolean;
  yes?: boolean;
}

export interface ProviderFlags {
  provider?: string;
  model?: string;
  baseUrl?: string;
  cassette?: string;
  refactor?: string;
  maxAttempts?: string;
  /** false with `--no-sandbox`. */
  sandbox?: boolean;
}

export function globalOptions(command: Command): GlobalOptions {
  return command.optsWithGlobals<GlobalOptions>();
}

export function createCliOutput(command: Command): Output {
  return createOutput(Boolean(globalOptions(command).json));
}

/**
 * The repository root for a command: --cwd, else TDD_PROJECT_ROOT, else the current directory.
 * For a run on a directory that is not a git repository (refactor), the run lives in its git
 * copy under `$RATCHET_HOME/copies/<run-id>/`: given the run id, that copy is found from the
 * original directory.
 */
export async function repositoryRoot(command: Command, runId?: string): Promise<string> {
  const { cwd } = globalOptions(command);
  const dir = resolveProjectRoot({ cwdFlag: cwd, env: process.env, processCwd: process.cwd() });
  const named = cwd?.trim() ? '--cwd' : process.env.TDD_PROJECT_ROOT?.trim() ? 'TDD_PROJECT_ROOT' : undefined;
  const kind = existsSync(dir) ? (statSync(dir).isDirectory() ? 'directory' : 'file') : 'missing';
  if (kind !== 'directory') {
    throw new RatchetError(
      'usage',
      `${dir}${named ? ` (${named})` : ''} ${kind === 'file' ? 'is a file, not a directory' : 'does not exist'}.`,
      {
        hint: named
          ? `Point ${named} at your project's directory.`
          : 'Run Ratchet from your project, or pass --cwd DIR.',
      },
    );
  }
  if (await Git.isRepository(dir)) return await new Git(dir).root();
  // A run on a plain directory lives in a git copy of it under $RATCHET_HOME/copies/<run-id>/:
  // the one a run id names, else the newest (so `status`, `report`, `accept` work from `dir`).
  const home = resolveRatchetHome(process.env);
  const copy = runId === undefined ? await latestCopyOf(home, dir) : copyPath(home, runId, dir);
  if (copy !== null && existsSync(ledgerPath(copy))) return copy;
  throw new RatchetError('usage', `${dir} is not inside a git repository.`, {
    hint: 'Run Ratchet from your project (or pass --cwd DIR); `git init` first if needed.',
  });
}

export async function configFor(
  repoRoot: string,
  flags: ProviderFlags = {},
  options: { skipRules?: readonly string[] } = {},
): Promise<ResolvedConfig> {
  const maxAttempts = flags.maxAttempts === undefined ? undefined : Number(flags.maxAttempts);
  if (maxAttempts !== undefined && (!Number.isInteger(maxAttempts) || maxAttempts < 1)) {
    throw new RatchetError('usage', `--max-attempts must be a positive integer, got "${flags.maxAttempts}".`, {
      hint: 'Pass the number of attempts per stage, e.g. --max-attempts 3.',
    });
  }
  const config = await loadConfig({
    repoRoot,
    env: process.env,
    ...(options.skipRules ? { skipRules: options.skipRules } : {}),
    flags: {
      ...(flags.provider ? { provider: flags.provider } : {}),
      ...(flags.model ? { model: flags.model } : {}),
      ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
      // A path on the command line is relative to where the user typed it, as --record's is.
      ...(flags.cassette ? { cassette: resolve(flags.cassette) } : {}),
      ...(flags.refactor ? { refactor: flags.refactor } : {}),
      ...(maxAttempts ? { maxAttempts } : {}),
      ...(flags.sandbox === false ? { noSandbox: true } : {}),
    },
  });
  // A cassette another provider would ignore: the user meant a replay (or forgot which provider runs).
  if (flags.cassette && !replaysCassette(config.provider.name)) {
    throw new RatchetError(
      'usage',
      `--cassette plays a recorded session, but the provider is ${config.provider.name}${flags.provider ? '' : ' (from the config)'}.`,
      { hint: 'Add --provider replay to replay the cassette, or drop --cassette (--record FILE records a session).' },
    );
  }
  return config;
}

/**
 * Opens the repository's ledger, `.ratchet/ledger.db`. Creating it first keeps `.ratchet/` out of
 * git (`.git/info/exclude`), so the checkout never shows it as an untracked change.
 */
export async function openRepoLedger(repoRoot: string): Promise<Ledger> {
  const file = ledgerPath(repoRoot);
  if (!existsSync(file) && (await Git.isRepository(repoRoot))) await new Git(repoRoot).addInfoExclude(RATCHET_EXCLUDES);
  return openLedger(file, { secrets: secretsFromEnv(process.env) });
}

/**
 * Opens the ledger of a repository for a command on its runs (status, history, report, ...):
 * when there is none, no run was ever started here, and nothing is created.
 */
export async function openExistingRepoLedger(repoRoot: string, runId?: string): Promise<Ledger> {
  if (!existsSync(ledgerPath(repoRoot))) throw noRunError(runId);
  return openRepoLedger(repoRoot);
}

export function engineServices(ledger: Ledger): EngineServices {
  return { ...createEngineServices(ledger, process.env), workerProcess: workerExecutable() };
}

/**
 * The local worker processes' executable (`task-worker.ts`), beside this module: `dist/bundle/` or
 * `dist/cli/` once built; from TypeScript sources (tests) through tsx's loader.
 */
function workerExecutable(): { path: string; execArgv: string[] } {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return { path: fileURLToPath(new URL('./task-worker.js', here)), execArgv: [] };
  // tsx as this checkout resolves it: the workers start in the run's repository, which has none.
  return { path: fileURLToPath(new URL('./task-worker.ts', here)), execArgv: ['--import', resolveTsx()] };
}

function resolveTsx(): string {
  try {
    return import.meta.resolve('tsx');
  } catch {
    return 'tsx';
  }
}

/**
 * The services of a new run: the ledger of the repository the run will live in is opened (and
 * created) once the run's checks passed, so a refused run writes nothing into the repository.
 */
export function startServices(): StartServices {
  return {
    clock: systemClock,
    ids: createIdGenerator(systemClock),
    runner: createProcessRunner(),
    env: process.env,
    ledger: openRepoLedger,
    workerProcess: workerExecutable(),
  };
}
