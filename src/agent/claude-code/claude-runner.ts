import { randomBytes, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import {
  access,
  chmod,
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import type { SandboxMount } from '../../process/sandbox.js';
import type { CommandResult, CommandSpec, ProcessRunner } from '../../process/types.js';
import { startClaudeApiProxy, upstreamUrl } from './api-proxy.js';
import { claudeEnvironment } from './claude-environment.js';
import {
  CREDENTIALS_FILE,
  GLOBAL_CONFIG_FILE,
  claudeConfigPaths,
  findClaudeCredential,
  readPlainFile,
  readUserFile,
  refreshToKeep,
  withoutGlobalConfigSecrets,
  type ClaudeConfigPaths,
  type ClaudeCredential,
} from './credentials.js';
import { CLAUDE_AUTH_HINT } from './result.js';

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

/** Larger files of the configuration directory are linked (readable, not writable) rather than copied into every call's directory. */
const MAX_COPIED_BYTES = 4 * 1024 * 1024;

/** The API the CLI talks to when neither `--base-url` nor `ANTHROPIC_BASE_URL` names one. */
const DEFAULT_API = 'https://api.anthropic.com';

/**
 * What the CLI takes for its API's base URL: the connection goes to `ANTHROPIC_UNIX_SOCKET`
 * whatever the host says, so it names none that could be reached.
 */
const SOCKET_BASE_URL = 'http://localhost';

/** Refresh a `/login` token that expires within the call's time limit plus this margin. */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;

/** How long the token refresh (one tool-less query) may take. */
const REFRESH_TIMEOUT_MS = 120_000;

/** A private directory this old is a leftover of a process that died mid-call (a call lasts minutes). */
const STALE_MS = 24 * 60 * 60 * 1000;

/** What Ratchet sets for every CLI it runs for an agent, whatever the user's environment says. */
const FIXED_SETTINGS = {
  // Nothing but the Messages API is reachable (and only through the proxy).
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  // A background Bash would outlive its time limit and hold the call open until it ends.
  CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: '1',
};

/** The path without symbolic links (bubblewrap mounts), undefined when it does not exist. */
async function existing(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

/**
 * Fills a call's private configuration directory from the user's: their configuration files
 * copied (the CLI may rewrite them there), their directories (agents, commands, skills, plugins)
 * linked and so read-only in the sandbox, the global config file copied without the credentials
 * it may hold. The login credentials are not copied (the proxy adds the access token).
 */
async function seed(paths: ClaudeConfigPaths, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let entries: string[] = [];
  try {
    entries = await readdir(paths.configDir);
  } catch {
    // No configuration directory yet: the CLI starts from its defaults.
  }
  for (const name of entries) {
    if (RUNTIME_STATE.has(name) || name.endsWith('.lock') || name === CREDENTIALS_FILE || name === GLOBAL_CONFIG_FILE)
      continue;
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
  const global = await readUserFile(paths.globalConfig);
  const copy = global === undefined ? undefined : withoutGlobalConfigSecrets(global);
  // None yet (or not JSON): the CLI makes a fresh one in the private directory.
  if (copy !== undefined) await writeFile(join(dir, GLOBAL_CONFIG_FILE), copy, { mode: 0o600 });
}

/** Removes the private directories of calls that never finished (a refresh's holds a copy of the credentials). */
async function removeStale(stateDir: string, now: number): Promise<void> {
  let names: string[] = [];
  try {
    names = await readdir(stateDir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!/^(config|call|refresh)-/.test(name)) continue;
    const path = join(stateDir, name);
    try {
      if (now - (await stat(path)).mtimeMs > STALE_MS) await rm(path, { recursive: true, force: true });
    } catch {
      // Removed meanwhile.
    }
  }
}

/** The executable `command` names: a path, or a name looked up on `PATH`. */
async function executablePath(command: string, path: string | undefined): Promise<string | undefined> {
  const candidates = command.includes('/')
    ? [command]
    : (path ?? '').split(delimiter).flatMap((dir) => (isAbsolute(dir) ? [join(dir, command)] : []));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return await realpath(candidate);
    } catch {
      // Not there: the next one.
    }
  }
  return undefined;
}

/**
 * A runner in the tool sandbox (the CLI and the tools it runs see the file system as the agent's
 * Bash does) with these mounts added and this network setting.
 */
export type ClaudeSandbox = (extra: {
  mounts: readonly SandboxMount[];
  network: boolean;
  /** Variables the sandbox must keep although they name a socket: the API proxy's. */
  keepVariables?: readonly string[];
}) => ProcessRunner;

export interface ClaudeRunnerOptions {
  /** Runs the CLI itself when there is no sandbox. */
  runner: ProcessRunner;
  /** The tool sandbox. Absent: no sandbox (the user opted out with `[bash] sandbox = "off"`). */
  sandbox?: ClaudeSandbox;
  /** Where each call's private configuration directory is made (a place no sandbox can write). */
  stateDir: string;
  /** Variables the CLI gets besides the allowlist (`[bash] env`). */
  passEnv?: readonly string[];
  /** Milliseconds clock (default `Date.now`). */
  now?: () => number;
}

/**
 * A runner for the Claude Code CLI as Ratchet runs it for an agent (a stage, a refactor role,
 * the authentication check), whose own tools (Bash, Write, Edit, Read) are the agent's:
 *
 * - **Sandbox.** The CLI runs inside the tool sandbox, with no network of its own: a network
 *   namespace with only loopback, so its tools reach nothing over IP. The user's Claude Code
 *   configuration is read-only there, and their login tokens and global config (`.credentials.json`,
 *   `.claude.json`) read as empty files.
 * - **Credentials.** The CLI's credential (see `findClaudeCredential`) stays in Ratchet's
 *   process: a per-call API proxy (`api-proxy.ts`) on a Unix socket, in a directory bound
 *   read-only into the sandbox (`ANTHROPIC_UNIX_SOCKET`), forwards the Messages API calls to the
 *   real base URL (`ANTHROPIC_BASE_URL`, else the Anthropic API) and adds the credential itself.
 *   The CLI presents a random placeholder the proxy accepts for this call only, received on
 *   descriptor 3 (`CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR`; the CLI reads it once and closes it) or,
 *   for claude.ai logins, as `CLAUDE_CODE_OAUTH_TOKEN` (the CLI takes an OAuth token from nowhere
 *   else when it talks through a socket).
 * - **Environment.** An allowlist (`claudeEnvironment`), plus what Ratchet sets: the socket, the
 *   private configuration directory, no background Bash, no traffic but the API.
 * - **Configuration.** Every call gets a private configuration directory (`CLAUDE_CONFIG_DIR`,
 *   the only writable place besides the tool sandbox's), seeded from the user's: files copied,
 *   directories linked read-only, the global config without its credentials, no login tokens.
 *   It is removed afterwards (one left by a process that died mid-call goes a day later).
 * - **Token refresh.** A `/login` access token that would expire before the call could end is
 *   refreshed first, by a CLI call with no tools at all in an empty directory (sandboxed, with
 *   network, with a private copy of the tokens), and the refreshed tokens go back to the user's
 *   file only when `refreshToKeep` accepts them.
 *
 * Without credentials it can pass (an `apiKeyHelper`, Bedrock, Vertex), the call fails with
 * `auth` before the CLI starts.
 */
export function createClaudeRunner(options: ClaudeRunnerOptions): ProcessRunner {
  const now = options.now ?? Date.now;
  return {
    async run(spec: CommandSpec): Promise<CommandResult> {
      const env = spec.extendEnv === false ? { ...spec.env } : { ...process.env, ...spec.env };
      const paths = claudeConfigPaths(env);
      await mkdir(options.stateDir, { recursive: true, mode: 0o700 });
      await removeStale(options.stateDir, now());
      let credential = await findClaudeCredential(env, paths);
      const login = credential?.kind === 'oauth' ? credential.login : undefined;
      if (login?.expiresAt !== undefined && login.expiresAt - now() < (spec.timeoutMs ?? 0) + REFRESH_MARGIN_MS) {
        await refreshLogin(options, spec, env, paths, login.file, now);
        credential = await findClaudeCredential(env, paths);
      }
      if (credential === undefined) throw noCredentials();
      const upstream = upstreamUrl(env.ANTHROPIC_BASE_URL?.trim() || DEFAULT_API).href;

      const callDir = await realpath(await mkdtemp(join(options.stateDir, 'call-')));
      // Short, for the 108-byte limit of a socket path; private to Ratchet's user.
      const apiDir = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-claude-api-')));
      try {
        const configDir = join(callDir, 'config');
        await seed(paths, configDir);
        const token = `ratchet-proxy-${randomBytes(24).toString('hex')}`;
        const socketPath = join(apiDir, 'api.sock');
        const proxy = await startClaudeApiProxy({
          socketPath,
          upstream,
          credential: { header: credential.kind === 'api-key' ? 'x-api-key' : 'bearer', value: credential.value },
          token,
        });
        try {
          const runner = options.sandbox
            ? options.sandbox({
                mounts: [
                  ...(await userConfigMounts(paths, spec.command, env.PATH)),
                  { path: configDir, writable: true },
                  { path: apiDir, writable: false },
                ],
                network: false,
                keepVariables: ['ANTHROPIC_UNIX_SOCKET'],
              })
            : options.runner;
          const { descriptorInputs: _ignored, ...rest } = spec;
          return await runner.run({
            ...rest,
            env: {
              ...claudeEnvironment(env, options.passEnv),
              ...FIXED_SETTINGS,
              CLAUDE_CONFIG_DIR: configDir,
              ANTHROPIC_UNIX_SOCKET: socketPath,
              ANTHROPIC_BASE_URL: SOCKET_BASE_URL,
              ...placeholderEnv(credential, token),
            },
            extendEnv: false,
            ...(credential.kind === 'oauth' ? {} : { descriptorInputs: [`${token}\n`] }),
          });
        } finally {
          await proxy.close();
        }
      } finally {
        await rm(callDir, { recursive: true, force: true });
        await rm(apiDir, { recursive: true, force: true });
      }
    },
  };
}

/** How the CLI learns it is signed in: the placeholder on descriptor 3, or as its OAuth token. */
function placeholderEnv(credential: ClaudeCredential, token: string): Record<string, string> {
  return credential.kind === 'oauth'
    ? { CLAUDE_CODE_OAUTH_TOKEN: token }
    : { CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR: '3' };
}

function noCredentials(): RatchetError {
  return new RatchetError(
    'auth',
    'Claude Code is not authenticated: no credentials Ratchet can pass to it (Ratchet runs it without network access and adds the credentials in its own API proxy).',
    { hint: `${CLAUDE_AUTH_HINT} (An apiKeyHelper, Bedrock or Vertex cannot be used with --provider claude-code.)` },
  );
}

/**
 * The user's Claude Code configuration, read-only in the sandbox (it may lie under a writable
 * cache directory), with the login tokens and the global config hidden (they read as empty), and
 * the CLI's own executable visible whatever the mounts hide.
 */
async function userConfigMounts(
  paths: ClaudeConfigPaths,
  command: string,
  path: string | undefined,
): Promise<SandboxMount[]> {
  const mounts: SandboxMount[] = [];
  for (const dir of new Set([paths.configDir, paths.credentialsDir])) {
    const real = await existing(dir);
    if (real !== undefined) mounts.push({ path: real, writable: false });
  }
  for (const file of [join(paths.credentialsDir, CREDENTIALS_FILE), paths.globalConfig]) {
    const real = await existing(file);
    if (real !== undefined && (await stat(real)).isFile())
      mounts.push({ path: real, source: '/dev/null', writable: false });
  }
  const executable = await executablePath(command, path);
  if (executable !== undefined) mounts.push({ path: dirname(executable), writable: false });
  return mounts;
}

/**
 * Refreshes a `/login` access token before a call it would not outlast: one CLI query with no
 * tools at all (`--tools ""`), so nothing the model says can run, in an empty directory, in the
 * sandbox with network (the CLI reaches its OAuth server itself), from a private configuration
 * directory holding a copy of the user's tokens. What the CLI leaves there goes back to the
 * user's `.credentials.json` only when it is a refresh of the same login (`refreshToKeep`), and
 * only over the very tokens the refresh started from (another process may have refreshed them
 * meanwhile), through a temporary file and a rename, as the CLI does. A failed refresh leaves
 * the tokens as they are: the call then reports what the API says.
 */
async function refreshLogin(
  options: ClaudeRunnerOptions,
  spec: CommandSpec,
  env: Record<string, string | undefined>,
  paths: ClaudeConfigPaths,
  credentialsFile: string,
  now: () => number,
): Promise<void> {
  const seeded = await readUserFile(credentialsFile);
  if (seeded === undefined) return;
  const dir = await realpath(await mkdtemp(join(options.stateDir, 'refresh-')));
  try {
    const configDir = join(dir, 'config');
    const work = join(dir, 'work');
    await seed(paths, configDir);
    await writeFile(join(configDir, CREDENTIALS_FILE), seeded, { mode: 0o600 });
    await mkdir(work, { mode: 0o700 });
    const runner = options.sandbox
      ? options.sandbox({ mounts: [{ path: dir, writable: true }], network: true })
      : options.runner;
    await runner.run({
      command: spec.command,
      args: ['-p', '--output-format', 'json', '--tools', '', '--max-turns', '1'],
      input: 'Respond with OK',
      cwd: work,
      env: {
        ...claudeEnvironment(env, options.passEnv),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CONFIG_DIR: configDir,
        ...(env.ANTHROPIC_BASE_URL?.trim() ? { ANTHROPIC_BASE_URL: env.ANTHROPIC_BASE_URL.trim() } : {}),
      },
      extendEnv: false,
      timeoutMs: REFRESH_TIMEOUT_MS,
      ...(spec.signal === undefined ? {} : { signal: spec.signal }),
    });
    const written = await readPlainFile(join(configDir, CREDENTIALS_FILE));
    if (written === undefined) return;
    const decision = refreshToKeep(seeded, written, now());
    if (decision.keep) await replaceIfUnchanged(credentialsFile, seeded, decision.text);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Writes `text` over the user's file (through a link to it, if it is one) if it still holds `expected`. */
async function replaceIfUnchanged(file: string, expected: string, text: string): Promise<void> {
  const target = (await existing(file)) ?? file;
  if ((await readUserFile(target)) !== expected) return;
  const temporary = `${target}.ratchet-${randomUUID()}.tmp`;
  try {
    await writeFile(temporary, text, { mode: 0o600, flag: 'wx' });
    await chmod(temporary, 0o600);
    await rename(temporary, target);
  } catch {
    await rm(temporary, { force: true });
  }
}
