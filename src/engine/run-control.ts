import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RatchetError } from '../core/errors.js';
import { HandoffStateSchema, NOTES_REF, type HandoffState } from '../core/handoff.js';
import type { Clock } from '../core/effects.js';
import type { EventOf } from '../core/events.js';
import { describeUnsafeEntries } from '../core/unsafe-entry.js';
import { Git } from '../git/git.js';
import { unsafeChanges } from '../git/unsafe-entries.js';
import { acquireRepoLock, runLockHeld } from '../git/repo-lock.js';
import type { Ledger, RunRow } from '../ledger/types.js';
import { systemClock } from './effects.js';
import { createEnveloper } from './event-stream.js';
import { asGitRun, isClosed, type GitRun } from './git-run.js';
import { clearStaleGitLocks, recordGitLockRemoval } from './stale-locks.js';

/** The run named on the command line, or the latest run of the repository. */
export async function resolveRun(ledger: Ledger, runId: string | undefined): Promise<GitRun> {
  const run = runId ? await ledger.getRun(runId) : await ledger.latestRun();
  if (!run) throw noRunError(runId);
  return asGitRun(run);
}

/** The error for a run id this repository's ledger does not hold, or for a repository with no run yet. */
export function noRunError(runId: string | undefined): RatchetError {
  return runId
    ? new RatchetError('not-found', `No run ${runId} in this repository.`, {
        hint: 'Check the id and the directory: a run belongs to the repository it started in, which has a folder .ratchet/runs/<run-id> for it (`ratchet status` shows its latest run).',
      })
    : new RatchetError('not-found', 'No runs in this repository yet.', {
        hint: 'Start one with `ratchet tdd "<feature>"` or `ratchet refactor run`, or try `ratchet demo`.',
      });
}

export interface Checkpoint {
  sha: string;
  subject: string;
  date: string;
  state: HandoffState | null;
  /** Set when the note exists but cannot be read. */
  noteError: string | null;
  /**
   * Where `state` comes from: the git note, or (with a ledger, when the commit has no note in git,
   * e.g. after `ratchet reject` removed the run's notes) the note the run recorded in its ledger.
   */
  noteSource: 'git' | 'ledger' | null;
}

/**
 * A handoff note's text as a state; `problem` says what is wrong with one that is there but does
 * not parse ("is not valid JSON", "does not match the handoff schema"). No text: neither.
 */
export function parseNote(text: string | null): { state: HandoffState | null; problem: string | null } {
  if (text === null) return { state: null, problem: null };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { state: null, problem: 'is not valid JSON' };
  }
  const parsed = HandoffStateSchema.safeParse(json);
  return parsed.success
    ? { state: parsed.data, problem: null }
    : { state: null, problem: 'does not match the handoff schema' };
}

/** Whether a live process holds the repository lock for this run (it is being worked on now). */
export async function runIsActive(repoRoot: string, runId: string): Promise<boolean> {
  return runLockHeld(await new Git(repoRoot).commonDir(), runId);
}

/** The runs `running` in the ledger that no process holds the lock for: killed (kill -9, a crash). */
export async function orphanedRuns(
  repoRoot: string,
  runs: readonly { id: string; status: string }[],
): Promise<Set<string>> {
  const running = runs.filter((run) => run.status === 'running');
  if (running.length === 0) return new Set();
  const commonDir = await new Git(repoRoot).commonDir();
  const gone = new Set<string>();
  for (const run of running) if (!(await runLockHeld(commonDir, run.id))) gone.add(run.id);
  return gone;
}

/**
 * The run's commits, oldest first, with their handoff notes: up to its branch, or, once the run
 * was accepted, rejected or rolled back (the branch is gone), up to the commit the branch had
 * then. A rejected run's commits stay readable until git collects them.
 */
export async function checkpointsOf(git: Git, run: GitRun, ledger?: Ledger): Promise<Checkpoint[]> {
  const tip =
    (await git.revParse(run.branch)) ??
    (await git.revParse(`refs/heads/${run.branch}`)) ??
    (run.finalCommit ? await git.revParse(`${run.finalCommit}^{commit}`) : null);
  if (!tip) return [];
  const log = await git.log(`${run.baseCommit}..${tip}`);
  const recorded = ledger ? await ledgerNotes(ledger, run.id) : new Map<string, HandoffState>();
  const result: Checkpoint[] = [];
  for (const entry of log.reverse()) {
    const text = await git.readNote(NOTES_REF, entry.sha);
    const note = parseNote(text);
    const fallback = text === null ? (recorded.get(entry.sha) ?? null) : null;
    result.push({
      sha: entry.sha,
      subject: entry.subject,
      date: entry.date,
      state: note.state ?? fallback,
      noteError: note.problem === null ? null : `note ${note.problem}`,
      noteSource: text !== null && note.state ? 'git' : fallback ? 'ledger' : null,
    });
  }
  return result;
}

/** The handoff notes a run wrote (`note-write` events), by commit; the latest for a commit wins. */
export async function ledgerNotes(ledger: Ledger, runId: string): Promise<Map<string, HandoffState>> {
  const written = new Map<string, HandoffState>();
  for (const event of await ledger.events(runId, { types: ['note-write'] })) {
    if (event.type === 'note-write') written.set(event.commit, event.state);
  }
  return written;
}

/**
 * `ratchet accept`: brings the run into the branch it started from, then drops its worktree.
 * Holds the repository lock (a run still going cannot be accepted under it) and first removes
 * the run's stale git lock files (see `withRunLocked`).
 */
export async function acceptRun(
  repoRoot: string,
  run: GitRun,
  ledger: Ledger,
  options: { force: boolean },
  clock: Clock = systemClock,
): Promise<AcceptResult & { removedLocks: string[] }> {
  if (run.status === 'rolled-back') throw await rolledBackError(ledger, run, 'there is nothing to accept');
  if (run.status === 'accepted' || run.status === 'rejected')
    throw new RatchetError('usage', `Run ${run.id} was already ${run.status}.`);
  return withRunLocked(repoRoot, run, ledger, clock, () => acceptRunLocked(repoRoot, run, ledger, options));
}

export interface AcceptResult {
  mode: 'fast-forward' | 'merge';
  /** The branch's commit after the accept. */
  commit: string;
  /** A run on a plain directory: the directory its changes were copied into. */
  copiedTo?: string;
  /**
   * A refactor run accepted with --force: its checkpoints (subjects, oldest first) that passed only
   * the fast verifier, after the newest that passed the full one (empty when the tip did).
   */
  unverified: string[];
}

/**
 * The checkpoints of a refactor run at `tip` that never passed the full verifier: those after the
 * newest one that did (`checkpoint-verify` events; the base commit passed it as the baseline).
 */
async function fastOnlyCheckpoints(git: Git, run: GitRun, ledger: Ledger, tip: string): Promise<string[]> {
  if (run.workflow !== 'refactor' || run.status === 'completed') return [];
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
  ledger: Ledger,
  options: { force: boolean },
): Promise<AcceptResult> {
  if (run.status !== 'completed' && !options.force) {
    const hint =
      run.workflow === 'tdd'
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
  const status = await git.status();
  if (!status.clean) {
    throw new RatchetError(
      'dirty-tree',
      'Your working tree has uncommitted changes; accepting would mix them with the run.',
      { hint: 'Commit or stash them first.' },
    );
  }
  const head = await git.head();
  const tip = await git.revParse(run.branch);
  if (!tip) throw new RatchetError('not-found', `Branch ${run.branch} no longer exists.`);
  await refuseUnsafeChanges(git, run, head, tip);
  await refuseChangedOriginal(git, run, head, tip);
  const unverified = await fastOnlyCheckpoints(git, run, ledger, tip);
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
  await dropWorktree(git, run);
  const copiedTo = await copyBackToOriginal(git, repoRoot, run, head);
  await ledger.updateRun(run.id, { status: 'accepted', finalCommit: tip });
  return { mode, commit: await git.head(), ...(copiedTo ? { copiedTo } : {}), unverified };
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
function originalOf(run: GitRun): string | null {
  const stored = run.config as { target?: unknown; isGit?: unknown } | null;
  if (stored?.isGit !== false || typeof stored.target !== 'string' || !existsSync(stored.target)) return null;
  return stored.target;
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
async function refuseChangedOriginal(git: Git, run: GitRun, head: string, tip: string): Promise<void> {
  const target = originalOf(run);
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
async function copyBackToOriginal(git: Git, repoRoot: string, run: GitRun, base: string): Promise<string | null> {
  const target = originalOf(run);
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

async function dropWorktree(git: Git, run: GitRun): Promise<void> {
  if (existsSync(run.worktree)) await git.removeWorktree(run.worktree, { force: true });
  await git.pruneWorktrees();
  if (await git.branchExists(run.branch)) await git.deleteBranch(run.branch, { force: true });
}

/**
 * `ratchet reject`: removes the run's worktree and branch; the user's checkout was never touched.
 * Locked and cleaned like `acceptRun`.
 */
export async function rejectRun(
  repoRoot: string,
  run: GitRun,
  ledger: Ledger,
  clock: Clock = systemClock,
): Promise<{ removedLocks: string[] }> {
  if (run.status === 'accepted')
    throw new RatchetError(
      'usage',
      `Run ${run.id} was already accepted into ${run.baseBranch ?? 'your branch'}; it cannot be rejected.`,
      {
        hint: hasBackup(run)
          ? `Undo it with \`ratchet refactor rollback ${run.id}\`: it restores the repository from the run's backup, as it was before the run (the current state is backed up first).`
          : 'Undo it with git (git revert of its merge or commits).',
      },
    );
  if (run.status === 'rolled-back')
    throw await rolledBackError(ledger, run, 'its worktree and branch are gone, so there is nothing to reject');
  if (run.status === 'rejected')
    throw new RatchetError(
      'usage',
      `Run ${run.id} was already rejected: its worktree and branch ${run.branch} were removed then.`,
    );
  return withRunLocked(repoRoot, run, ledger, clock, async () => {
    const git = new Git(repoRoot);
    // The handoff notes of the dropped commits go with them (the notes ref is shared by all runs).
    const tip = (await git.branchExists(run.branch)) ? await git.revParse(run.branch) : null;
    if (tip) {
      for (const commit of await git.log(`${run.baseCommit}..${tip}`)) await git.removeNote(NOTES_REF, commit.sha);
    }
    await dropWorktree(git, run);
    await ledger.updateRun(run.id, { status: 'rejected', ...(tip ? { finalCommit: tip } : {}) });
    return {};
  });
}

/**
 * Runs `work` holding the repository lock, after removing the stale git lock files of the run
 * (see `clearStaleGitLocks`; the removal is recorded in the ledger). `removedLocks` lists them.
 */
async function withRunLocked<T extends object>(
  repoRoot: string,
  run: GitRun,
  ledger: Ledger,
  clock: Clock,
  work: () => Promise<T>,
): Promise<T & { removedLocks: string[] }> {
  const lock = await acquireRepoLock(await new Git(repoRoot).commonDir(), { runId: run.id });
  try {
    const removedLocks = await clearStaleGitLocks(repoRoot, run);
    await recordGitLockRemoval(ledger, run, removedLocks, clock);
    return { ...(await work()), removedLocks };
  } finally {
    await lock.release();
  }
}

/**
 * `ratchet rollback <commit>`: moves the run back to one of its checkpoints (a TDD run is
 * resumable from there; a refactor run can then be accepted with `--force` up to there). Holds
 * the repository lock, so it waits for no run and refuses while one is active.
 */
export async function rollbackRun(
  repoRoot: string,
  run: GitRun,
  target: string,
  ledger: Ledger,
  clock: Clock = systemClock,
): Promise<{ commit: string; state: HandoffState | null; removedLocks: string[] }> {
  // A checkpoint of another run (an older one, when no run was named): say whose it is.
  const owner = await otherRunWithCheckpoint(repoRoot, run, target, ledger);
  if (owner !== null) {
    throw new RatchetError(
      'usage',
      `${target} is not a checkpoint of run ${run.id}: it is a checkpoint of run ${owner.id}${isClosed(owner) ? `, which was ${owner.status}` : ''}.`,
      {
        hint: isClosed(owner)
          ? `Run ${owner.id} is over: there is nothing of it left to roll back (\`ratchet history ${owner.id}\` shows its checkpoints).`
          : `Pass that run: \`ratchet rollback ${target} --run ${owner.id}\`.`,
      },
    );
  }
  if (run.status === 'accepted')
    throw new RatchetError(
      'usage',
      `Run ${run.id} was accepted: its commits are on ${run.baseBranch ?? 'your branch'}.`,
      {
        hint: hasBackup(run)
          ? `Undo it with \`ratchet refactor rollback ${run.id}\` (restores the repository from the run's backup).`
          : 'Undo it with git (git revert, or git reset on your branch).',
      },
    );
  if (run.status === 'rolled-back')
    throw await rolledBackError(ledger, run, 'there is nothing left to roll back to a checkpoint');
  if (run.status === 'rejected')
    throw new RatchetError('usage', `Run ${run.id} was rejected: there is nothing left to roll back.`);
  if (!existsSync(run.worktree))
    throw new RatchetError('not-found', `The worktree of run ${run.id} is gone (${run.worktree}).`);
  // The target is checked first (read-only): a bad one changes nothing, stale locks included.
  const checked = await rollbackTarget(run, target);
  return withRunLocked(repoRoot, run, ledger, clock, async () => {
    const git = new Git(run.worktree);
    await git.resetHard(checked.commit);
    await git.clean();
    await ledger.updateRun(run.id, { status: 'interrupted' });
    return checked;
  });
}

/**
 * The run whose checkpoint `target` is, when that is a run other than `run` (looked up in the
 * ledger's checkpoints of every run); null when `target` is `run`'s own, names no commit, or is
 * no run's checkpoint.
 */
async function otherRunWithCheckpoint(
  repoRoot: string,
  run: GitRun,
  target: string,
  ledger: Ledger,
): Promise<RunRow | null> {
  if (target === run.id || target.startsWith('-')) return null;
  const commit = await new Git(repoRoot).revParse(`${target}^{commit}`).catch(() => null);
  if (commit === null) return null;
  const isCheckpointOf = async (id: string): Promise<boolean> =>
    (await ledger.checkpoints(id)).some((checkpoint) => checkpoint.commitSha === commit);
  if (await isCheckpointOf(run.id)) return null;
  for (const other of await ledger.listRuns(10_000)) {
    if (other.id !== run.id && (await isCheckpointOf(other.id))) return other;
  }
  return null;
}

/** The commit `target` names, when it is the run's base or one of its checkpoints, with its handoff state. */
async function rollbackTarget(run: GitRun, target: string): Promise<{ commit: string; state: HandoffState | null }> {
  const git = new Git(run.worktree);
  const commit = target === run.id ? run.baseCommit : await git.revParse(`${target}^{commit}`);
  if (!commit) throw new RatchetError('usage', `${target} is not a commit.`);
  const inRun =
    commit === run.baseCommit ||
    ((await git.isAncestor(run.baseCommit, commit)) && (await git.isAncestor(commit, 'HEAD')));
  if (!inRun)
    throw new RatchetError('usage', `${target} is not a checkpoint of run ${run.id}.`, {
      hint: 'See `ratchet history` for its checkpoints.',
    });
  const note = commit === run.baseCommit ? { state: null } : parseNote(await git.readNote(NOTES_REF, commit));
  // A TDD run resumes from the note; a refactor run's checkpoints carry none (it is not resumed).
  if (run.workflow === 'tdd' && commit !== run.baseCommit && note.state === null) {
    throw new RatchetError('usage', `${target} has no handoff note, so the run cannot resume from it.`, {
      hint: 'Pick a commit listed by `ratchet history`.',
    });
  }
  return { commit, state: note.state };
}

/**
 * `ratchet repair-notes`: makes the handoff notes readable again. A notes ref that no longer
 * points at a commit is moved aside; every checkpoint of the run gets its note back from the
 * ledger (which recorded each note it wrote); notes that cannot be parsed are replaced.
 */
export async function repairNotes(
  repoRoot: string,
  run: GitRun,
  ledger: Ledger,
  clock: Clock = systemClock,
): Promise<{ movedAside: string | null; rewritten: number; removedLocks: string[] }> {
  // A run that is over has no branch left: its notes are not written back onto its old commits
  // (`reject` removed them on purpose; `history` still shows them, from the ledger).
  if (run.status === 'rolled-back')
    throw await rolledBackError(ledger, run, 'there are no handoff notes of it left to repair');
  if (isClosed(run))
    throw new RatchetError(
      'usage',
      `Run ${run.id} was ${run.status === 'accepted' ? `accepted into ${run.baseBranch ?? 'your branch'}` : 'rejected'}: it is over and its branch ${run.branch} is gone, so there are no handoff notes of it to repair.`,
      {
        hint: `\`ratchet history ${run.id}\` shows its handoff notes (from the ledger where git has none). repair-notes repairs those of a run that can still be resumed.`,
      },
    );
  return withRunLocked(repoRoot, run, ledger, clock, () => repairNotesLocked(repoRoot, run, ledger));
}

async function repairNotesLocked(
  repoRoot: string,
  run: GitRun,
  ledger: Ledger,
): Promise<{ movedAside: string | null; rewritten: number }> {
  const git = new Git(repoRoot);
  let movedAside: string | null = null;
  const ref = await git.revParse(NOTES_REF);
  if (ref !== null && (await git.revParse(`${NOTES_REF}^{commit}`)) === null) {
    movedAside = `${NOTES_REF}-broken-${Date.now()}`;
    await git.updateRef(movedAside, ref);
    await git.deleteRef(NOTES_REF);
  }
  const written = await ledgerNotes(ledger, run.id);
  let rewritten = 0;
  for (const checkpoint of await checkpointsOf(git, run)) {
    const known = written.get(checkpoint.sha);
    if (known && (checkpoint.state === null || checkpoint.noteError !== null)) {
      await git.writeNote(NOTES_REF, checkpoint.sha, `${JSON.stringify(known, null, 2)}\n`);
      rewritten++;
    } else if (!known && checkpoint.noteError !== null) {
      await git.removeNote(NOTES_REF, checkpoint.sha);
    }
  }
  return { movedAside, rewritten };
}

/** A refactor run with a backup recorded (`refactor run` stores it in the run's configuration). */
function hasBackup(run: GitRun): boolean {
  const stored = run.config as { backup?: { directory?: unknown } } | null;
  return run.workflow === 'refactor' && typeof stored?.backup?.directory === 'string';
}

/** The run's `ratchet refactor rollback`s (`backup-restore` events), oldest first. */
export async function rollbacksOf(ledger: Ledger, runId: string): Promise<Array<EventOf<'backup-restore'>>> {
  return (await ledger.events(runId, { types: ['backup-restore'] })).flatMap((event) =>
    event.type === 'backup-restore' ? [event] : [],
  );
}

/** What a `ratchet refactor rollback` restored (see the `backup-restore` event). */
export interface BackupRestore {
  target: string;
  backup: string;
  safetyBackup: string;
  branch: string | null;
  /**
   * Set when the run was not the one named: it was accepted after that run started, and the
   * rollback of that run (`refactor rollback <id> --force`) undid it too.
   */
  undoneBy?: string;
}

/**
 * Records a `ratchet refactor rollback` of the run: a `backup-restore` event (as the commands
 * that do not stream events record theirs, see `recordGitLockRemoval`), and the run's status
 * `rolled-back`. Returns the event.
 */
export async function recordRollback(
  ledger: Ledger,
  run: GitRun,
  restore: BackupRestore,
  clock: Clock = systemClock,
): Promise<EventOf<'backup-restore'>> {
  const envelope = createEnveloper(run.id, clock, await ledger.lastEventNumber(run.id));
  const event = envelope({
    type: 'backup-restore',
    ...restore,
    previousStatus: run.status,
  }) as EventOf<'backup-restore'>;
  await ledger.record(event);
  await ledger.updateRun(run.id, { status: 'rolled-back' });
  return event;
}

/**
 * The refusal for a command on a run `ratchet refactor rollback` restored the repository from:
 * when it was rolled back, and where the state it replaced is kept.
 */
export async function rolledBackError(ledger: Ledger, run: GitRun, nothingLeft: string): Promise<RatchetError> {
  const last = (await rollbacksOf(ledger, run.id)).at(-1);
  const restored = last
    ? `${last.target} was restored from the run's backup`
    : "the repository was restored from the run's backup";
  return new RatchetError(
    'usage',
    `Run ${run.id} was rolled back at ${last?.timestamp ?? run.updatedAt} (\`ratchet refactor rollback\`): ${restored}; ${nothingLeft}.`,
    {
      hint: last
        ? `The state the rollback replaced is kept in ${last.safetyBackup}.`
        : 'See `ratchet status` for the run.',
    },
  );
}
