import { existsSync } from 'node:fs';
import { cp, mkdir, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ledgerPath } from '../run-paths.js';
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
  await git.commitAll(snapshotSubject(source), { allowEmpty: true });
  return git;
}

/** The subject of a copy's first commit, which names the directory it copies. */
function snapshotSubject(source: string): string {
  return `ratchet: snapshot of ${source}`;
}

/** Where the run `runId` on the plain directory `source` keeps its git copy of it. */
export function copyPath(home: string, runId: string, source: string): string {
  return join(home, 'copies', runId, basename(source));
}

/**
 * The newest copy that a refactor run made of the plain directory `source` and that holds a
 * ledger (its first commit is `snapshotSubject(source)`); null when there is none.
 */
export async function latestCopyOf(home: string, source: string): Promise<string | null> {
  let runIds: string[];
  try {
    runIds = await readdir(join(home, 'copies'));
  } catch {
    return null;
  }
  // Run ids start with their start time: newest first.
  for (const runId of runIds.sort().reverse()) {
    const copy = copyPath(home, runId, source);
    if (!existsSync(ledgerPath(copy))) continue;
    const first = (await new Git(copy).log().catch(() => [])).at(-1);
    if (first?.subject === snapshotSubject(source)) return copy;
  }
  return null;
}
