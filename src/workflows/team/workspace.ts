/**
 * The iteration's workspace: a git worktree of its own branch under `$RATCHET_HOME/worktrees/`,
 * where agents' file writes land. The user's checkout never changes (DESIGN.md, principle 2);
 * per-task worktrees of the implementation layers start from this branch.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
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

/** Creates the worktree of a new iteration from the repository's HEAD. */
export async function createIterationWorkspace(options: {
  projectRoot: string;
  home: string;
  iterationId: string;
}): Promise<IterationWorkspace> {
  const git = new Git(options.projectRoot);
  const base = await git.revParse('HEAD');
  if (base === null)
    throw new RatchetError('usage', 'The repository has no commit yet; the team works on a branch made from HEAD.', {
      hint: 'Commit something first (git commit --allow-empty -m init).',
    });
  const suffix = randomBytes(4).toString('hex');
  const name = `team-${options.iterationId}-${suffix}`;
  const workspace = join(options.home, 'worktrees', name);
  const branch = `ratchet/${name}`;
  await git.addWorktree(workspace, branch, base);
  return { workspace, branch, base_commit: base };
}
