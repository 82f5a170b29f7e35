import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Git } from '../../src/git/git.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;
beforeEach(async () => {
  repo = await createTempRepo();
});
afterEach(async () => {
  await repo.cleanup();
});

describe('worktrees', () => {
  it('adds a worktree on a new branch, lists it, commits in it and removes it', async () => {
    const { git } = repo;
    const base = await git.head();
    const path = repo.path('worktrees', 'run-1');
    await git.addWorktree(path, 'ratchet/run-1', 'HEAD');

    const list = await git.listWorktrees();
    expect(list).toEqual([
      {
        path: repo.dir,
        head: base,
        branch: 'main',
        locked: false,
        prunable: false,
      },
      {
        path,
        head: base,
        branch: 'ratchet/run-1',
        locked: false,
        prunable: false,
      },
    ]);

    const inside = new Git(path, { env: repo.env });
    expect(await inside.currentBranch()).toBe('ratchet/run-1');
    expect(await inside.root()).toBe(path);
    expect(await inside.commonDir()).toBe(await git.commonDir());
    await inside.addInfoExclude(['.ratchet/']);
    await writeFile(join(path, 'feature.ts'), 'export {};\n');
    const sha = await inside.commitAll('feat: in worktree');
    expect(await git.revParse('ratchet/run-1')).toBe(sha);
    expect(await git.hasChanges()).toBe(false);

    await writeFile(join(path, 'dirty.txt'), 'x');
    await expect(git.removeWorktree(path)).rejects.toMatchObject({
      code: 'git',
    });
    await git.removeWorktree(path, { force: true });
    expect(existsSync(path)).toBe(false);
    expect((await git.listWorktrees()).map((worktree) => worktree.branch)).toEqual(['main']);
    expect(await git.branchExists('ratchet/run-1')).toBe(true);
  });

  it('checks out an existing branch and prunes worktrees whose directory vanished', async () => {
    const { git } = repo;
    await git.createBranch('ratchet/run-2', 'main');
    const path = repo.path('wt2');
    await git.addWorktree(path, 'ratchet/run-2');
    expect((await git.listWorktrees())[1]?.branch).toBe('ratchet/run-2');

    await rm(path, { recursive: true, force: true });
    expect((await git.listWorktrees())[1]?.prunable).toBe(true);
    await git.pruneWorktrees();
    expect(await git.listWorktrees()).toHaveLength(1);
    // The branch is free again once the worktree is pruned.
    await git.deleteBranch('ratchet/run-2');
  });

  it("finds a linked worktree's lock files and those of given refs, never the main checkout's", async () => {
    const { git } = repo;
    const path = repo.path('wt-locks');
    await git.addWorktree(path, 'ratchet/run-5', 'HEAD');
    const inside = new Git(path, { env: repo.env });
    const common = await git.commonDir();
    expect(await git.gitDir()).toBe(common);
    const privateDir = await inside.gitDir();
    expect(privateDir).toBe(join(common, 'worktrees', 'wt-locks'));
    expect(await inside.findLockFiles(['refs/heads/ratchet/run-5', 'refs/notes/tdd-handoffs'])).toEqual([]);

    const mainIndexLock = join(common, 'index.lock');
    const planted = [
      mainIndexLock,
      join(common, 'HEAD.lock'),
      join(privateDir, 'index.lock'),
      join(privateDir, 'HEAD.lock'),
      join(common, 'refs', 'heads', 'ratchet', 'run-5.lock'),
      join(common, 'refs', 'notes', 'tdd-handoffs.lock'),
      join(common, 'refs', 'heads', 'main.lock'),
    ];
    await mkdir(join(common, 'refs', 'notes'), { recursive: true });
    for (const file of planted) await writeFile(file, '');

    expect(await inside.findLockFiles(['refs/heads/ratchet/run-5', 'refs/notes/tdd-handoffs'])).toEqual([
      join(privateDir, 'index.lock'),
      join(privateDir, 'HEAD.lock'),
      join(common, 'refs', 'heads', 'ratchet', 'run-5.lock'),
      join(common, 'refs', 'notes', 'tdd-handoffs.lock'),
    ]);
    // In the main checkout only the locks of the refs asked for are listed.
    expect(await git.findLockFiles()).toEqual([]);
    const notesLock = join(common, 'refs', 'notes', 'tdd-handoffs.lock');
    expect(await git.findLockFiles(['refs/notes/tdd-handoffs'])).toEqual([notesLock]);
    for (const file of planted) expect(existsSync(file), file).toBe(true);
    for (const bad of ['HEAD', 'refs/heads', 'refs/../index', 'refs/heads/x.lock', '-refs/heads/x']) {
      await expect(inside.findLockFiles([bad]), bad).rejects.toMatchObject({ code: 'git' });
    }
  });

  it('refuses to check out a branch already used by another worktree', async () => {
    await repo.git.addWorktree(repo.path('wt3'), 'ratchet/run-3', 'HEAD');
    await expect(repo.git.addWorktree(repo.path('wt4'), 'ratchet/run-3')).rejects.toMatchObject({ code: 'git' });
  });
});
