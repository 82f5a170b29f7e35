/**
 * The two git queries the index needs and the `Git` wrapper does not offer: the file list with
 * `.gitignore` applied, and per-file churn over recent history. Both run git in the indexed
 * directory, so paths come back relative to it (`--relative` for the log).
 */
import { RatchetError } from '../../core/errors.js';
import { hardenedGit } from '../../git/hardened-git.js';
import { runCommand } from '../../process/runner.js';
import type { CommandResult } from '../../process/types.js';

/** Output is read whole: file lists and logs of large repositories run to tens of megabytes. */
const MAX_OUTPUT = 512 * 1024 * 1024;

/**
 * Runs git hardened as the `Git` wrapper does (no repository-controlled program runs: the
 * indexed tree is a run's worktree), without a parent git's `GIT_DIR` and friends, and without
 * taking optional locks.
 */
async function git(cwd: string, args: string[], signal: AbortSignal | undefined): Promise<CommandResult> {
  const invocation = hardenedGit(args, { GIT_OPTIONAL_LOCKS: '0' });
  const result = await runCommand({
    command: invocation.command,
    args: invocation.args,
    cwd,
    env: invocation.env,
    extendEnv: false,
    maxOutputBytes: MAX_OUTPUT,
    ...(signal === undefined ? {} : { signal }),
  });
  if (result.aborted) throw new RatchetError('interrupted', 'Interrupted', { cause: signal?.reason });
  return result;
}

/** Tracked and untracked files under `cwd`, without ignored ones (`git ls-files -co --exclude-standard`). */
export async function gitListFiles(cwd: string, signal?: AbortSignal): Promise<string[]> {
  const args = ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--deduplicate'];
  const result = await git(cwd, args, signal);
  if (result.exitCode !== 0) {
    throw new RatchetError('git', `git ${args.join(' ')} failed in ${cwd}: ${result.stderr.trim()}`, {
      details: { args, cwd, exitCode: result.exitCode, stderr: result.stderr },
    });
  }
  return result.stdout.split('\0').filter((path) => path !== '');
}

/**
 * Number of commits touching each file among the last `maxCommits` commits of HEAD. Empty when
 * the branch has no commits yet.
 */
export async function gitChurn(cwd: string, maxCommits: number, signal?: AbortSignal): Promise<Map<string, number>> {
  const churn = new Map<string, number>();
  const args = [
    'log',
    `--max-count=${maxCommits}`,
    '--numstat',
    '--no-renames',
    '--format=%x00',
    '-z',
    '--relative',
    'HEAD',
    '--',
  ];
  const result = await git(cwd, args, signal);
  if (result.exitCode !== 0) return churn; // No commits yet (unborn HEAD).
  for (const token of result.stdout.split('\0')) {
    const match = /^\n?(?:\d+|-)\t(?:\d+|-)\t([\s\S]+)$/.exec(token);
    const path = match?.[1];
    if (path !== undefined) churn.set(path, (churn.get(path) ?? 0) + 1);
  }
  return churn;
}

/** Full sha of HEAD, or null when the branch has no commits yet. */
export async function gitHead(cwd: string, signal?: AbortSignal): Promise<string | null> {
  const result = await git(cwd, ['rev-parse', '--verify', '--quiet', 'HEAD'], signal);
  return result.exitCode === 0 ? result.stdout.trim() : null;
}
