import { buildGitEnv } from './internal/exec-git.js';
import { hardenedConfigArgs } from './internal/hardening.js';

/** Arguments and complete environment of one git process, for a caller that spawns it itself. */
export interface HardenedGitInvocation {
  command: 'git';
  args: string[];
  /** The whole environment (not to be merged over `process.env` again). */
  env: Record<string, string>;
}

/**
 * `git <args>` as the `Git` wrapper runs it (see `internal/hardening.ts`): for the few places
 * that spawn git through the process runner instead (output caps and cancellation of the code
 * index's file listing, `doctor`). `env`: overrides as for `GitOptions.env`.
 */
export function hardenedGit(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): HardenedGitInvocation {
  return { command: 'git', args: [...hardenedConfigArgs(), ...args], env: buildGitEnv(env) };
}
