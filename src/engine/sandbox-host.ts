/**
 * The edge of the sandbox: what is on this host (homes, toolchains, the git directory, secret
 * files), the run's private area on disk, and the layout `planSandbox` makes of them.
 */
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  constants,
  existsSync,
  lstatSync,
  readFileSync,
  readdirSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { chmod, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { homedir, release, tmpdir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import type { ResolvedConfig } from '../config/resolved.js';
import { nprocLimit } from '../process/sandbox-args.js';
import { findPidsCgroup } from '../process/sandbox-cgroup.js';
import type { SandboxLayout, SandboxMount } from '../process/sandbox.js';
import { runCommand } from '../process/runner.js';
import { sanitizeGitConfig } from './sandbox-git-config.js';
import { planSandbox, type HostPath } from './sandbox-plan.js';
import { SHARED_DIRECTORIES } from './worktree-setup.js';

/** Shared places hidden from every command: other users' homes, mounted media, services' sockets. */
const SYSTEM_PLACES = ['/root', '/home', '/mnt', '/media', '/run', '/var/run', '/var/tmp'];

/** Toolchain homes in the user's home, seen read-only when they exist. */
const TOOLCHAIN_HOMES = [
  '.rustup',
  '.cargo',
  '.pyenv',
  '.nvm',
  '.volta',
  '.bun',
  '.deno',
  '.asdf',
  'go',
  '.m2/repository',
  '.gradle/caches',
  '.gradle/wrapper',
];

/** Files of the system never seen (password hashes, the host's SSH keys). */
const SYSTEM_SECRETS = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/security/opasswd',
  '/etc/sudoers',
];

/** Credential files a toolchain directory may hold (`~/.cargo/credentials.toml`): hidden in every directory shown. */
const CREDENTIAL_NAMES = [
  'credentials',
  'credentials.toml',
  '.credentials.json',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.git-credentials',
  'gradle.properties',
];

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** A directory this user can enter (bubblewrap mounts only what it can reach). */
function enterable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK | constants.X_OK);
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function hostPath(path: string): HostPath | undefined {
  const resolved = real(path);
  return resolved === undefined ? undefined : { path, real: resolved };
}

/**
 * Whether `dir` is a real folder of links as `shareNodeModules` makes (links, and `.bin` and
 * scope folders), not one the project tracks (package folders, files).
 */
function isFolderOfLinks(dir: string): boolean {
  try {
    if (!lstatSync(dir).isDirectory()) return false;
    return readdirSync(dir, { withFileTypes: true }).every(
      (entry) =>
        entry.isSymbolicLink() || (entry.isDirectory() && (entry.name === '.bin' || entry.name.startsWith('@'))),
    );
  } catch {
    return false;
  }
}

function present(paths: readonly (HostPath | undefined)[]): HostPath[] {
  return paths.filter((path): path is HostPath => path !== undefined);
}

/** The git directory a worktree's `.git` file leads to, and its common directory. */
function gitCommonDirOf(worktree: string): string | undefined {
  try {
    const text = readFileSync(join(worktree, '.git'), 'utf8');
    const gitDir = /^gitdir: (.+)$/m.exec(text)?.[1]?.trim();
    if (gitDir === undefined) return undefined;
    const own = resolve(worktree, gitDir);
    const common = existsSync(join(own, 'commondir')) ? readFileSync(join(own, 'commondir'), 'utf8').trim() : '.';
    return resolve(own, common);
  } catch {
    // A directory (a repository of its own, inside the worktree) or none.
    return undefined;
  }
}

/** The interpreter directory of a virtual environment (`home = ...` of `pyvenv.cfg`). */
function venvInterpreter(dependency: string): string | undefined {
  try {
    const home = /^home\s*=\s*(.+)$/m.exec(readFileSync(join(dependency, 'pyvenv.cfg'), 'utf8'))?.[1]?.trim();
    return home !== undefined && isAbsolute(home) ? home : undefined;
  } catch {
    return undefined;
  }
}

function findProgram(name: string, path: string | undefined): string | undefined {
  for (const dir of ['/usr/bin', '/bin', ...(path ?? '').split(delimiter)]) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** How many processes the real user has (RLIMIT_NPROC counted them across the host before Linux 5.14). */
function processesOfUser(): number {
  const uid = process.getuid?.() ?? 0;
  let count = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (statSync(`/proc/${name}`).uid === uid) count += 1;
    } catch {
      // Gone.
    }
  }
  return count;
}

/** A run's private area on disk: its `/tmp`, `/dev/shm`, scratch for per-command directories. */
export interface SandboxArea {
  root: string;
  tmp: string;
  shm: string;
  empty: string;
  scratch: string;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Makes `$RATCHET_HOME/tmp/<name>-<random>.<pid>` (0700) with its parts, after removing the areas whose
 * process is gone (killed runs). Nothing a sandbox runs can see the area itself: `$RATCHET_HOME`
 * is hidden, only its `tmp` (as `/tmp`) and `shm` are mounted, and each scratch directory only
 * into the one command that gets it.
 */
export async function createSandboxArea(ratchetHome: string, name: string): Promise<SandboxArea> {
  const parent = join(ratchetHome, 'tmp');
  await mkdir(parent, { recursive: true, mode: 0o700 });
  for (const entry of await readdir(parent)) {
    const pid = Number(entry.slice(entry.lastIndexOf('.') + 1));
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !isAlive(pid))
      await rm(join(parent, entry), { recursive: true, force: true });
  }
  // Unique: a process may make more than one sandbox for a run (a refused start, then another).
  const root = join(
    realpathSync(parent),
    `${name.replace(/[^\w-]/g, '_')}-${randomBytes(4).toString('hex')}.${process.pid}`,
  );
  await mkdir(root, { recursive: true, mode: 0o700 });
  await chmod(root, 0o700);
  const area = {
    root,
    tmp: join(root, 'tmp'),
    shm: join(root, 'shm'),
    empty: join(root, 'empty'),
    scratch: join(root, 'scratch'),
  };
  for (const dir of [area.tmp, area.shm, area.scratch]) await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(area.empty, '', { mode: 0o400 });
  return area;
}

export async function removeSandboxArea(area: SandboxArea): Promise<void> {
  // Most areas go at once. Git and Go make read-only directories, whose files an ordinary user
  // cannot remove: only then is everything made writable (a process per area costs a pool that
  // ends a task space every few seconds), and removed again.
  const removed = await rm(area.root, { recursive: true, force: true }).then(
    () => true,
    () => false,
  );
  if (removed) return;
  await runCommand({ command: 'chmod', args: ['-R', 'u+rwX', area.root], shell: false, cwd: '/', timeoutMs: 60_000 });
  await rm(area.root, { recursive: true, force: true });
}

export interface SandboxPlaces {
  /** The user's checkouts (never seen). */
  protect: readonly string[];
  worktree: string;
  /** The checkout the worktree's dependency folders are linked from. */
  dependenciesOf: string;
  /** More mounts (the Claude Code CLI's). */
  extraMounts?: readonly SandboxMount[];
  /** Programs to run that PATH may not name (the Claude Code CLI), shown read-only with their folder. */
  programs?: readonly string[];
  /** The host's network for these commands (default `[bash] network`). */
  network?: boolean;
}

/** The user's home, as the sandbox's environment names it. */
export function userHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
}

/**
 * The sandbox of a run: what `planSandbox` makes of this host, `config` (network, limits,
 * `$RATCHET_HOME`) and `places`, with its private area `area`. Writes the sanitized copy of the
 * git configuration into the area.
 */
export async function sandboxLayout(
  config: ResolvedConfig,
  places: SandboxPlaces,
  area: SandboxArea,
): Promise<SandboxLayout> {
  const homes = [...new Set([homedir(), userHome()].map(real))].filter(
    (home): home is string => home !== undefined && home !== '/',
  );
  const system = SYSTEM_PLACES.filter((place) => enterable(place) || existsSync(place))
    .map((place) => ({ place, resolved: real(place) }))
    // `/var/run` is usually a link to `/run`: hidden once.
    .filter(({ place, resolved }) => resolved === place)
    .map(({ place }) => place);
  const hostTmp = [...new Set(['/tmp', tmpdir()].map(real))].filter((path): path is string => path !== undefined);
  const dependencies = present(
    SHARED_DIRECTORIES.map((name) => join(places.dependenciesOf, name))
      .filter((path) => enterable(path))
      .map(hostPath),
  );
  const programDirs = present(
    [
      ...(process.env.PATH ?? '').split(delimiter),
      ...dependencies.map((dependency) => venvInterpreter(dependency.real)),
      ...(places.programs ?? []).map((program) => programFolder(program)),
    ]
      .filter((dir): dir is string => dir !== undefined && isAbsolute(dir) && enterable(dir))
      .map(hostPath),
  );
  const toolchainHomes = present(
    homes
      .flatMap((home) => TOOLCHAIN_HOMES.map((name) => join(home, name)))
      .filter(enterable)
      .map(hostPath),
  );
  const localPython = homes.flatMap((home) => {
    const lib = join(home, '.local', 'lib');
    return enterable(lib)
      ? readdirSync(lib)
          .filter((name) => name.startsWith('python'))
          .map((name) => join(lib, name))
      : [];
  });
  toolchainHomes.push(...present(localPython.filter(enterable).map(hostPath)));
  // Where a shown toolchain could keep credentials: its folder, and the parent of a `bin` (`~/.cargo`).
  const shownDirs = [...programDirs, ...toolchainHomes]
    .flatMap((dir) => [dir.real, dirname(dir.real)])
    .filter((dir) => dir !== '/' && !homes.includes(dir) && !system.includes(dir));
  const secretFiles = [
    ...SYSTEM_SECRETS,
    ...readdirSafe('/etc/ssh')
      .filter((name) => /^ssh_host_.*_key$/.test(name))
      .map((name) => join('/etc/ssh', name)),
    ...shownDirs.flatMap((dir) => CREDENTIAL_NAMES.map((name) => join(dir, name))),
  ].filter((file) => isFile(file));
  let gitCommonDir: HostPath | undefined;
  let gitConfigCopy: string | undefined;
  const common = gitCommonDirOf(places.worktree);
  if (common !== undefined && enterable(common)) {
    gitCommonDir = hostPath(common);
    gitConfigCopy = join(area.root, 'git-config');
    await writeFile(gitConfigCopy, sanitizeGitConfig(await gitConfigListing(join(common, 'config'))), { mode: 0o400 });
  }
  const limits = config.bash.limits;
  const mib = 2 ** 20;
  const prlimit = findProgram('prlimit', process.env.PATH);
  const pidsCgroup = findPidsCgroup();
  return planSandbox({
    homes,
    system,
    hostTmp,
    protect: present(places.protect.map(hostPath)),
    ratchetHome: hostPath(config.home) ?? { path: config.home, real: config.home },
    worktree: hostPath(places.worktree) ?? { path: places.worktree, real: places.worktree },
    ...(gitCommonDir ? { gitCommonDir } : {}),
    ...(gitConfigCopy ? { gitConfigCopy } : {}),
    worktreeGit: existsSync(join(places.worktree, '.git')),
    dependencies,
    sharedFolders: present(
      SHARED_DIRECTORIES.filter(
        (name) => existsSync(join(places.dependenciesOf, name)) && isFolderOfLinks(join(places.worktree, name)),
      ).map((name) => hostPath(join(places.worktree, name))),
    ),
    programDirs,
    toolchainHomes,
    secretFiles,
    extraMounts: places.extraMounts ?? [],
    area,
    network: places.network ?? config.bash.network === 'on',
    limits: {
      processes: limits.processes,
      fileSizeBytes: limits.fileSizeMb * mib,
      memoryBytes: limits.memoryMb * mib,
      minFreeDiskBytes: limits.minFreeDiskMb * mib,
    },
    nproc: nprocLimit(limits.processes, release(), processesOfUser),
    ...(pidsCgroup === undefined ? {} : { pidsCgroup }),
    ...(prlimit === undefined ? {} : { prlimit }),
  });
}

/** The folder to show for a program: the outermost `node_modules` holding it (its package and dependencies), else its own folder. */
function programFolder(program: string): string | undefined {
  if (!isAbsolute(program)) return undefined;
  const marker = '/node_modules/';
  const at = program.indexOf(marker);
  if (at >= 0) return program.slice(0, at + marker.length - 1);
  return dirname(real(program) ?? program);
}

/**
 * Read-only mounts that show `program` (an absolute path; a bare name is found on PATH, whose
 * toolchains are shown already) and what it needs beside it, wherever it lies.
 */
export function programMounts(program: string): SandboxMount[] {
  const folder = programFolder(program);
  if (folder === undefined || !enterable(folder)) return [];
  const resolved = real(folder) ?? folder;
  const mounts: SandboxMount[] = [{ path: resolved, writable: false }];
  if (resolved !== folder) mounts.push({ path: folder, source: resolved, writable: false });
  // `node_modules/.bin/x` links into the package: its target's folder, when that lies elsewhere.
  const target = real(program);
  const targetFolder = target === undefined ? undefined : programFolder(target);
  if (targetFolder !== undefined && targetFolder !== resolved && enterable(targetFolder))
    mounts.push({ path: targetFolder, writable: false });
  return mounts;
}

/**
 * Read-only mounts of the files a command line names by absolute path (the system prompt file
 * Ratchet hands the Claude Code CLI, kept with the run's files in the hidden checkout). Only for
 * command lines Ratchet writes itself, never the model's.
 */
export function argumentFileMounts(args: readonly string[]): SandboxMount[] {
  const files = args
    .map((arg) => (arg.startsWith('--') && arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : arg))
    .filter((arg) => isAbsolute(arg) && isFile(arg));
  return [...new Set(files)].flatMap((file) => {
    const resolved = real(file) ?? file;
    return resolved === file
      ? [{ path: file, writable: false }]
      : [
          { path: resolved, writable: false },
          { path: file, source: resolved, writable: false },
        ];
  });
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Listings by the text they list: every task of a pool copies the same repository's
 * configuration into its sandbox, and the listing is a function of that text alone. A few are
 * kept (a changed configuration makes a new entry; the oldest goes).
 */
const listings = new Map<string, Promise<string>>();
const KEPT_LISTINGS = 4;

/**
 * `git config --list -z` of one file, without its includes (only reads it: runs nothing). Git
 * reads the text read here, from stdin: the listing is of exactly the text it is kept under.
 */
async function gitConfigListing(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return '';
  const known = listings.get(text);
  if (known !== undefined) return known;
  const listing = runCommand({
    command: 'git',
    args: ['config', '--file', '-', '--no-includes', '--list', '-z'],
    shell: false,
    cwd: '/',
    timeoutMs: 10_000,
    input: text,
    env: { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  }).then((result) => (result.exitCode === 0 ? result.stdout : ''));
  listings.set(text, listing);
  // A failed run is not kept.
  listing.catch(() => listings.delete(text));
  for (const oldest of listings.keys()) if (listings.size > KEPT_LISTINGS) listings.delete(oldest);
  return listing;
}
