/**
 * `ratchet accept` when the user's branch moved on and changed the same lines as the run: the
 * merge is refused as a usage error naming the files, nothing is merged, and after the user
 * merges by hand, accept records the run and removes its worktree. Accept, reject and rollback
 * refuse a run already accepted or rejected.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asGitRun, type GitRun } from '../../src/engine/git-run.js';
import { acceptRun, rejectRun, rollbackRun } from '../../src/library.js';
import { Git } from '../../src/git/git.js';
import { openLedger, type Ledger } from '../../src/ledger/ledger.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;
let ledger: Ledger;

beforeEach(async () => {
  repo = await createTempRepo({ files: { 'src/app.js': 'export const version = 1;\n' } });
  ledger = await openLedger(repo.path('ledger.db'), { secrets: [] });
});

afterEach(async () => {
  await ledger.close();
  await repo.cleanup();
});

async function conflictingRun(): Promise<GitRun> {
  const baseCommit = await repo.git.head();
  const worktree = repo.path('worktrees', 'run-1');
  await repo.git.addWorktree(worktree, 'ratchet/run-1', baseCommit);
  await writeFile(join(worktree, 'src', 'app.js'), 'export const version = 2;\n');
  await new Git(worktree, { env: repo.env }).commitAll('feat: version 2');
  // Meanwhile the user changed the same line on main.
  await writeFile(join(repo.dir, 'src', 'app.js'), 'export const version = 3;\n');
  await repo.git.commitAll('user: version 3');
  await ledger.createRun({
    id: 'run-1',
    workflow: 'tdd',
    repoRoot: repo.dir,
    feature: 'f',
    branch: 'ratchet/run-1',
    baseBranch: 'main',
    baseCommit,
    worktree,
  });
  return asGitRun(await ledger.updateRun('run-1', { status: 'completed' }));
}

describe('accept of a run that conflicts with the branch it started from', () => {
  it('refuses with the files and what to do, leaving the checkout as it was', async () => {
    const run = await conflictingRun();
    const head = await repo.git.head();

    await expect(acceptRun(repo.dir, run, ledger, { force: false })).rejects.toMatchObject({
      code: 'usage',
      message: 'Run run-1 conflicts with what changed on main since it started (src/app.js); nothing was merged.',
      hint: expect.stringContaining('git merge ratchet/run-1') as unknown,
    });
    expect(await repo.git.head()).toBe(head);
    expect((await repo.git.status()).clean).toBe(true);
    expect(await readFile(join(repo.dir, 'src', 'app.js'), 'utf8')).toBe('export const version = 3;\n');
    expect((await ledger.getRun('run-1'))?.status).toBe('completed');
    expect(existsSync(run.worktree)).toBe(true);
  });

  it('accepts once the user merged the run by hand, removing the worktree', async () => {
    const run = await conflictingRun();
    repo.run('merge', '-s', 'ours', '--no-edit', 'ratchet/run-1');
    const merged = await repo.git.head();

    const result = await acceptRun(repo.dir, run, ledger, { force: false });
    expect(result.commit).toBe(merged);
    expect(existsSync(run.worktree)).toBe(false);
    expect((await ledger.getRun('run-1'))?.status).toBe('accepted');
  });
});

describe('accept and rollback say what state the run is in', () => {
  it('calls a run left `running` by a killed process what it is, and refuses to roll back an accepted run', async () => {
    const baseCommit = await repo.git.head();
    const worktree = repo.path('worktrees', 'run-2');
    await repo.git.addWorktree(worktree, 'ratchet/run-2', baseCommit);
    const run = asGitRun(
      await ledger.createRun({
        id: 'run-2',
        workflow: 'tdd',
        repoRoot: repo.dir,
        feature: 'f',
        branch: 'ratchet/run-2',
        baseBranch: 'main',
        baseCommit,
        worktree,
      }),
    );

    await expect(acceptRun(repo.dir, run, ledger, { force: false })).rejects.toMatchObject({
      code: 'usage',
      message: 'Run run-2 did not complete: its process is gone (killed?).',
      hint: expect.stringContaining('ratchet resume run-2') as unknown,
    });
    await acceptRun(repo.dir, run, ledger, { force: true });
    const accepted = asGitRun((await ledger.getRun('run-2')) ?? run);
    await expect(rollbackRun(repo.dir, accepted, baseCommit, ledger)).rejects.toMatchObject({
      code: 'usage',
      message: 'Run run-2 was accepted: its commits are on main.',
    });
    await expect(rejectRun(repo.dir, accepted, ledger)).rejects.toMatchObject({
      code: 'usage',
      message: 'Run run-2 was already accepted into main; it cannot be rejected.',
      hint: expect.stringContaining('git revert') as unknown,
    });
    expect((await ledger.getRun('run-2'))?.status).toBe('accepted');
  });

  it('refuses to reject a run twice, as accept refuses a second time', async () => {
    const run = await conflictingRun();
    await rejectRun(repo.dir, run, ledger);
    const rejected = asGitRun((await ledger.getRun('run-1')) ?? run);
    expect(rejected.status).toBe('rejected');
    expect(existsSync(run.worktree)).toBe(false);
    await expect(rejectRun(repo.dir, rejected, ledger)).rejects.toMatchObject({
      code: 'usage',
      message: 'Run run-1 was already rejected: its worktree and branch ratchet/run-1 were removed then.',
    });
    await expect(acceptRun(repo.dir, rejected, ledger, { force: true })).rejects.toMatchObject({
      code: 'usage',
      message: 'Run run-1 was already rejected.',
    });
  });
});
