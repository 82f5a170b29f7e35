import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
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

  it('refuses to check out a branch already used by another worktree', async () => {
    await repo.git.addWorktree(repo.path('wt3'), 'ratchet/run-3', 'HEAD');
    await expect(repo.git.addWorktree(repo.path('wt4'), 'ratchet/run-3')).rejects.toMatchObject({ code: 'git' });
  });
});
