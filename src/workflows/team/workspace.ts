/**
 * The iteration's workspace: a git worktree of its own branch under `$RATCHET_HOME/worktrees/`,
 * where agents' file writes land. The user's checkout never changes (DESIGN.md, principle 2);
 * per-task worktrees of the implementation layers start from this branch.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import { Git } from '../../git/git.js';
import type { Iteration } from './types.js';

export interface IterationWorkspace {
  workspace: string;
  branch: string;
  base_commit: string;
}

/** The workspace an iteration recorded, when its directory still exists. */
export function recordedWorkspace(iteration: Iteration): IterationWorkspace | null {
  const { workspace, branch, base_commit: base } = iteration;
  if (typeof workspace !== 'string' || typeof branch !== 'string' || typeof base !== 'string') return null;
  return existsSync(workspace) ? { workspace, branch, base_commit: base } : null;
}

/** The commit a new iteration starts from (HEAD); a usage error when there is none yet. */
export async function baseCommitOf(projectRoot: string): Promise<string> {
  const base = await new Git(projectRoot).revParse('HEAD');
  if (base === null)
    throw new RatchetError('usage', 'The repository has no commit yet; the team works on a branch made from HEAD.', {
      hint: 'Commit something first (git commit --allow-empty -m init).',
    });
  return base;
}

/** Creates the worktree of a new iteration from the repository's HEAD. */
export async function createIterationWorkspace(options: {
  projectRoot: string;
  home: string;
  iterationId: string;
}): Promise<IterationWorkspace> {
  const base = await baseCommitOf(options.projectRoot);
  const suffix = randomBytes(4).toString('hex');
  const name = `team-${options.iterationId}-${suffix}`;
  const workspace = join(options.home, 'worktrees', name);
  const branch = `ratchet/${name}`;
  await new Git(options.projectRoot).addWorktree(workspace, branch, base);
  return { workspace, branch, base_commit: base };
}

/** Characters of diff a code-review prompt carries at most; the rest is cut with a note. */
const MAX_DIFF_CHARS = 40_000;

/**
 * What the iteration changed in its workspace since it began, for the code-review prompts: the
 * diff against the base commit (committed and uncommitted changes), then the new files git does
 * not track yet, whole (regular files only: a symbolic link is named, never followed). Cut at
 * `MAX_DIFF_CHARS` with a note.
 */
export async function workspaceChanges(workspace: IterationWorkspace): Promise<string> {
  const git = new Git(workspace.workspace);
  const parts = [await git.diff(workspace.base_commit)];
  const untracked = (await git.status({ untracked: 'all' })).files.filter((file) => file.index === '?');
  for (const file of untracked) {
    const absolute = join(workspace.workspace, file.path);
    const stat = await lstat(absolute).catch(() => undefined);
    parts.push(
      stat?.isFile() === true
        ? `New file ${file.path} (not committed yet):\n${await readFile(absolute, 'utf8')}`
        : `New entry ${file.path} (not a regular file; not shown)`,
    );
  }
  const text = parts.filter((part) => part.trim() !== '').join('\n\n');
  if (text === '') return '(no changes yet)';
  return text.length > MAX_DIFF_CHARS
    ? `${text.slice(0, MAX_DIFF_CHARS)}\n[... cut at ${MAX_DIFF_CHARS} characters; Read the files for the rest]`
    : text;
}
