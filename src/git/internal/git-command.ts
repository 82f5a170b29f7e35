import { RatchetError, type ErrorCode } from '../../core/errors.js';
import { buildGitEnv, execGit, execProgram, type GitExecResult } from './exec-git.js';
import { hardenedShellPreamble } from './hardening.js';
import { ObjectReader } from './object-reader.js';

export interface GitCallOptions {
  input?: string;
  /** Extra environment for this call only, over the instance's. */
  env?: Record<string, string | undefined>;
  /** Error code for failures (default `git`). */
  code?: ErrorCode;
  hint?: string;
  /** Also return stdout as bytes. */
  binary?: boolean;
}

const MAX_STDERR_IN_MESSAGE = 2000;

/**
 * Runs git commands in one directory with one environment. `exec` reports non-zero exits as
 * data; `run` turns them into RatchetErrors naming the command and git's stderr.
 */
export class GitCommand {
  /**
   * The environment of a call without one of its own, built once: `buildGitEnv` reads all of
   * `process.env` (slow to enumerate), and a tasks run makes hundreds of calls.
   */
  #defaultEnv: Record<string, string> | undefined;

  constructor(
    readonly cwd: string,
    private readonly env: Record<string, string | undefined>,
  ) {}

  /** The default environment with `extra` over it (`undefined` removes a variable), as `buildGitEnv` would make it. */
  #envFor(extra: Record<string, string | undefined> | undefined): Record<string, string> {
    const base = (this.#defaultEnv ??= buildGitEnv(this.env));
    if (extra === undefined) return base;
    const env = { ...base };
    for (const [name, value] of Object.entries(extra)) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
    return env;
  }

  exec(args: readonly string[], options: GitCallOptions = {}): Promise<GitExecResult> {
    return execGit(args, {
      cwd: this.cwd,
      env: this.#envFor(options.env),
      ...(options.input === undefined ? {} : { input: options.input }),
      ...(options.binary ? { binary: true } : {}),
    });
  }

  /**
   * Runs a `/bin/sh` script (with `args` as `$1...`) in the same environment as git commands;
   * every `git` it runs is hardened like `exec`'s.
   */
  script(script: string, args: readonly string[], options: GitCallOptions = {}): Promise<GitExecResult> {
    return execProgram('/bin/sh', ['-c', `${hardenedShellPreamble()}\n${script}`, 'ratchet-git', ...args], {
      cwd: this.cwd,
      env: this.#envFor(options.env),
      ...(options.input === undefined ? {} : { input: options.input }),
    });
  }

  /** A `git cat-file --batch` process in this directory and environment (see `ObjectReader`). */
  objectReader(): ObjectReader {
    return new ObjectReader(this.cwd, this.#envFor(undefined));
  }

  /** Runs git and returns its stdout; throws on any non-zero exit. */
  async run(args: readonly string[], options: GitCallOptions = {}): Promise<string> {
    const result = await this.exec(args, options);
    if (result.exitCode !== 0) throw this.failure(args, result, options);
    return result.stdout;
  }

  /** Builds the RatchetError for a failed command (exported for callers that inspect exit codes). */
  failure(
    args: readonly string[],
    result: GitExecResult,
    options: Pick<GitCallOptions, 'code' | 'hint'> & {
      details?: Record<string, unknown>;
    } = {},
  ): RatchetError {
    const stderr = result.stderr.trim();
    const shown = stderr.length > MAX_STDERR_IN_MESSAGE ? `…${stderr.slice(-MAX_STDERR_IN_MESSAGE)}` : stderr;
    const exit = result.exitCode === null ? 'killed by a signal' : `exit ${result.exitCode}`;
    return new RatchetError(
      options.code ?? 'git',
      `git ${args.join(' ')} failed (${exit}) in ${this.cwd}${shown === '' ? '' : `: ${shown}`}`,
      {
        ...(options.hint === undefined ? {} : { hint: options.hint }),
        details: {
          args: [...args],
          cwd: this.cwd,
          exitCode: result.exitCode,
          stderr,
          ...options.details,
        },
      },
    );
  }
}

/** Rejects values that git would parse as options (`--upload-pack=...`), before they reach argv. */
export function assertNotOption(value: string, what: string): void {
  if (value.startsWith('-') || value === '') {
    throw new RatchetError('git', `Invalid ${what}: '${value}'`, {
      details: { [what]: value },
    });
  }
}

/** Value of a config key as git resolves it in the command's directory, or null when unset. */
export async function configValue(command: GitCommand, key: string): Promise<string | null> {
  assertNotOption(key, 'config key');
  const args = ['config', '--get', key];
  const result = await command.exec(args);
  if (result.exitCode === 1) return null;
  if (result.exitCode !== 0) throw command.failure(args, result);
  return result.stdout.replace(/\n$/, '');
}

/** Identity used for Ratchet's commits when the repository has none configured. */
const FALLBACK_NAME = 'Ratchet';
const FALLBACK_EMAIL = 'ratchet@localhost';

/**
 * `-c` options for commands that create commits (commit, merge, notes): fall back to Ratchet's
 * identity when git resolves no `user.email` here (or no `user.name`). Nothing is written to the
 * user's config. (Signing is off for every command: see `hardening.ts`.)
 */
export async function commitConfigArgs(command: GitCommand): Promise<string[]> {
  // Both keys from one git process (every task's worktree asks once): the last value of each wins, as with --get.
  const query = ['config', '--get-regexp', '^user\\.(email|name)$'];
  const result = await command.exec(query);
  if (result.exitCode !== 0 && result.exitCode !== 1) throw command.failure(query, result);
  const values = new Map<string, string>();
  for (const line of result.stdout.split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0) values.set(line.slice(0, space).toLowerCase(), line.slice(space + 1));
  }
  const email = values.get('user.email');
  const name = values.get('user.name');
  const args: string[] = [];
  if (!email) args.push('-c', `user.name=${FALLBACK_NAME}`, '-c', `user.email=${FALLBACK_EMAIL}`);
  else if (!name) args.push('-c', `user.name=${FALLBACK_NAME}`);
  return args;
}
