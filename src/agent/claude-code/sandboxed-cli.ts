import { constants } from 'node:fs';
import { randomUUID } from 'node:crypto';
import {
  chmod,
  copyFile,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { SandboxMount } from '../../process/sandbox.js';
import type { CommandSpec, ProcessRunner } from '../../process/types.js';

/**
 * Entries of the CLI's configuration directory that are its own running state (transcripts,
 * session locks, caches, logs, history), not configuration: a call's private copy starts without
 * them. Mostly the list the CLI itself leaves out when it snapshots a host's configuration.
 */
const RUNTIME_STATE = new Set([
  '.claude.json.backup',
  'active-time.json',
  'backups',
  'cache',
  'daemon',
  'debug',
  'downloads',
  'file-history',
  'file-transfers',
  'history.jsonl',
  'ide',
  'image-cache',
  'jobs',
  'local',
  'logs',
  'paste-cache',
  'plans',
  'projects',
  'session-env',
  'sessions',
  'shell-snapshots',
  'stats-cache.json',
  'statsig',
  'tasks',
  'teams',
  'telemetry',
  'todos',
  'traces',
  'uploads',
  'usage-data',
]);

const CREDENTIALS = '.credentials.json';
const GLOBAL_CONFIG = '.claude.json';

/** Larger files of the configuration directory are linked (readable, not writable) rather than copied into every call's directory. */
const MAX_COPIED_BYTES = 4 * 1024 * 1024;

/** Where the CLI keeps what it reads and writes, for its environment (as the CLI resolves it). */
interface ClaudeConfigPaths {
  /** `$CLAUDE_CONFIG_DIR`, else `~/.claude`: settings, CLAUDE.md, agents, commands, plugins... */
  configDir: string;
  /** The global config file: `.claude.json` in `$CLAUDE_CONFIG_DIR` when set, else in `$HOME`. */
  globalConfig: string;
  /** Where `/login` keeps its tokens (`.credentials.json`): `$CLAUDE_SECURESTORAGE_CONFIG_DIR`, else the config directory. */
  credentialsDir: string;
}

function configPaths(env: Record<string, string | undefined>): ClaudeConfigPaths {
  const home = env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
  const custom =
    env.CLAUDE_CONFIG_DIR !== undefined && env.CLAUDE_CONFIG_DIR !== '' ? env.CLAUDE_CONFIG_DIR : undefined;
  const configDir = custom ?? join(home, '.claude');
  const secure = env.CLAUDE_SECURESTORAGE_CONFIG_DIR;
  return {
    configDir,
    globalConfig: join(custom ?? home, GLOBAL_CONFIG),
    credentialsDir: secure === undefined ? configDir : secure === '' ? join(home, '.claude') : secure,
  };
}

/** The path without symbolic links (bubblewrap mounts), undefined when it does not exist. */
async function existing(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

/** The text of a file the sandbox could write: only a regular file, never through a symbolic link, and small. */
async function readPlainFile(path: string): Promise<string | undefined> {
  try {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const info = await handle.stat();
      if (!info.isFile() || info.size > MAX_COPIED_BYTES) return undefined;
      return await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

/** The text of one of the user's own files, undefined when there is none. */
async function readUserFile(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Fills a call's private configuration directory: the user's configuration files copied (the CLI
 * may rewrite them there), their directories (agents, commands, skills, plugins) linked and so
 * read-only in the sandbox, the global config file and the login credentials copied. Returns the
 * credentials as copied (undefined when there are none), to tell a refresh by the CLI afterwards.
 */
async function seed(paths: ClaudeConfigPaths, dir: string): Promise<string | undefined> {
  let entries: string[] = [];
  try {
    entries = await readdir(paths.configDir);
  } catch {
    // No configuration directory yet: the CLI starts from its defaults.
  }
  for (const name of entries) {
    if (RUNTIME_STATE.has(name) || name.endsWith('.lock') || name === CREDENTIALS || name === GLOBAL_CONFIG) continue;
    const source = join(paths.configDir, name);
    try {
      const info = await stat(source);
      if (info.isFile() && info.size <= MAX_COPIED_BYTES) await copyFile(source, join(dir, name));
      else if (info.isFile() || info.isDirectory()) await symlink(source, join(dir, name));
    } catch {
      // Gone meanwhile, or unreadable: the CLI does without it.
    }
  }
  // Whatever its size (it keeps a record per project and can grow large).
  try {
    await copyFile(paths.globalConfig, join(dir, GLOBAL_CONFIG));
    await chmod(join(dir, GLOBAL_CONFIG), 0o600);
  } catch {
    // None yet: the CLI makes a fresh one in the private directory.
  }
  const credentials = await readUserFile(join(paths.credentialsDir, CREDENTIALS));
  if (credentials !== undefined) await writeFile(join(dir, CREDENTIALS), credentials, { mode: 0o600 });
  return credentials;
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/**
 * A `/login` user's tokens, refreshed by the CLI during the call, go back to where the user keeps
 * them: an OAuth refresh can retire the old refresh token, so dropping the new one would log the
 * user out. Only over the very tokens the call started from (another process may have refreshed
 * them meanwhile), only a JSON object, and through a temporary file and a rename, as the CLI does.
 */
async function keepRefreshedCredentials(
  paths: ClaudeConfigPaths,
  dir: string,
  seeded: string | undefined,
): Promise<void> {
  if (seeded === undefined) return;
  const now = await readPlainFile(join(dir, CREDENTIALS));
  if (now === undefined || now === seeded || !isJsonObject(now)) return;
  // Through a link to where the user keeps the file, if it is one.
  const target = (await existing(join(paths.credentialsDir, CREDENTIALS))) ?? join(paths.credentialsDir, CREDENTIALS);
  if ((await readUserFile(target)) !== seeded) return;
  const temporary = `${target}.ratchet-${randomUUID()}.tmp`;
  try {
    await writeFile(temporary, now, { mode: 0o600, flag: 'wx' });
    await rename(temporary, target);
  } catch {
    await rm(temporary, { force: true });
  }
}

/** A private directory this old is a leftover of a process that died mid-call (a call lasts minutes). */
const STALE_MS = 24 * 60 * 60 * 1000;

/** Removes the private directories of calls that never finished (they hold a copy of the credentials). */
async function removeStale(stateDir: string): Promise<void> {
  let names: string[] = [];
  try {
    names = await readdir(stateDir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith('config-')) continue;
    const path = join(stateDir, name);
    try {
      if (Date.now() - (await stat(path)).mtimeMs > STALE_MS) await rm(path, { recursive: true, force: true });
    } catch {
      // Removed meanwhile.
    }
  }
}

export interface SandboxedClaudeOptions {
  /**
   * A runner in the tool sandbox with these mounts added: the CLI and the tools it runs see the
   * file system as the agent's Bash does, plus its configuration.
   */
  sandbox: (mounts: readonly SandboxMount[]) => ProcessRunner;
  /** Where each call's private configuration directory is made (a place no sandbox can write). */
  stateDir: string;
}

/**
 * A runner for the Claude Code CLI inside the tool sandbox, so that its own tools (Bash, Write,
 * Edit) cannot write outside the worktree either. The CLI writes its configuration as it runs
 * (`~/.claude.json` through a temporary file renamed into `$HOME`, with a lock directory beside
 * it; session transcripts, backups and plugin state under `~/.claude`), so a read-only `$HOME`
 * and `~/.claude` would break it, and making them writable would let the agent plant settings
 * or hooks that the user's next, unsandboxed `claude` runs. Instead every call gets a private
 * configuration directory (`CLAUDE_CONFIG_DIR`, the only writable place besides the tool
 * sandbox's), seeded from the user's: settings and the global config copied, directories
 * linked read-only, login credentials copied (an API key comes through the environment). The
 * user's own configuration is mounted read-only (it may lie under a writable cache directory).
 * After the call, tokens the CLI refreshed are kept (see `keepRefreshedCredentials`) and the
 * directory is removed (one left by a process that died mid-call goes a day later). The network
 * stays reachable.
 */
export function createSandboxedClaudeRunner(options: SandboxedClaudeOptions): ProcessRunner {
  return {
    async run(spec: CommandSpec) {
      const env = spec.extendEnv === false ? { ...spec.env } : { ...process.env, ...spec.env };
      const paths = configPaths(env);
      await mkdir(options.stateDir, { recursive: true, mode: 0o700 });
      await removeStale(options.stateDir);
      const dir = await realpath(await mkdtemp(join(options.stateDir, 'config-')));
      try {
        const seeded = await seed(paths, dir);
        const readOnly: SandboxMount[] = [];
        for (const path of new Set([paths.configDir, paths.globalConfig, paths.credentialsDir])) {
          const real = await existing(path);
          if (real !== undefined) readOnly.push({ path: real, writable: false });
        }
        const sandboxed = options.sandbox([...readOnly, { path: dir, writable: true }]);
        const result = await sandboxed.run({
          ...spec,
          env: { ...env, CLAUDE_CONFIG_DIR: dir, CLAUDE_SECURESTORAGE_CONFIG_DIR: undefined },
          extendEnv: false,
        });
        await keepRefreshedCredentials(paths, dir, seeded);
        return result;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
