/**
 * Stale git lock files of a killed run: `clearStaleGitLocks` removes exactly the run's own (its
 * worktree's and its branch's and notes ref's), never the main checkout's or another run's, and
 * `rollback`, `repair-notes`, `accept` and `reject` clear them under the repository lock and record
 * it in the ledger. A fresh lock file gets a grace period: its git may still be finishing.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm, utimes, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NOTES_REF, type HandoffState } from '../../src/core/handoff.js';
import { asGitRun, type GitRun } from '../../src/engine/git-run.js';
import { acceptRun, rejectRun, repairNotes, rollbackRun } from '../../src/library.js';
import { clearStaleGitLocks } from '../../src/engine/stale-locks.js';
import { Git } from '../../src/git/git.js';
import { acquireRepoLock } from '../../src/git/repo-lock.js';
import { openLedger, type Ledger } from '../../src/ledger/ledger.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;
let ledger: Ledger;
let common: string;

beforeEach(async () => {
  repo = await createTempRepo();
  ledger = await openLedger(repo.path('ledger.db'), { secrets: [] });
  common = await repo.git.commonDir();
});

afterEach(async () => {
  await ledger.close();
  await repo.cleanup();
});

/** A run with its branch and worktree, as `ratchet tdd` makes them. */
async function newRun(id: string): Promise<{ run: GitRun; worktree: Git; privateDir: string }> {
  const path = repo.path('worktrees', id);
  const baseCommit = await repo.git.head();
  await repo.git.addWorktree(path, `ratchet/${id}`, baseCommit);
  const run = asGitRun(
    await ledger.createRun({
      id,
      workflow: 'tdd',
      repoRoot: repo.dir,
      feature: 'f',
      branch: `ratchet/${id}`,
      baseBranch: 'main',
      baseCommit,
      worktree: path,
    }),
  );
  const worktree = new Git(path, { env: repo.env });
  return { run, worktree, privateDir: await worktree.gitDir() };
}

/** Lock files as a git killed a minute ago left them (past the grace given to a git still finishing). */
async function plant(files: readonly string[], ageMs = 60_000): Promise<void> {
  const then = new Date(Date.now() - ageMs);
  for (const file of files) {
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, '');
    await utimes(file, then, then);
  }
}

function note(runId: string): HandoffState {
  return {
    phase: 'PLAN',
    nextPhase: 'RED',
    cycleNumber: 1,
    currentTest: { description: 'adds', testFile: 'a.test.js', implFile: 'a.js' },
    completedTests: [],
    pendingTests: ['adds'],
    testResult: null,
    error: null,
    errorDetails: null,
    retryCount: 0,
    runId,
  };
}

describe('clearStaleGitLocks', () => {
  it("removes the run's worktree and ref locks and nothing else, never the main checkout's index.lock", async () => {
    const { run, privateDir } = await newRun('run-1');
    const other = await newRun('run-2');
    const ours = [
      join(common, 'refs', 'heads', 'ratchet', 'run-1.lock'),
      join(common, 'refs', 'notes', 'tdd-handoffs.lock'),
      join(privateDir, 'index.lock'),
      join(privateDir, 'ORIG_HEAD.lock'),
    ];
    const notOurs = [
      join(common, 'index.lock'),
      join(common, 'HEAD.lock'),
      join(common, 'refs', 'heads', 'main.lock'),
      join(common, 'refs', 'heads', 'ratchet', 'run-2.lock'),
      join(other.privateDir, 'index.lock'),
    ];
    await plant([...ours, ...notOurs]);

    expect(await clearStaleGitLocks(repo.dir, run)).toEqual(ours);

    for (const file of ours) expect(existsSync(file), file).toBe(false);
    for (const file of notOurs) expect(existsSync(file), file).toBe(true);
    expect(await clearStaleGitLocks(repo.dir, run)).toEqual([]);
  });

  it("keeps the main checkout's index.lock even for a run whose worktree is the main checkout", async () => {
    const { run } = await newRun('run-3');
    const mainIndexLock = join(common, 'index.lock');
    await plant([mainIndexLock]);

    expect(await clearStaleGitLocks(repo.dir, { ...run, worktree: repo.dir })).toEqual([]);
    expect(await clearStaleGitLocks(repo.path('worktrees', 'run-3'), { ...run, worktree: repo.dir })).toEqual([]);
    expect(existsSync(mainIndexLock)).toBe(true);
  });

  it('gives a fresh lock file time to go away (its git may still be finishing), then removes it', async () => {
    const { run, privateDir } = await newRun('run-10');
    const finishing = join(privateDir, 'index.lock');
    const stuck = join(common, 'refs', 'notes', 'tdd-handoffs.lock');
    await plant([finishing, stuck], 0);
    const finished = sleep(150).then(() => rm(finishing));

    expect(await clearStaleGitLocks(repo.dir, run, { graceMs: 1000 })).toEqual([stuck]);
    await finished;
    expect(existsSync(stuck)).toBe(false);
  });

  it('does nothing for a worktree that is gone', async () => {
    const { run } = await newRun('run-4');
    await plant([join(common, 'index.lock')]);
    expect(await clearStaleGitLocks(repo.dir, { ...run, worktree: repo.path('worktrees', 'no-such-run') })).toEqual([]);
    expect(existsSync(join(common, 'index.lock'))).toBe(true);
  });
});

describe('rollback, repair-notes, accept and reject after a kill', () => {
  it('rollback clears the stale index.lock that would make its reset fail, and records it', async () => {
    const { run, worktree, privateDir } = await newRun('run-5');
    await writeFile(join(run.worktree, 'a.js'), 'export {};\n');
    const checkpoint = await worktree.commitAllWithNote(
      'plan: adds',
      {},
      { ref: NOTES_REF, text: JSON.stringify(note(run.id)) },
    );
    if (checkpoint === null) throw new Error('no checkpoint');
    await writeFile(join(run.worktree, 'b.js'), 'export {};\n');
    await worktree.commitAll('test: adds');
    const indexLock = join(privateDir, 'index.lock');
    await plant([indexLock, join(common, 'index.lock')]);
    // Without the removal git refuses, as `ratchet rollback` did after a kill -9.
    await expect(worktree.resetHard(checkpoint)).rejects.toThrow(/index\.lock/);

    // A target that is no commit is refused before anything is touched: the stale lock stays.
    await expect(rollbackRun(repo.dir, run, 'no-such-commit', ledger)).rejects.toThrow(
      'no-such-commit is not a commit.',
    );
    expect(existsSync(indexLock)).toBe(true);

    const result = await rollbackRun(repo.dir, run, checkpoint, ledger);

    expect(result).toMatchObject({ commit: checkpoint, removedLocks: [indexLock] });
    expect(await worktree.head()).toBe(checkpoint);
    expect(existsSync(join(common, 'index.lock'))).toBe(true);
    const recorded = await ledger.events(run.id, { types: ['git-lock-remove'] });
    expect(recorded).toMatchObject([{ type: 'git-lock-remove', runId: run.id, files: [indexLock] }]);
  });

  it('repair-notes clears a stale notes-ref lock before rewriting notes', async () => {
    const { run, worktree } = await newRun('run-6');
    await writeFile(join(run.worktree, 'a.js'), 'export {};\n');
    const commit = await worktree.commitAll('plan: adds');
    if (commit === null) throw new Error('no commit');
    const state = note(run.id);
    await ledger.record({
      type: 'note-write',
      commit,
      state,
      id: `${run.id}:1`,
      runId: run.id,
      timestamp: new Date().toISOString(),
    });
    const notesLock = join(common, 'refs', 'notes', 'tdd-handoffs.lock');
    await plant([notesLock]);

    const result = await repairNotes(repo.dir, run, ledger);

    expect(result).toEqual({ movedAside: null, rewritten: 1, removedLocks: [notesLock] });
    expect(JSON.parse((await repo.git.readNote(NOTES_REF, commit)) ?? 'null')).toEqual(state);
    expect(await ledger.events(run.id, { types: ['git-lock-remove'] })).toMatchObject([{ files: [notesLock] }]);
  });

  it('refuses while another process holds the repository lock, removing nothing', async () => {
    const { run, privateDir } = await newRun('run-7');
    const indexLock = join(privateDir, 'index.lock');
    await plant([indexLock]);
    const held = await acquireRepoLock(common, { runId: 'another-run' });
    try {
      await expect(repairNotes(repo.dir, run, ledger)).rejects.toMatchObject({ code: 'locked' });
      expect(existsSync(indexLock)).toBe(true);
    } finally {
      await held.release();
    }
  });

  it('reject clears a stale branch lock that would make `git branch -D` fail', async () => {
    const { run } = await newRun('run-8');
    const branchLock = join(common, 'refs', 'heads', 'ratchet', 'run-8.lock');
    await plant([branchLock]);

    const result = await rejectRun(repo.dir, run, ledger);

    expect(result).toEqual({ removedLocks: [branchLock] });
    expect(await repo.git.branchExists('ratchet/run-8')).toBe(false);
    expect(existsSync(run.worktree)).toBe(false);
    expect((await ledger.getRun(run.id))?.status).toBe('rejected');
  });

  it('accept clears a stale worktree index.lock, and refuses while a run holds the repository lock', async () => {
    const { run, worktree, privateDir } = await newRun('run-9');
    await writeFile(join(run.worktree, 'a.js'), 'export {};\n');
    const tip = await worktree.commitAll('feat: adds');
    const indexLock = join(privateDir, 'index.lock');
    await plant([indexLock]);
    const held = await acquireRepoLock(common, { runId: 'run-9' });
    try {
      await expect(acceptRun(repo.dir, run, ledger, { force: true })).rejects.toMatchObject({ code: 'locked' });
    } finally {
      await held.release();
    }

    const result = await acceptRun(repo.dir, run, ledger, { force: true });

    expect(result).toMatchObject({ mode: 'fast-forward', commit: tip, removedLocks: [indexLock] });
    expect(await repo.git.head()).toBe(tip);
  });
});
