import type { Command } from 'commander';
import type { ResolvedConfig } from '../config/resolved.js';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { loadConfig, resolveProjectRoot, resolveRatchetHome } from '../config/load.js';
import { RatchetError } from '../core/errors.js';
import { createEngineServices } from '../engine/effects.js';
import { ledgerPath } from '../engine/run-paths.js';
import type { EngineServices } from '../engine/tdd-run.js';
import { Git } from '../git/git.js';
import { openLedger, secretsFromEnv, type Ledger } from '../ledger/ledger.js';
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
  const dir = resolveProjectRoot({ cwdFlag: globalOptions(command).cwd, env: process.env, processCwd: process.cwd() });
  const copy = runId === undefined ? null : join(resolveRatchetHome(process.env), 'copies', runId, basename(dir));
  if (copy !== null && !(await Git.isRepository(dir)) && existsSync(join(copy, '.ratchet', 'ledger.db'))) return copy;
  if (!(await Git.isRepository(dir))) {
    throw new RatchetError('usage', `${dir} is not inside a git repository.`, {
      hint: 'Run Ratchet from your project (or pass --cwd DIR); `git init` first if needed.',
    });
  }
  return await new Git(dir).root();
}

export async function configFor(repoRoot: string, flags: ProviderFlags = {}): Promise<ResolvedConfig> {
  const maxAttempts = flags.maxAttempts === undefined ? undefined : Number(flags.maxAttempts);
  if (maxAttempts !== undefined && (!Number.isInteger(maxAttempts) || maxAttempts < 1)) {
    throw new RatchetError('usage', `--max-attempts must be a positive integer, got "${flags.maxAttempts}".`);
  }
  return loadConfig({
    repoRoot,
    env: process.env,
    flags: {
      ...(flags.provider ? { provider: flags.provider } : {}),
      ...(flags.model ? { model: flags.model } : {}),
      ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
      ...(flags.cassette ? { cassette: flags.cassette } : {}),
      ...(flags.refactor ? { refactor: flags.refactor } : {}),
      ...(maxAttempts ? { maxAttempts } : {}),
    },
  });
}

export async function openRepoLedger(repoRoot: string): Promise<Ledger> {
  return openLedger(ledgerPath(repoRoot), { secrets: secretsFromEnv(process.env) });
}

export function engineServices(ledger: Ledger): EngineServices {
  return createEngineServices(ledger, process.env);
}
