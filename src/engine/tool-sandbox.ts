import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResolvedConfig } from '../config/resolved.js';
import { RatchetError } from '../core/errors.js';
import type { EventMap } from '../core/events.js';
import { createClaudeRunner, type ClaudeSandbox } from '../agent/claude-code/claude-runner.js';
import { createSandboxedRunner, sandboxProblem, type SandboxLayout, type SandboxMount } from '../process/sandbox.js';
import type { ProcessRunner } from '../process/types.js';
import {
  argumentFileMounts,
  createSandboxArea,
  programMounts,
  removeSandboxArea,
  sandboxLayout,
  userHome,
  type SandboxArea,
  type SandboxPlaces,
} from './sandbox-host.js';
import { guardedRunner, guardSharedDependencies, restoreSharedNow } from './shared-dependencies-guard.js';

/** A runner in the run's sandbox with more mounts or another network setting (the Claude Code CLI's). */
export type SandboxFactory = (options: {
  mounts?: readonly SandboxMount[];
  network?: boolean;
  /** Variables naming a socket mounted in on purpose, kept (see `sandboxEnv`). */
  keepVariables?: readonly string[];
}) => ProcessRunner;

export interface ToolSandbox extends AsyncDisposable {
  /** The runner for the agent's Bash tool, and for the test, lint and verifier commands. */
  runner: ProcessRunner;
  /**
   * The runner for the Claude Code CLI (`--provider claude-code`): in the same sandbox (so its own
   * Bash, Write and Edit reach no further) without network, its credentials added by an API proxy
   * outside, an allowlisted environment and a private copy of its configuration (see
   * `createClaudeRunner`); with the sandbox turned off, all of that but the sandbox.
   */
  claudeRunner: ProcessRunner;
  /** Whether those runners sandbox anything: false only when the user opted out. */
  sandboxed: boolean;
  /** What the run records and shows at its start. */
  start: EventMap['sandbox-start'];
  /**
   * The warnings since the last call (each a shared dependency folder the agent replaced and
   * `runner` restored before a command, see `guardSharedDependencies`), for the run to show.
   */
  takeNotices(): string[];
  /**
   * Checks and restores the shared dependency folders now (a notice for `takeNotices` each):
   * where the agent's work leaves its hands with no command after it. Disposing does it too.
   */
  restoreShared(): Promise<void>;
}

export interface ToolSandboxPaths {
  /** The user's checkout (or the original directory): never seen. */
  protect: readonly string[];
  /** The run's worktree: the one place the agent works in. */
  worktree: string;
  /** Where the shared dependency folders live (the checkout the worktree links them from). */
  dependenciesOf: string;
  /** Names the run's private area (`$RATCHET_HOME/tmp/<run-id>-<random>.<pid>`). */
  runId: string;
}

function optOut(config: ResolvedConfig): EventMap['sandbox-start'] {
  return {
    mode: 'off',
    optOut: config.origins['bash.sandbox'] === 'flag' ? 'flag' : 'config',
    network: 'on',
  };
}

/** A layout of nothing in particular, to see whether bubblewrap can make a sandbox here at all. */
function probeLayout(config: ResolvedConfig, dir: string): SandboxLayout {
  const mib = 2 ** 20;
  return {
    hide: [],
    hideFiles: [],
    mounts: [],
    tmp: dir,
    shm: dir,
    empty: '/dev/null',
    network: false,
    limits: {
      processes: config.bash.limits.processes,
      fileSizeBytes: config.bash.limits.fileSizeMb * mib,
      memoryBytes: config.bash.limits.memoryMb * mib,
      minFreeDiskBytes: 0,
    },
    nproc: config.bash.limits.processes,
    watchDisks: [],
  };
}

/** Why no sandbox can be made here (bubblewrap missing, or not allowed its namespaces), or undefined. */
export async function sandboxUnavailable(config: ResolvedConfig, runner: ProcessRunner): Promise<string | undefined> {
  if (process.platform !== 'linux') return `bubblewrap is a Linux sandbox, and this is ${process.platform}`;
  const dir = await mkdtemp(join(tmpdir(), 'ratchet-probe-'));
  try {
    return await sandboxProblem(runner, probeLayout(config, dir));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function sandboxRefused(problem: string): RatchetError {
  const missing = /ENOENT|not found|No such file/i.test(problem);
  const install = missing
    ? 'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)'
    : 'Allow unprivileged user namespaces (Debian: sysctl -w kernel.unprivileged_userns_clone=1; Ubuntu 24.04: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0)';
  return new RatchetError(
    'config',
    `The model's commands (its Bash, and the tests, lint and verifiers that run its code) run in a bubblewrap sandbox, and it cannot work here: ${problem}.`,
    {
      hint: `${install}, or opt out explicitly with --no-sandbox or [bash] sandbox = "off" (the commands then run with your rights, able to read and change anything you can).`,
      details: { problem },
    },
  );
}

/**
 * Refuses, before a run exists or a model is called, to run model-written commands where no
 * sandbox works, unless the user opted out (`[bash] sandbox = "off"`, `--no-sandbox`).
 */
export async function requireSandbox(config: ResolvedConfig, runner: ProcessRunner): Promise<void> {
  if (config.bash.sandbox === 'off') return;
  const problem = await sandboxUnavailable(config, runner);
  if (problem !== undefined) throw sandboxRefused(problem);
}

/** The run's sandbox on a layout of `places` with its private area: a runner factory. */
export async function sandboxFactory(
  config: ResolvedConfig,
  runner: ProcessRunner,
  places: SandboxPlaces,
  area: SandboxArea,
): Promise<{ layout: SandboxLayout; factory: SandboxFactory }> {
  const layout = await sandboxLayout(config, places, area);
  const home = userHome();
  const factory: SandboxFactory = (options) =>
    createSandboxedRunner(
      runner,
      {
        ...layout,
        mounts: [...layout.mounts, ...(options.mounts ?? [])],
        network: options.network ?? layout.network,
      },
      {
        home,
        gradleCaches: layout.mounts.some((mount) => mount.path.endsWith('/.gradle/caches')),
        scratchDir: area.scratch,
        ...(options.keepVariables === undefined ? {} : { keepVariables: options.keepVariables }),
      },
    );
  return { layout, factory };
}

/**
 * The agent's shell (for `claude-code`, the Claude Code CLI with all its tools), and the test,
 * lint and verifier commands that run the code it wrote, under `[bash] sandbox` (DESIGN.md,
 * Security model; `sandbox-plan.ts` for what is seen): writes only to the worktree and the run's
 * private `/tmp` (`$RATCHET_HOME/tmp/<run-id>-<random>.<pid>`, removed when the sandbox is disposed, or by
 * the next run once this process is gone), dependencies and toolchains read-only, the user's home
 * and checkout hidden, no network unless `[bash] network = "on"`, with limits. Without a working
 * bubblewrap it throws (`requireSandbox` said so before the run); with `sandbox = "off"` the
 * runners are the plain one.
 */
export async function toolSandbox(
  config: ResolvedConfig,
  runner: ProcessRunner,
  paths: ToolSandboxPaths,
  /**
   * `checked`: the caller has run `requireSandbox` with this config and runner in this process
   * (a pool opening one sandbox per task asks bubblewrap once, not once per task).
   */
  options: { checked?: boolean } = {},
): Promise<ToolSandbox> {
  // Every command of the run's runner first puts back the dependency folders shared into the
  // worktree, should the agent have swapped them (its Bash can write the worktree, links included).
  const guard = await guardSharedDependencies(paths.dependenciesOf, paths.worktree);
  const notices: string[] = [];
  const takeNotices = (): string[] => notices.splice(0);
  const notice = (message: string): void => {
    notices.push(message);
  };
  const guarded = (inner: ProcessRunner): ProcessRunner => guardedRunner(inner, guard, notice);
  // A swap by the agent's last command (or a write after it) has no next command to undo it: the
  // worktree would keep it once the run ends, for the user to run outside any sandbox.
  const restoreShared = (): Promise<void> => restoreSharedNow(guard, notice);
  if (config.bash.sandbox === 'off') {
    return {
      runner: guarded(runner),
      claudeRunner: claudeRunnerOf(config, runner),
      sandboxed: false,
      start: optOut(config),
      takeNotices,
      restoreShared,
      async [Symbol.asyncDispose]() {
        await restoreShared();
      },
    };
  }
  if (options.checked !== true) await requireSandbox(config, runner);
  const area = await createSandboxArea(config.home, paths.runId);
  try {
    const { layout, factory } = await sandboxFactory(
      config,
      runner,
      { protect: paths.protect, worktree: paths.worktree, dependenciesOf: paths.dependenciesOf },
      area,
    );
    const limits = config.bash.limits;
    return {
      runner: guarded(factory({})),
      claudeRunner: claudeRunnerOf(config, runner, claudeSandboxOf(factory)),
      sandboxed: true,
      start: {
        mode: 'bubblewrap',
        network: layout.network ? 'on' : 'off',
        limits: {
          processes: limits.processes,
          fileSizeMb: limits.fileSizeMb,
          memoryMb: limits.memoryMb,
          minFreeDiskMb: limits.minFreeDiskMb,
        },
      },
      takeNotices,
      restoreShared,
      async [Symbol.asyncDispose]() {
        try {
          await restoreShared();
        } finally {
          await removeSandboxArea(area);
        }
      },
    };
  } catch (error) {
    await removeSandboxArea(area);
    throw error;
  }
}

/**
 * The Claude Code CLI's sandbox in the run's: with the mounts its runner adds (its private
 * configuration, the API proxy's socket), the CLI itself wherever it is installed, and the files
 * its command line names (the system prompt).
 */
function claudeSandboxOf(factory: SandboxFactory): ClaudeSandbox {
  return ({ mounts, network, keepVariables }) => ({
    run: (spec) =>
      factory({
        mounts: [...mounts, ...programMounts(spec.command), ...argumentFileMounts(spec.args ?? [])],
        network,
        keepVariables,
      }).run(spec),
  });
}

/**
 * The runner of the Claude Code CLI (see `createClaudeRunner`), in `sandbox` when given; its
 * private per-call directories go under `$RATCHET_HOME/claude-code`. The names `[bash] env` lists
 * reach the CLI as they reach the agent's Bash.
 */
function claudeRunnerOf(config: ResolvedConfig, runner: ProcessRunner, sandbox?: ClaudeSandbox): ProcessRunner {
  return createClaudeRunner({
    runner,
    stateDir: join(config.home, 'claude-code'),
    passEnv: config.bash.env,
    ...(sandbox === undefined ? {} : { sandbox }),
  });
}

/**
 * The runner for the Claude Code authentication check before a run (`checkClaudeAuth`), which
 * runs the CLI with no tools in an empty temporary directory: as every other call of the CLI,
 * through the API proxy, in a sandbox of its own without network (nothing but that directory
 * writable, the user's home and checkout hidden), unless the user opted out of the sandbox.
 */
export async function claudeCheckRunner(config: ResolvedConfig, runner: ProcessRunner): Promise<ProcessRunner> {
  if (config.bash.sandbox === 'off') return claudeRunnerOf(config, runner);
  await requireSandbox(config, runner);
  return {
    async run(spec) {
      const area = await createSandboxArea(config.home, 'claude-check');
      try {
        const { factory } = await sandboxFactory(
          config,
          runner,
          { protect: [config.repoRoot], worktree: spec.cwd, dependenciesOf: spec.cwd },
          area,
        );
        return await claudeRunnerOf(config, runner, claudeSandboxOf(factory)).run(spec);
      } finally {
        await removeSandboxArea(area);
      }
    },
  };
}
