/**
 * `ratchet accept --force` of a refactor run that stopped (Ctrl-C, kill -9) before the full
 * verifier ran on its last checkpoints: the accept goes ahead, as --force asks, and names the
 * checkpoints that passed only the fast verifier.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asGitRun, type GitRun } from '../../src/engine/git-run.js';
import { acceptRun } from '../../src/library.js';
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

/** A refactor run with three checkpoints, of which `verified` (indexes) passed the full verifier. */
async function refactorRun(status: 'interrupted' | 'completed', verified: number[]): Promise<GitRun> {
  const baseCommit = await repo.git.head();
  const worktree = repo.path('worktrees', 'run-1');
  await repo.git.addWorktree(worktree, 'ratchet/run-1', baseCommit);
  await ledger.createRun({
    id: 'run-1',
    workflow: 'refactor',
    repoRoot: repo.dir,
    feature: 'tidy',
    branch: 'ratchet/run-1',
    baseBranch: 'main',
    baseCommit,
    worktree,
  });
  const git = new Git(worktree, { env: repo.env });
  for (const n of [1, 2, 3]) {
    await writeFile(join(worktree, 'src', `part${n}.js`), `export const part = ${n};\n`);
    const commit = await git.commitAll(`checkpoint: batch-00${n} part ${n}`);
    if (commit === null) throw new Error('nothing committed');
    if (verified.includes(n))
      await ledger.record({
        type: 'checkpoint-verify',
        commit,
        level: 'full',
        id: `run-1:${n}`,
        runId: 'run-1',
        timestamp: new Date().toISOString(),
      });
  }
  return asGitRun(await ledger.updateRun('run-1', { status }));
}

describe('accept --force of a refactor run that stopped before its full verifier', () => {
  it('names the checkpoints after the newest fully verified one', async () => {
    const run = await refactorRun('interrupted', [1]);
    const result = await acceptRun(repo.dir, run, ledger, { force: true });
    expect(result.unverified).toEqual(['checkpoint: batch-002 part 2', 'checkpoint: batch-003 part 3']);
    expect((await ledger.getRun('run-1'))?.status).toBe('accepted');
  });

  it('names every checkpoint when none passed the full verifier', async () => {
    const run = await refactorRun('interrupted', []);
    const result = await acceptRun(repo.dir, run, ledger, { force: true });
    expect(result.unverified).toEqual([
      'checkpoint: batch-001 part 1',
      'checkpoint: batch-002 part 2',
      'checkpoint: batch-003 part 3',
    ]);
  });

  it('names none when the last checkpoint passed it', async () => {
    const stopped = await refactorRun('interrupted', [3]);
    expect((await acceptRun(repo.dir, stopped, ledger, { force: true })).unverified).toEqual([]);
  });

  it('names none for a completed run (its end ran the full verifier)', async () => {
    const completed = await refactorRun('completed', []);
    expect((await acceptRun(repo.dir, completed, ledger, { force: false })).unverified).toEqual([]);
  });
});
