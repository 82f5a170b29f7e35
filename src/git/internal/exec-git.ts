import { spawn } from 'node:child_process';
import { RatchetError } from '../../core/errors.js';
import { HARDENED_ENV, hardenedConfigArgs } from './hardening.js';

/** Outcome of one git invocation; a non-zero exit is data here, callers decide what it means. */
export interface GitExecResult {
  /** null when git was killed by a signal or could not be started. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** stdout as bytes, when asked for with `binary` (object contents are sized in bytes). */
  stdoutBytes?: Buffer;
}

export interface GitExecOptions {
  cwd: string;
  /** Full environment for the child (already merged by the caller). */
  env: Record<string, string>;
  /** Written to git's stdin. */
  input?: string;
  /** Also return stdout as bytes (`stdoutBytes`). */
  binary?: boolean;
}

/**
 * Variables git exports to hooks and aliases. Inherited from a parent git process (Ratchet run
 * from a hook, or tests run from one) they would point every command at the wrong repository.
 */
const INHERITED_GIT_VARIABLES = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_COMMON_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_PREFIX',
  'GIT_NAMESPACE',
];

/**
 * Builds the child environment: `process.env` without the repository-selecting variables above,
 * then the hardened environment (`HARDENED_ENV`: no pager, editor, transport, ssh or external
 * diff from the environment, never a terminal prompt), then `overrides` (where `undefined`
 * removes a variable).
 */
export function buildGitEnv(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const merged: Record<string, string | undefined> = { ...process.env };
  for (const name of INHERITED_GIT_VARIABLES) delete merged[name];
  Object.assign(merged, HARDENED_ENV, overrides);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(merged)) if (value !== undefined) env[key] = value;
  return env;
}

/**
 * Runs `git <hardened -c settings> <args>` without a shell (see `hardening.ts`). Output is
 * collected in full (git output we read is bounded by the repository; unified diffs are the
 * largest). Never rejects except when git cannot be spawned at all, which becomes a `git`
 * RatchetError naming `args`.
 */
export function execGit(args: readonly string[], options: GitExecOptions): Promise<GitExecResult> {
  return execProgram('git', [...hardenedConfigArgs(), ...args], options, args);
}

/**
 * Runs `program <args>` like `execGit` (own process group, collected output). Used for short
 * `/bin/sh` scripts that chain several git commands: one spawn from Node (which costs
 * milliseconds in a large process) instead of one per command; such a script starts with
 * `hardenedShellPreamble()` (see `GitCommand.script`). `shown`: the arguments an error names.
 */
export function execProgram(
  program: string,
  args: readonly string[],
  options: GitExecOptions,
  shown: readonly string[] = args,
): Promise<GitExecResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      cwd: options.cwd,
      env: options.env,
      // No pipe for a stdin with nothing to say (git reads an empty one): a pipe and its stream
      // fewer on each of a run's hundreds of processes.
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      // Its own process group: a terminal's Ctrl-C (SIGINT to the foreground group) must not kill
      // git halfway through a checkpoint; the CLI's handler stops the run at the next safe point.
      detached: true,
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let settled = false;
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    // git may exit before reading all of stdin (e.g. `apply --check` on a corrupt patch).
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input);
    child.on('error', (error: Error) => {
      if (settled) return;
      settled = true;
      reject(
        new RatchetError('git', `Could not run git ${shown.join(' ')} in ${options.cwd}: ${error.message}`, {
          cause: error,
          hint: 'Check that git is installed and on PATH, and that the directory exists.',
          details: { args: [...shown], cwd: options.cwd },
        }),
      );
    });
    child.on('close', (code) => {
      if (settled) return;
      settled = true;
      const bytes = Buffer.concat(stdout);
      resolve({
        exitCode: code,
        stdout: bytes.toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        ...(options.binary ? { stdoutBytes: bytes } : {}),
      });
    });
  });
}
