import { bwrapArgs, sandboxEnv, type SandboxLayout } from './sandbox-args.js';
import { createCommandCgroup, type CommandCgroup } from './sandbox-cgroup.js';
import { startWatchdog, type Watchdog } from './sandbox-watchdog.js';
import type { CommandResult, CommandSpec, ProcessRunner } from './types.js';

export { isWithin, type SandboxLayout, type SandboxLimits, type SandboxMount } from './sandbox-args.js';

/** Joins the cgroup whose `cgroup.procs` is `$0`, then becomes bwrap; refuses to run outside it. */
const JOIN_CGROUP =
  'echo $$ > "$0" || { echo "ratchet: cannot join the sandbox\'s cgroup $0" >&2; exit 125; }; exec "$@"';

export interface SandboxedRunnerOptions {
  /** The bubblewrap executable (default `bwrap` on PATH). */
  bwrap?: string;
  /** The user's home, as the sandbox's environment names it (the read-only Gradle cache). */
  home: string;
  /** Whether `~/.gradle/caches` is there to read. */
  gradleCaches?: boolean;
  /**
   * A host directory the sandbox never sees, where callers make a directory for one command
   * (test reports) and pass it in `CommandSpec.writablePaths`.
   */
  scratchDir?: string;
  /** Variables kept although they name a socket: one the caller mounted in on purpose (see `sandboxEnv`). */
  keepVariables?: readonly string[];
}

/**
 * A process runner whose commands run under bubblewrap (`bwrap`) in `layout` (see `bwrapArgs`
 * for the mounts and namespaces, `sandboxEnv` for the environment), with the limits applied
 * inside through `prlimit` and watched from outside (`startWatchdog`). A command stopped at a
 * limit ends killed, with the reason at the end of its output. Timeouts and aborts kill bwrap,
 * and the sandbox's PID namespace with it: every process the command started ends too, also one
 * that made its own session or group.
 */
export function createSandboxedRunner(
  inner: ProcessRunner,
  layout: SandboxLayout,
  options: SandboxedRunnerOptions,
): ProcessRunner {
  const bwrap = options.bwrap ?? 'bwrap';
  return {
    ...(options.scratchDir === undefined ? {} : { scratchDir: options.scratchDir }),
    async run(spec: CommandSpec) {
      const useShell = spec.shell ?? spec.args === undefined;
      const argv = useShell ? ['/bin/sh', '-c', spec.command] : [spec.command, ...(spec.args ?? [])];
      const base = spec.extendEnv === false ? { ...spec.env } : { ...process.env, ...spec.env };
      let watchdog: Watchdog | undefined;
      const args = bwrapArgs(layout, {
        argv,
        cwd: spec.cwd,
        ...(spec.writablePaths ? { writablePaths: spec.writablePaths } : {}),
      });
      const cgroup = commandCgroup(layout);
      // bwrap joins the command's cgroup before it starts anything: everything the command forks is counted.
      const launch = cgroup
        ? { command: '/bin/sh', args: ['-c', JOIN_CGROUP, cgroup.procs, bwrap, ...args] }
        : { command: bwrap, args };
      const result = await inner.run({
        ...spec,
        ...launch,
        shell: false,
        env: sandboxEnv(
          base,
          options.home,
          options.gradleCaches ?? false,
          new Set(options.keepVariables ?? []),
          layout.network,
        ),
        extendEnv: false,
        onSpawn(pid) {
          watchdog = startWatchdog(pid, {
            // Without a cgroup, root's processes have no other limit: looked at more often.
            intervalMs: cgroup === undefined && process.getuid?.() === 0 ? 100 : 500,
            processes: layout.limits.processes,
            memoryBytes: layout.limits.memoryBytes,
            minFreeDiskBytes: layout.limits.minFreeDiskBytes,
            disks: layout.watchDisks,
            ...(cgroup === undefined ? {} : { members: cgroup.procs }),
          });
          spec.onSpawn?.(pid);
        },
      });
      watchdog?.stop();
      cgroup?.remove();
      const stopped = watchdog?.reason;
      if (stopped !== undefined) return withNote(result, `The sandbox stopped the command: ${stopped}.`);
      // bwrap exits 1 when it cannot start the command; the plain runner says 127, as a shell does.
      const notStarted = result.exitCode === 1 && result.stdout === '' && /^bwrap: execvp /m.test(result.stderr);
      return notStarted ? { ...result, exitCode: 127 } : result;
    },
  };
}

/** The command's own pids cgroup, when the layout has a place for one and it can still be made there. */
function commandCgroup(layout: SandboxLayout): CommandCgroup | undefined {
  if (layout.pidsCgroup === undefined) return undefined;
  try {
    return createCommandCgroup(layout.pidsCgroup, layout.limits.processes);
  } catch {
    // Gone meanwhile: the watchdog counts the processes instead.
    return undefined;
  }
}

function withNote(result: CommandResult, note: string): CommandResult {
  const line = `${result.output === '' || result.output.endsWith('\n') ? '' : '\n'}${note}\n`;
  return { ...result, stderr: `${result.stderr}${line}`, output: `${result.output}${line}` };
}

/** Why bubblewrap cannot make `layout`'s sandbox here (its first line of error), or undefined when it can. */
export async function sandboxProblem(
  runner: ProcessRunner,
  layout: SandboxLayout,
  bwrap = 'bwrap',
): Promise<string | undefined> {
  const probe = await runner.run({
    command: bwrap,
    args: bwrapArgs(layout, { argv: ['/bin/true'], cwd: '/' }),
    shell: false,
    cwd: '/',
    timeoutMs: 10_000,
  });
  if (probe.exitCode === 0) return undefined;
  const said = probe.output.trim().split('\n')[0] ?? '';
  return said === '' ? `bwrap exited ${String(probe.exitCode ?? probe.signal)}` : said;
}
