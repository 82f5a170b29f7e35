/**
 * `ratchet accept` of a run on a directory that is not a git repository: the run worked in a git
 * copy, and accepting copies its changes back into the original directory byte for byte, binary
 * and non-UTF-8 files included, and deletes what the run deleted.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asGitRun } from '../../src/engine/git-run.js';
import { acceptRun } from '../../src/library.js';
import { Git } from '../../src/git/git.js';
import { openLedger, type Ledger } from '../../src/ledger/ledger.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let copy: TempRepo;
let ledger: Ledger;

beforeEach(async () => {
  copy = await createTempRepo();
  ledger = await openLedger(copy.path('ledger.db'), { secrets: [] });
});

afterEach(async () => {
  await ledger.close();
  await copy.cleanup();
});

describe('accept of a run on a plain directory', () => {
  it('copies changed files back byte for byte and removes deleted ones', async () => {
    const original = copy.path('original');
    await mkdir(original, { recursive: true });
    await writeFile(join(original, 'gone.txt'), 'old\n');
    await writeFile(copy.path('repo', 'gone.txt'), 'old\n');
    await copy.git.commitAll('add gone.txt');
    const baseCommit = await copy.git.head();

    const worktree = copy.path('worktrees', 'run-1');
    await copy.git.addWorktree(worktree, 'ratchet/run-1', baseCommit);
    const binary = Buffer.from([0x00, 0xff, 0x80, 0x0a, 0xc3, 0x28, 0x00, 0x01]);
    const latin1 = Buffer.from('caf\xe9 cr\xe8me\n', 'latin1');
    await writeFile(join(worktree, 'logo.bin'), binary);
    await mkdir(join(worktree, 'docs'), { recursive: true });
    await writeFile(join(worktree, 'docs', 'menu.txt'), latin1);
    await rm(join(worktree, 'gone.txt'));
    await new Git(worktree, { env: copy.env }).commitAll('checkpoint: batch-001 files');

    const run = asGitRun(
      await ledger.createRun({
        id: 'run-1',
        workflow: 'refactor',
        repoRoot: copy.dir,
        feature: 'f',
        branch: 'ratchet/run-1',
        baseBranch: 'main',
        baseCommit,
        worktree,
        config: { target: original, isGit: false },
      }),
    );
    await ledger.updateRun('run-1', { status: 'completed' });

    const result = await acceptRun(copy.dir, { ...run, status: 'completed' }, ledger, { force: false });

    expect(result.copiedTo).toBe(original);
    expect(await readFile(join(original, 'logo.bin'))).toEqual(binary);
    expect(await readFile(join(original, 'docs', 'menu.txt'))).toEqual(latin1);
    expect(existsSync(join(original, 'gone.txt'))).toBe(false);
  });

  it('refuses, changing nothing, when a file the run changed was also changed in the original since', async () => {
    const original = copy.path('original');
    await mkdir(original, { recursive: true });
    await writeFile(join(original, 'notes.txt'), 'before\n');
    await writeFile(copy.path('repo', 'notes.txt'), 'before\n');
    await copy.git.commitAll('add notes.txt');
    const baseCommit = await copy.git.head();
    const worktree = copy.path('worktrees', 'run-2');
    await copy.git.addWorktree(worktree, 'ratchet/run-2', baseCommit);
    await writeFile(join(worktree, 'notes.txt'), 'the run\n');
    await writeFile(join(worktree, 'new.txt'), 'added by the run\n');
    await new Git(worktree, { env: copy.env }).commitAll('checkpoint: batch-001 notes');
    const run = asGitRun(
      await ledger.createRun({
        id: 'run-2',
        workflow: 'refactor',
        repoRoot: copy.dir,
        feature: 'f',
        branch: 'ratchet/run-2',
        baseBranch: 'main',
        baseCommit,
        worktree,
        config: { target: original, isGit: false },
      }),
    );
    // The user edits the original while the run is waiting for a decision.
    await writeFile(join(original, 'notes.txt'), 'the user\n');

    const error: unknown = await acceptRun(copy.dir, { ...run, status: 'completed' }, ledger, { force: false }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'usage', message: expect.stringContaining('notes.txt') as unknown });
    expect(await readFile(join(original, 'notes.txt'), 'utf8')).toBe('the user\n');
    expect(existsSync(join(original, 'new.txt'))).toBe(false);
    expect(await copy.git.head()).toBe(baseCommit);
    expect((await ledger.getRun('run-2'))?.status).toBe('running');
  });
});
