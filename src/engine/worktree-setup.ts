import { existsSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';

/** What a run keeps in the repository but out of git (added to `.git/info/exclude`). */
export const RATCHET_EXCLUDES = ['/.ratchet/'];

/** Ignored dependency folders shared into a run's worktree by symlink, so tests can run there. */
const SHARED_DIRECTORIES = ['node_modules', '.venv', 'venv'];

export async function shareDependencies(source: string, worktree: string): Promise<void> {
  for (const name of SHARED_DIRECTORIES) {
    const from = join(source, name);
    const to = join(worktree, name);
    if (existsSync(from) && !existsSync(to)) await symlink(from, to, 'dir');
  }
}
