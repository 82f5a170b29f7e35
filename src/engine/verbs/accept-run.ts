import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import { NOTES_REF } from '../../core/handoff.js';
import { describeUnsafeEntries } from '../../core/unsafe-entry.js';
import { namedChanges } from '../../git/change-count.js';
import { Git } from '../../git/git.js';
import { unsafeChanges } from '../../git/unsafe-entries.js';
import type { Ledger } from '../../ledger/types.js';
import { systemClock } from '../effects.js';
import type { GitRun } from '../git-run.js';
import { readRunConfig, type StoredRunConfig } from '../run-config.js';
import { withRunLocked } from '../run-lock.js';
import { rolledBackError } from '../rollbacks.js';
import { discardRunWorktree, discardSideBranches } from '../worktree-setup.js';
import type { RunVerbContext } from './verb-context.js';

/**
 * `ratchet accept`: brings the run into the branch it started from, then drops its worktree.
 * Holds the repository lock (a run still going cannot be accepted under it) and first removes
 * the run's stale git lock files (see `withRunLocked`).
 */
export async function acceptRun(
  repoRoot: string,
  run: GitRun,
  context: RunVerbContext,
  options: { force: boolean },
): Promise<AcceptResult & { removedLocks: string[] }> {
  const { ledger } = context;
  if (run.status === 'rolled-back') throw await rolledBackError(ledger, run, 'there is nothing to accept');
  if (run.status === 'accepted' || run.status === 'rejected')
    throw new RatchetError('usage', `Run ${run.id} was already ${run.status}.`);
  const stored = readRunConfig(context.registry, run);
  return withRunLocked(repoRoot, run, ledger, context.clock ?? systemClock, () =>
    acceptRunLocked(repoRoot, run, stored, ledger, options),
  );
}

export interface AcceptResult {
  mode: 'fast-forward' | 'merge';
  /** The branch's commit after the accept. */
  commit: string;
  /** A run on a plain directory: the directory its changes were copied into. */
  copiedTo?: string;
  /**
   * A run whose checkpoints are verified at two levels (a refactor run) accepted with --force: its
   * checkpoints (subjects, oldest first) that passed only the fast verifier, after the newest that
   * passed the full one (empty when the tip did).
   */
  unverified: string[];
  /** Branches the run made beside its own (a tasks run's task branches) that it never merged: kept. */
  keptBranches: string[];
}

/**
 * The checkpoints of a run verified at two levels at `tip` that never passed the full verifier:
 * those after the newest one that did (`checkpoint-verify` events; the base commit passed it as
 * the baseline).
 */
async function fastOnlyCheckpoints(
  git: Git,
  run: GitRun,
  stored: StoredRunConfig,
  ledger: Ledger,
  tip: string,
): Promise<string[]> {
  if (stored.workflow.verifiesCheckpointsTwice !== true || run.status === 'completed') return [];
  const verified = new Set([
    run.baseCommit,
    ...(await ledger.events(run.id, { types: ['checkpoint-verify'] })).flatMap((event) =>
      event.type === 'checkpoint-verify' ? [event.commit] : [],
    ),
  ]);
  const unverified: string[] = [];
  for (const entry of await git.log(`${run.baseCommit}..${tip}`)) {
    if (verified.has(entry.sha)) break;
    unverified.push(entry.subject);
  }
  return unverified.reverse();
}

async function acceptRunLocked(
  repoRoot: string,
  run: GitRun,
  stored: StoredRunConfig,
  ledger: Ledger,
  options: { force: boolean },
): Promise<AcceptResult> {
  if (run.status !== 'completed' && !options.force) {
    const hint =
      stored.workflow.resume !== undefined
        ? `Finish it with \`ratchet resume ${run.id}\`, or pass --force to accept its checkpoints as they are.`
        : `A ${run.workflow} run is not resumed: pass --force to accept its verified checkpoints as they are, or \`ratchet reject ${run.id}\`.`;
    // We hold the repository lock, so a `running` run has no live process: it was killed.
    const gone = run.status === 'running';
    throw new RatchetError(
      'usage',
      gone
        ? `Run ${run.id} did not complete: its process is gone (killed?).`
        : `Run ${run.id} is ${run.status}, not completed.`,
      { hint },
    );
  }
  const git = new Git(repoRoot);
  const current = await git.currentBranch();
  if (run.baseBranch && current !== run.baseBranch) {
    throw new RatchetError(
      'usage',
      `Your checkout is on ${current ?? 'a detached HEAD'}, but the run started from ${run.baseBranch}.`,
      { hint: `git checkout ${run.baseBranch}, then accept again.` },
    );
  }
  const head = await git.head();
  const tip = await git.revParse(run.branch);
  if (!tip) throw new RatchetError('not-found', `Branch ${run.branch} no longer exists.`);
  await refuseMixedChanges(git, head, tip);
  await refuseUnsafeChanges(git, run, head, tip);
  const original = originalOf(stored);
  await refuseChangedOriginal(git, original, head, tip);
  const unverified = await fastOnlyCheckpoints(git, run, stored, ledger, tip);
  let mode: 'fast-forward' | 'merge';
  if (await git.isAncestor(head, tip)) {
    await git.mergeFastForward(run.branch);
    mode = 'fast-forward';
  } else {
    try {
      await git.merge(run.branch, `Merge ratchet run ${run.id}: ${run.feature}`);
    } catch (error) {
      const conflict = error instanceof RatchetError ? error.details?.conflict === true : false;
      if (!conflict) throw error;
      const files = (error as RatchetError).details?.files;
      const where = Array.isArray(files) && files.length > 0 ? files.join(', ') : 'the working tree';
      throw new RatchetError(
        'usage',
        `Run ${run.id} conflicts with what changed on ${current ?? 'your branch'} since it started (${where}); nothing was merged.`,
        {
          hint: `Merge it by hand (\`git merge ${run.branch}\`, resolve, commit), then \`ratchet accept ${run.id}\` records it and removes the worktree; or \`ratchet reject ${run.id}\`.`,
          details: { conflict: true, files },
        },
      );
    }
    mode = 'merge';
  }
  await discardRunWorktree(git, run.worktree, run.branch);
  // Merged task branches are in the run's history now; an unmerged one (accept --force) is kept.
  const keptBranches = await discardSideBranches(git, run, { keepUnmergedInto: tip, notesRef: NOTES_REF });
  const copiedTo = await copyBackToOriginal(git, repoRoot, original, head);
  await ledger.updateRun(run.id, { status: 'accepted', finalCommit: tip });
  return { mode, commit: await git.head(), ...(copiedTo ? { copiedTo } : {}), unverified, keptBranches };
}

/**
 * Changes of the user's that the merge would mix with the run: anything staged or modified, and
 * untracked files at a path the run writes. Other untracked files (the spec or the tasks file a
 * run was started from, say) stay as they are through a merge or a fast-forward.
 */
async function refuseMixedChanges(git: Git, head: string, tip: string): Promise<void> {
  const entries = (await git.status({ untracked: 'normal' })).files;
  if (entries.length === 0) return;
  const written = await git.changedFiles((await git.mergeBase(head, tip)) ?? head, tip);
  const collides = (path: string): boolean =>
    written.some((file) => file === path || (path.endsWith('/') && file.startsWith(path)));
  const mixed = entries.filter((entry) => entry.index !== '?' || collides(entry.path));
  if (mixed.length === 0) return;
  const untracked = mixed.some((entry) => entry.index === '?');
  throw new RatchetError(
    'dirty-tree',
    `Your working tree has uncommitted changes the run would mix with: ${namedChanges({ paths: mixed.map((entry) => entry.path) })}.`,
    { hint: `Commit or stash them first${untracked ? ' (`git stash -u` stashes untracked files too)' : ''}.` },
  );
}

/**
 * Whatever the workflow, and with --force too: nothing the merge would bring in may be a gitlink,
 * a path inside a `.git`, or a symbolic link that leads outside the repository once resolved in
 * the run's own tree (see `unsafeChanges`). The run's stages refuse these as they happen; this is
 * the last check before the user's branch, and catches a branch changed by other means.
 */
async function refuseUnsafeChanges(git: Git, run: GitRun, head: string, tip: string): Promise<void> {
  const base = await git.mergeBase(head, tip);
  const unsafe = await unsafeChanges(git, base ?? head, tip);
  if (unsafe.length === 0) return;
  throw new RatchetError(
    'usage',
    `Run ${run.id} would bring ${unsafe.length === 1 ? 'an entry' : `${unsafe.length} entries`} into ${run.baseBranch ?? 'your branch'} that no run may: ${describeUnsafeEntries(unsafe)}. Nothing was merged.`,
    {
      hint: `Inspect the branch (\`git diff ${head.slice(0, 12)} ${run.branch}\`) and \`ratchet reject ${run.id}\`; --force does not override this check.`,
      details: { unsafe },
    },
  );
}

/** The original directory of a run on a plain directory (null for a run on a git repository). */
function originalOf(stored: StoredRunConfig): string | null {
  return stored.isGit || !existsSync(stored.target) ? null : stored.target;
}

/** The git blob id of a file's bytes (as `git hash-object` without filters), or null when there is none. */
async function blobIdOf(path: string): Promise<string | null> {
  try {
    const bytes = await readFile(path);
    return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
  } catch {
    return null;
  }
}

/**
 * Before anything is merged or copied: every file the run changed must still be, in the original
 * directory, what it was when the run copied it. A file the user changed since would otherwise be
 * overwritten without a word (a plain directory has no merge to tell).
 */
async function refuseChangedOriginal(git: Git, target: string | null, head: string, tip: string): Promise<void> {
  if (target === null) return;
  const changed = (await git.changedFiles(head, tip)).filter((path) => join(target, path).startsWith(`${target}/`));
  const then = await git.blobIds(head, changed);
  const changedSince: string[] = [];
  for (const path of changed) {
    if ((await blobIdOf(join(target, path))) !== (then.get(path) ?? null)) changedSince.push(path);
  }
  if (changedSince.length > 0) {
    throw new RatchetError(
      'usage',
      `${changedSince.length} file(s) the run changed were also changed in ${target} since it started: ${changedSince.slice(0, 10).join(', ')}${changedSince.length > 10 ? ', ...' : ''}.`,
      {
        hint: 'Accepting would overwrite them. Put them back as they were (or copy your changes elsewhere), then accept again; or reject the run.',
      },
    );
  }
}

/**
 * A run on a directory that is not a git repository worked in a git copy of it: accepting also
 * brings the run's changes (written, changed and deleted files) into the original directory.
 * Files are copied from the copy's checkout, which the merge just brought to the run's tip, byte
 * for byte (binary files included).
 */
async function copyBackToOriginal(
  git: Git,
  repoRoot: string,
  target: string | null,
  base: string,
): Promise<string | null> {
  if (target === null) return null;
  for (const path of await git.changedFiles(base, 'HEAD')) {
    const destination = join(target, path);
    if (!destination.startsWith(`${target}/`)) continue;
    const source = join(repoRoot, path);
    if (!existsSync(source)) {
      await rm(destination, { force: true });
    } else {
      await mkdir(dirname(destination), { recursive: true });
      await copyFile(source, destination);
    }
  }
  return target;
}
