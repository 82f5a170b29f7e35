import { existsSync, realpathSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResolvedConfig } from '../config/resolved.js';
import { RatchetError } from '../core/errors.js';
import { createClaudeRunner } from '../agent/claude-code/claude-runner.js';
import { bwrapWorks, createSandboxedRunner, type SandboxMount } from '../process/sandbox.js';
import type { ProcessRunner } from '../process/types.js';
import { SHARED_DIRECTORIES } from './worktree-setup.js';

export interface ToolSandbox {
  /** The runner for the agent's Bash tool, and for the test, lint and verifier commands. */
  runner: ProcessRunner;
  /**
   * The runner for the Claude Code CLI (`--provider claude-code`): in the same sandbox (so its own
   * Bash, Write and Edit cannot write outside the worktree) without network, its credentials
   * added by an API proxy outside, an allowlisted environment and a private copy of its
   * configuration (see `createClaudeRunner`); without a sandbox, all of that but the sandbox.
   */
  claudeRunner: ProcessRunner;
  /** Whether those runners sandbox anything (bubblewrap works and `[bash] sandbox` is not off). */
  sandboxed: boolean;
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

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Download caches of package managers and build tools, written by test runs: their content is
 * fetched or built, never run from there by the user's shell (unlike `~/.cargo/bin`). Not the
 * whole of `~/.cache`: programs live there too (tool installs, the Node.js that may run Ratchet
 * itself), and one the agent rewrote would run outside the sandbox next time.
 */
const CACHES = [
  '.cache/go-build',
  '.cache/pip',
  '.npm/_cacache',
  '.m2/repository',
  '.gradle/caches',
  '.cargo/registry',
  '.cargo/git',
  'go/pkg/mod',
];

/** For `[bash] sandbox = "required"`: refuses before a run exists when the agent's tools cannot be sandboxed. */
export async function requireSandboxIfConfigured(config: ResolvedConfig, runner: ProcessRunner): Promise<void> {
  if (config.bash.sandbox !== 'required') return;
  if (!(await bwrapWorks(runner))) throw sandboxMissing();
}

function sandboxMissing(): RatchetError {
  return new RatchetError('config', '[bash] sandbox = "required", but bubblewrap (bwrap) cannot run here.', {
    hint: 'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow user namespaces, or set [bash] sandbox = "auto".',
  });
}

/**
 * The agent's shell (for `claude-code`, the Claude Code CLI with all its tools), and the test,
 * lint and verifier commands that run the code it wrote, under `[bash] sandbox` (DESIGN: nothing
 * outside the worktree is reachable). With bubblewrap, everything is read-only but the worktree,
 * the temporary directory, download and build caches and the shared dependency folders (test
 * runners write caches there); the user's checkout and `$RATCHET_HOME` are mounted read-only
 * again on top, in case they lie under a writable place. The Claude Code CLI runs in the same
 * mounts without network, reaching its API through Ratchet's proxy (see `createClaudeRunner`). `auto` without a working bwrap runs
 * unsandboxed and says so; `required` refuses.
 */
export async function toolSandbox(
  config: ResolvedConfig,
  runner: ProcessRunner,
  paths: ToolSandboxPaths,
): Promise<ToolSandbox> {
  if (config.bash.sandbox === 'off')
    return { runner, claudeRunner: claudeRunnerOf(config, runner), sandboxed: false, notice: null };
  if (!(await bwrapWorks(runner))) {
    if (config.bash.sandbox === 'required') throw sandboxMissing();
    const what =
      config.provider.name === 'claude-code'
        ? 'The Claude Code CLI and its tools (Bash, Write, Edit) run'
        : "The agent's Bash commands run";
    return {
      runner,
      claudeRunner: claudeRunnerOf(config, runner),
      sandboxed: false,
      notice: `${what} without a sandbox: bubblewrap (bwrap) is not available here. Install it to keep everything outside the worktree read-only ([bash] sandbox).`,
    };
  }
  const home = homedir();
  const writableOutside = [tmpdir(), '/tmp', ...CACHES.map((name) => join(home, name))]
    .filter((path) => existsSync(path))
    .map(real);
  const dependencies = SHARED_DIRECTORIES.map((name) => join(paths.dependenciesOf, name))
    .filter((path) => existsSync(path))
    .map(real);
  const mounts: SandboxMount[] = [
    ...[...new Set(writableOutside)].map((path) => ({ path, writable: true })),
    ...[...paths.protect, config.home]
      .filter((path) => existsSync(path))
      .map((path) => ({ path: real(path), writable: false })),
    { path: real(paths.worktree), writable: true },
    // Git metadata stays read-only, the worktree's `.git` file included: the orchestrator runs git
    // there outside the sandbox, so nothing inside may redirect it (HEAD, commondir, gitdir),
    // rewrite objects or move refs. The agent's git can read (status, diff, log), not commit.
    ...(existsSync(join(paths.worktree, '.git'))
      ? [{ path: join(real(paths.worktree), '.git'), writable: false }]
      : []),
    ...dependencies.map((path) => ({ path, writable: true })),
  ];
  return {
    runner: createSandboxedRunner(runner, mounts),
    claudeRunner: claudeRunnerOf(config, runner, mounts),
    sandboxed: true,
    notice: null,
  };
}

/**
 * The runner of the Claude Code CLI (see `createClaudeRunner`), in a sandbox with `mounts` when
 * given; its private per-call directories go under `$RATCHET_HOME/claude-code`. The names
 * `[bash] env` lists reach the CLI as they reach the agent's Bash.
 */
function claudeRunnerOf(
  config: ResolvedConfig,
  runner: ProcessRunner,
  mounts?: readonly SandboxMount[],
): ProcessRunner {
  return createClaudeRunner({
    runner,
    stateDir: join(config.home, 'claude-code'),
    passEnv: config.bash.env,
    ...(mounts === undefined ? {} : { sandbox: { mounts } }),
  });
}

/**
 * The runner for the Claude Code authentication check before a run (`checkClaudeAuth`), which
 * runs the CLI with no tools in an empty temporary directory: as every other call of the CLI,
 * through the API proxy, in a sandbox without network where bubblewrap works (nothing but the
 * temporary directory writable), under `[bash] sandbox` as a run would be.
 */
export async function claudeCheckRunner(config: ResolvedConfig, runner: ProcessRunner): Promise<ProcessRunner> {
  if (config.bash.sandbox === 'off') return claudeRunnerOf(config, runner);
  if (!(await bwrapWorks(runner))) {
    if (config.bash.sandbox === 'required') throw sandboxMissing();
    return claudeRunnerOf(config, runner);
  }
  const writable = [...new Set([tmpdir(), '/tmp'].filter((path) => existsSync(path)).map(real))];
  const mounts: SandboxMount[] = [
    ...writable.map((path) => ({ path, writable: true })),
    ...(existsSync(config.home) ? [{ path: real(config.home), writable: false }] : []),
  ];
  return claudeRunnerOf(config, runner, mounts);
}
