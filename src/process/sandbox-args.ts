/**
 * The sandbox as data, and the bubblewrap command line it becomes: pure functions over a
 * `SandboxLayout` (made by the engine from what it found on the host, see
 * `engine/sandbox-plan.ts`), so what a command can see is decided in one place and unit-tested.
 */
import { isAbsolute, relative, sep } from 'node:path';

/** One bind mount of the sandbox: `source` on the host (default `path`) seen at `path`. */
export interface SandboxMount {
  path: string;
  writable: boolean;
  source?: string;
}

/** Limits of one sandboxed command (see `[bash]` in the configuration). */
export interface SandboxLimits {
  /** Processes and threads at once (RLIMIT_NPROC, and the watchdog's count of the sandbox's processes). */
  processes: number;
  /** Largest file a process may write (RLIMIT_FSIZE). */
  fileSizeBytes: number;
  /** Data size of each process (RLIMIT_DATA), and the resident memory of all of them (watchdog). */
  memoryBytes: number;
  /** The command is stopped when free space on a watched disk falls below this (0: never). */
  minFreeDiskBytes: number;
}

export interface SandboxLayout {
  /** Directories hidden behind an empty, read-only tmpfs (the user's home, the checkout...). */
  hide: readonly string[];
  /** Files hidden behind an empty read-only file (`/etc/shadow`, `~/.cargo/credentials.toml`...). */
  hideFiles: readonly string[];
  /** What is seen again, on top of the hidden directories (toolchains, dependencies, the worktree). */
  mounts: readonly SandboxMount[];
  /** The host directory seen as `/tmp` (private to the run, writable). */
  tmp: string;
  /** The host directory seen as `/dev/shm` (on disk, where the disk floor watches it). */
  shm: string;
  /** An empty host file (bound over hidden files). */
  empty: string;
  /** The host's network (else only a loopback of its own). */
  network: boolean;
  limits: SandboxLimits;
  /** util-linux `prlimit`, as seen inside the sandbox; without it only the watchdog limits. */
  prlimit?: string;
  /** Paths whose file system's free space the watchdog checks. */
  watchDisks: readonly string[];
  /** The value of RLIMIT_NPROC to set (see `nprocLimit`). */
  nproc: number;
  /** A pids cgroup to make each command's own cgroup in (see `findPidsCgroup`), where one can be made. */
  pidsCgroup?: string;
}

/** The command to run in the sandbox, and the writable paths of that one command (report directories). */
export interface SandboxCommand {
  argv: readonly string[];
  cwd: string;
  writablePaths?: readonly string[];
}

/**
 * Namespaces and privileges: a user namespace without any capability (root outside included:
 * nothing can remount or mount), no nested user namespaces, its own PIDs (another process's
 * `/proc/<pid>/root` would lead out), IPC, host name and cgroup view, a new session (no TIOCSTI
 * into a terminal), and the sandbox dies with bwrap: a killed bwrap takes PID 1 of the namespace,
 * and with it every process the command started, whatever session or group they made.
 */
const ISOLATION = [
  '--unshare-user',
  '--disable-userns',
  '--cap-drop',
  'ALL',
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-uts',
  '--unshare-cgroup-try',
  '--new-session',
  '--die-with-parent',
];

type Step =
  | { kind: 'hide'; path: string }
  | { kind: 'tmp'; path: string }
  | { kind: 'mount'; mount: SandboxMount }
  | { kind: 'hide-file'; path: string };

/** At the same path a later kind wins: a mount shows what a hide hid, a hidden file stays hidden. */
const KIND_ORDER: Record<Step['kind'], number> = { hide: 0, tmp: 1, mount: 2, 'hide-file': 3 };

function depth(path: string): number {
  return path.split(sep).filter((part) => part !== '').length;
}

function stepPath(step: Step): string {
  return step.kind === 'mount' ? step.mount.path : step.path;
}

/** Whether `path` is `root` or lies inside it. */
export function isWithin(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The bubblewrap arguments that run `command` in `layout`. The file system is the host's,
 * read-only, with a fresh `/dev` and `/proc`; then, shallowest path first (so a deeper mount
 * always lands on top of a shallower one, whatever the kinds): the hidden directories, the
 * private `/tmp`, the mounts, the per-command writable paths and the hidden files. The tmpfs
 * of each hidden directory is made read-only last, once the mount points inside it exist, so
 * nothing can be written there (a tmpfs lives in memory, outside every disk limit). Limits go
 * through `prlimit` inside the sandbox, where they cannot be raised again (no capabilities).
 */
export function bwrapArgs(layout: SandboxLayout, command: SandboxCommand): string[] {
  const steps: Step[] = [
    ...layout.hide.map((path): Step => ({ kind: 'hide', path })),
    { kind: 'tmp', path: '/tmp' },
    ...layout.mounts.map((mount): Step => ({ kind: 'mount', mount })),
    ...(command.writablePaths ?? []).map((path): Step => ({ kind: 'mount', mount: { path, writable: true } })),
    ...layout.hideFiles.map((path): Step => ({ kind: 'hide-file', path })),
  ];
  const ordered = steps
    .map((step, index) => ({ step, index }))
    .sort(
      (a, b) =>
        depth(stepPath(a.step)) - depth(stepPath(b.step)) ||
        KIND_ORDER[a.step.kind] - KIND_ORDER[b.step.kind] ||
        a.index - b.index,
    )
    .map(({ step }) => step);
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const step of ordered) {
    if (step.kind === 'hide') args.push('--tmpfs', step.path);
    else if (step.kind === 'tmp') args.push('--bind', layout.tmp, '/tmp');
    else if (step.kind === 'hide-file') args.push('--ro-bind', layout.empty, step.path);
    else {
      const { mount } = step;
      args.push(mount.writable ? '--bind' : '--ro-bind', mount.source ?? mount.path, mount.path);
    }
  }
  // POSIX shared memory and semaphores (Python's multiprocessing) work, on disk; nothing else in /dev is writable.
  args.push('--bind', layout.shm, '/dev/shm', '--remount-ro', '/dev');
  // Not where a mount went on top of the tmpfs: that would remount the mount.
  const mounted = new Set(layout.mounts.map((mount) => mount.path));
  for (const path of new Set(layout.hide)) if (!mounted.has(path)) args.push('--remount-ro', path);
  args.push(...ISOLATION);
  if (!layout.network) args.push('--unshare-net');
  args.push('--chdir', command.cwd, '--', ...limitPrefix(layout), ...command.argv);
  return args;
}

/** `prlimit` before the command: soft and hard limits alike, which a process without capabilities cannot raise. */
function limitPrefix(layout: SandboxLayout): string[] {
  if (layout.prlimit === undefined) return [];
  const { limits } = layout;
  return [
    layout.prlimit,
    `--nproc=${layout.nproc}`,
    `--fsize=${limits.fileSizeBytes}`,
    `--data=${limits.memoryBytes}`,
    // No core dumps of a process the file size limit stopped (they would land in the worktree).
    '--core=0',
    '--',
  ];
}

/**
 * RLIMIT_NPROC for `processes` at once. It counts the tasks of the real user: since Linux 5.14
 * per user namespace (the sandbox's own are all that count), before that across the host, where
 * the user's other processes (`hostCount()`, asked only then) already use some. For root it is never enforced (the
 * kernel exempts uid 0 even in a user namespace): the watchdog counts the sandbox's processes.
 */
export function nprocLimit(processes: number, kernelRelease: string, hostCount: () => number): number {
  const [major = 0, minor = 0] = kernelRelease.split(/[.-]/).map((part) => Number.parseInt(part, 10));
  const perNamespace = major > 5 || (major === 5 && minor >= 14);
  // Counted only where it counts: a walk over every process of the host, once per sandbox.
  return perNamespace ? processes : processes + hostCount();
}

/**
 * Variables that lead to a socket or a service outside the sandbox (an SSH or GPG agent, the
 * session bus, a display, a terminal multiplexer, an editor's IPC): never passed in. Their
 * sockets are hidden too (`/run`, `/tmp`), this keeps programs from trying.
 */
const OUTSIDE_SERVICES = new Set([
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'SSH_ASKPASS',
  'GIT_ASKPASS',
  'SUDO_ASKPASS',
  'GPG_AGENT_INFO',
  'GNOME_KEYRING_CONTROL',
  'DBUS_SESSION_BUS_ADDRESS',
  'DBUS_SYSTEM_BUS_ADDRESS',
  'XDG_RUNTIME_DIR',
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'XAUTHORITY',
  'DOCKER_HOST',
  'KRB5CCNAME',
  'PULSE_SERVER',
  'TMUX',
  'TMUX_PANE',
  'STY',
  'KITTY_LISTEN_ON',
  'VSCODE_IPC_HOOK_CLI',
  'VSCODE_GIT_IPC_HANDLE',
  'TMP',
  'TEMP',
]);

function leadsOutside(name: string, keep: ReadonlySet<string>): boolean {
  return !keep.has(name) && (OUTSIDE_SERVICES.has(name) || /_(?:SOCK|SOCKET)$/.test(name));
}

/**
 * The environment inside the sandbox: `env` without the variables that lead outside it, with the
 * temporary directory and the caches and data directories of the usual tools in the private
 * `/tmp` (the user's own are hidden or read-only: a cache written from the sandbox would be read
 * by the user's next, unsandboxed build). `home` is the user's home, for the read-only Gradle cache.
 * `keep` names variables that lead to a socket the caller mounted in on purpose (Ratchet's own
 * API proxy for the Claude Code CLI). Without `network`, cargo and go work offline from the caches
 * the user filled (`cargo fetch`, `go mod download`) unless the environment says otherwise: cargo
 * resolves a crate without a committed Cargo.lock from its cached index only in offline mode, and
 * both fail at once, naming the missing package, instead of on a lookup that cannot succeed.
 */
export function sandboxEnv(
  env: Readonly<Record<string, string | undefined>>,
  home: string,
  gradleCaches: boolean,
  keep: ReadonlySet<string> = new Set(),
  network = true,
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && !leadsOutside(name, keep)) result[name] = value;
  return {
    ...(network ? {} : { CARGO_NET_OFFLINE: 'true', GOPROXY: 'off' }),
    ...result,
    TMPDIR: '/tmp',
    XDG_CACHE_HOME: '/tmp/.cache',
    XDG_CONFIG_HOME: '/tmp/.config',
    XDG_DATA_HOME: '/tmp/.local/share',
    XDG_STATE_HOME: '/tmp/.local/state',
    npm_config_cache: '/tmp/.npm',
    PIP_CACHE_DIR: '/tmp/.cache/pip',
    GOCACHE: '/tmp/.cache/go-build',
    // Go would download another toolchain a go.mod asks for: never from the sandbox.
    GOTOOLCHAIN: 'local',
    GRADLE_USER_HOME: '/tmp/.gradle',
    ...(gradleCaches ? { GRADLE_RO_DEP_CACHE: `${home}/.gradle/caches` } : {}),
  };
}
