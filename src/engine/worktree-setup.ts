import { existsSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Git } from '../git/git.js';

/** What a run keeps in the repository but out of git (added to `.git/info/exclude`). */
export const RATCHET_EXCLUDES = ['/.ratchet/'];

/** Ignored dependency folders shared into a run's worktree by symlink, so tests can run there. */
export const SHARED_DIRECTORIES = ['node_modules', '.venv', 'venv'];

/**
 * Symlinks the checkout's dependency folders into a run's worktree, and excludes the links from
 * git. A `.gitignore` entry such as `node_modules/` matches a directory but not a symlink, so
 * without the exclude `git add -A` would commit the link, and accepting the run would replace
 * the user's real `node_modules` with a link to itself (and `git clean` on resume would delete it).
 * The patterns have no trailing slash (they must match the link) and are anchored at the root;
 * tracked files are never affected by an exclude.
 */
export async function shareDependencies(source: string, worktree: string, git: Git): Promise<void> {
  const shared = SHARED_DIRECTORIES.filter((name) => existsSync(join(source, name)));
  if (shared.length === 0) return;
  await git.addInfoExclude(shared.map((name) => `/${name}`));
  for (const name of shared) {
    const to = join(worktree, name);
    if (!existsSync(to)) await symlink(join(source, name), to, 'dir');
  }
}
