import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { RatchetError } from '../core/errors.js';
import { ledgerPath } from './run-paths.js';
import { Git } from '../git/git.js';
import { requireWritableHome } from './worktree-setup.js';

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

/** Where a new run lives: a git repository, or a git copy of a directory that is not one. */
export interface RunPlace {
  /** The git repository the run lives in (its ledger too). */
  repoRoot: string;
  /** The directory the run works on: `repoRoot`, or the directory `repoRoot` is a copy of. */
  target: string;
  isGit: boolean;
}

/**
 * Seed 002, 8.1: a directory in a git repository is worked on through a branch and worktree of
 * that repository (a directory inside one stands for all of it: `run <repo>`); any other
 * directory is first copied into a fresh git repository under `$RATCHET_HOME/copies/<run-id>/`,
 * so the original is never touched, when `copies` allows it, and refused otherwise.
 */
export async function runPlace(
  directory: string,
  options: { home: string; runId: string; copies: boolean },
): Promise<RunPlace> {
  if (await Git.isRepository(directory)) {
    const root = await new Git(directory).root();
    return { repoRoot: root, target: root, isGit: true };
  }
  if (!options.copies) {
    throw new RatchetError('usage', `${directory} is not a git repository.`, {
      hint: 'Run `git init` and commit your project first.',
    });
  }
  const repoRoot = copyPath(options.home, options.runId, directory);
  await requireWritableHome(options.home);
  await gitCopyOf(directory, repoRoot);
  return { repoRoot, target: directory, isGit: false };
}

/** After a start that failed: a copy that never got a run (a check failed first) is left for nobody. */
export async function discardUnusedCopy(place: RunPlace, recorded: boolean): Promise<void> {
  if (!place.isGit && !recorded) await rm(dirname(place.repoRoot), { recursive: true, force: true });
}
