import type { Command } from 'commander';
import type { ResolvedConfig } from '../config/resolved.js';
import { loadConfig, resolveProjectRoot } from '../config/load.js';
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

/** The repository root for a command: --cwd, else TDD_PROJECT_ROOT, else the current directory. */
export async function repositoryRoot(command: Command): Promise<string> {
  const dir = resolveProjectRoot({ cwdFlag: globalOptions(command).cwd, env: process.env, processCwd: process.cwd() });
  if (!(await Git.isRepository(dir))) {
    throw new RatchetError('usage', `${dir} is not inside a git repository.`, { hint: 'Run Ratchet from your project (or pass --cwd DIR); `git init` first if needed.' });
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
