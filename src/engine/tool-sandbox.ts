import { existsSync, realpathSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResolvedConfig } from '../config/resolved.js';
import { RatchetError } from '../core/errors.js';
import { Git } from '../git/git.js';
import { bwrapWorks, createSandboxedRunner, type SandboxMount } from '../process/sandbox.js';
import type { ProcessRunner } from '../process/types.js';
import { SHARED_DIRECTORIES } from './worktree-setup.js';

export interface ToolSandbox {
  /** The runner for the agent's Bash tool. */
  runner: ProcessRunner;
  /** Said once at the start of a run when the tools run without a sandbox although one was wanted. */
  notice: string | null;
}

export interface ToolSandboxPaths {
  /** The user's checkout (or the original directory), kept read-only. */
  protect: readonly string[];
  /** The run's worktree: the one place the agent works in. */
  worktree: string;
  /** Where the shared dependency folders live (the checkout the worktree links them from). */
  dependenciesOf: string;
}

/**
 * What git in the worktree writes besides its files: the worktree's own git directory (index,
 * HEAD), the object store (append-only), and the run's own branch (`refs/heads/ratchet/...` and
 * its reflog), so `git add` and even `git commit` work there, while the user's branches, index
 * and HEAD stay read-only.
 */
async function worktreeGitMounts(worktree: string): Promise<string[]> {
  const { gitDir, commonDir } = await new Git(worktree).gitDirs();
  return [gitDir, join(commonDir, 'objects'), join(commonDir, 'refs', 'heads', 'ratchet'), join(commonDir, 'logs', 'refs', 'heads', 'ratchet')];
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The agent's shell, and the test, lint and verifier commands that run the code it wrote, under
 * `[bash] sandbox` (DESIGN: nothing outside the worktree is reachable). With bubblewrap,
 * everything is read-only but the worktree, the temporary directory, package-manager and build
 * caches and the shared dependency folders (test runners write caches there); the user's
 * checkout and `$RATCHET_HOME` are mounted read-only again on top, in case they lie under a
 * writable place. `auto` without a working bwrap runs unsandboxed and says so; `required` refuses.
 */
/** For `[bash] sandbox = "required"`: refuses before a run exists when bubblewrap cannot run. */
export async function requireSandboxIfConfigured(config: ResolvedConfig, runner: ProcessRunner): Promise<void> {
  if (config.bash.sandbox === 'required' && !(await bwrapWorks(runner))) throw sandboxMissing();
}

function sandboxMissing(): RatchetError {
  return new RatchetError('config', '[bash] sandbox = "required", but bubblewrap (bwrap) cannot run here.', {
    hint: 'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow user namespaces, or set [bash] sandbox = "auto".',
  });
}

export async function toolSandbox(config: ResolvedConfig, runner: ProcessRunner, paths: ToolSandboxPaths): Promise<ToolSandbox> {
  if (config.bash.sandbox === 'off') return { runner, notice: null };
  if (!(await bwrapWorks(runner))) {
    if (config.bash.sandbox === 'required') throw sandboxMissing();
    return {
      runner,
      notice: 'The agent\'s Bash commands run without a sandbox: bubblewrap (bwrap) is not available here. Install it to keep everything outside the worktree read-only ([bash] sandbox).',
    };
  }
  const home = homedir();
  const caches = ['.cache', '.npm', '.m2', '.gradle', '.cargo', 'go'].map((name) => join(home, name));
  const writableOutside = [tmpdir(), '/tmp', ...caches].filter((path) => existsSync(path)).map(real);
  const dependencies = SHARED_DIRECTORIES.map((name) => join(paths.dependenciesOf, name)).filter((path) => existsSync(path)).map(real);
  const mounts: SandboxMount[] = [
    ...[...new Set(writableOutside)].map((path) => ({ path, writable: true })),
    ...[...paths.protect, config.home].filter((path) => existsSync(path)).map((path) => ({ path: real(path), writable: false })),
    { path: real(paths.worktree), writable: true },
    // The worktree's `.git` file names the repository git uses there; the orchestrator runs git
    // in the worktree outside the sandbox, so this file must not be redirected from inside.
    ...(existsSync(join(paths.worktree, '.git')) ? [{ path: join(real(paths.worktree), '.git'), writable: false }] : []),
    ...(await worktreeGitMounts(paths.worktree)).filter((path) => existsSync(path)).map((path) => ({ path: real(path), writable: true })),
    ...dependencies.map((path) => ({ path, writable: true })),
  ];
  return { runner: createSandboxedRunner(runner, mounts), notice: null };
}
