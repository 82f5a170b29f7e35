import type { CommandSpec, ProcessRunner } from './types.js';

/** Everything read-only, a fresh /dev, and a PID namespace of its own with its own /proc. */
const SANDBOX_BASE = ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-pid', '--proc', '/proc'];

/** One mount of the sandbox, applied in order: a later mount covers an earlier one. */
export interface SandboxMount {
  path: string;
  writable: boolean;
  /** What appears at `path` (default `path` itself): `/dev/null` hides a file. */
  source?: string;
}

export interface SandboxOptions {
  /**
   * Whether the command keeps the host's network (default true). False gives it a network
   * namespace of its own with only a loopback interface: nothing outside the sandbox is
   * reachable over IP, while Unix sockets in bound directories still are.
   */
  network?: boolean;
}

/**
 * A process runner whose commands run under bubblewrap (`bwrap`): the whole file system is
 * read-only except the writable mounts, so a shell command cannot change anything else (the
 * user's checkout, say) whatever it tries (`cd ..`, absolute paths, `git -C`). Its own PID
 * namespace hides every other process, whose `/proc/<pid>/root` would otherwise lead back to the
 * writable file system. The process group is kept (no `--new-session`), so timeouts still kill
 * everything the command started, and `--die-with-parent` takes the sandbox down with bwrap.
 */
export function createSandboxedRunner(
  inner: ProcessRunner,
  mounts: readonly SandboxMount[],
  bwrap = 'bwrap',
  options: SandboxOptions = {},
): ProcessRunner {
  const binds = mounts.flatMap((mount) => [
    mount.writable ? '--bind' : '--ro-bind',
    mount.source ?? mount.path,
    mount.path,
  ]);
  const network = options.network === false ? ['--unshare-net'] : [];
  return {
    async run(spec: CommandSpec) {
      const useShell = spec.shell ?? spec.args === undefined;
      const command = useShell ? ['/bin/sh', '-c', spec.command] : [spec.command, ...(spec.args ?? [])];
      const result = await inner.run({
        ...spec,
        command: bwrap,
        args: [...SANDBOX_BASE, ...network, ...binds, '--die-with-parent', '--chdir', spec.cwd, '--', ...command],
        shell: false,
      });
      // bwrap exits 1 when it cannot start the command; the plain runner says 127, as a shell does.
      const notStarted = result.exitCode === 1 && result.stdout === '' && /^bwrap: execvp /m.test(result.stderr);
      return notStarted ? { ...result, exitCode: 127 } : result;
    },
  };
}

/** Whether bubblewrap is installed and allowed to make its namespaces here (root or user namespaces). */
export async function bwrapWorks(runner: ProcessRunner, bwrap = 'bwrap'): Promise<boolean> {
  const probe = await runner.run({
    command: bwrap,
    args: [...SANDBOX_BASE, '--die-with-parent', '--', '/bin/true'],
    shell: false,
    cwd: '/',
    timeoutMs: 10_000,
  });
  return probe.exitCode === 0;
}
