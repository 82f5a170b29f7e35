import { cp, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Git } from '../../git/git.js';

const SKIP = new Set(['node_modules', '.ratchet', '.venv', 'venv', '__pycache__']);

/**
 * Seed 002, 8.1, for a directory that is not a git repository: a copy in a fresh git
 * repository, so the run has branches, checkpoints and rollbacks while the original is never
 * touched. Dependency folders are not copied (they are shared into the worktree by symlink).
 */
export async function gitCopyOf(source: string, target: string): Promise<Git> {
  await mkdir(target, { recursive: true });
  for (const entry of await readdir(source)) {
    if (SKIP.has(entry)) continue;
    await cp(join(source, entry), join(target, entry), { recursive: true, verbatimSymlinks: true });
  }
  const git = await Git.init(target, { initialBranch: 'main' });
  await git.commitAll(snapshotSubject(source), { allowEmpty: true, noVerify: true });
  return git;
}

/** The subject of a copy's first commit, which names the directory it copies. */
export function snapshotSubject(source: string): string {
  return `ratchet: snapshot of ${source}`;
}
