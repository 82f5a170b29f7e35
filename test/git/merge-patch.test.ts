import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRatchetError } from '../../src/core/errors.js';
import { Git } from '../../src/git/git.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;
beforeEach(async () => {
  repo = await createTempRepo({ files: { 'app.txt': 'one\ntwo\nthree\n' } });
});
afterEach(async () => {
  await repo.cleanup();
});

async function commitOnBranch(branch: string, files: Record<string, string>, message: string): Promise<string> {
  await repo.git.checkout(branch);
  await repo.write(files);
  const sha = await repo.git.commitAll(message);
  if (sha === null) throw new Error('expected a commit');
  return sha;
}

describe('merging', () => {
  it('fast-forwards and refuses a non-fast-forward', async () => {
    const { git } = repo;
    const base = await git.head();
    await git.createBranch('ratchet/run-1', 'main');
    const tip = await commitOnBranch('ratchet/run-1', { 'app.txt': 'one\nTWO\nthree\n' }, 'feat: two');
    await git.checkout('main');
    expect(await git.isAncestor('main', 'ratchet/run-1')).toBe(true);
    expect(await git.isAncestor('ratchet/run-1', 'main')).toBe(false);
    expect(await git.mergeFastForward('ratchet/run-1')).toBe(tip);

    await git.createBranch('side', base);
    await commitOnBranch('side', { 'side.txt': 's\n' }, 'side');
    await git.checkout('main');
    await expect(git.mergeFastForward('side')).rejects.toMatchObject({
      code: 'git',
    });
    expect(await git.head()).toBe(tip);
  });

  it('creates a merge commit with the given message', async () => {
    const { git } = repo;
    await git.createBranch('ratchet/run-2', 'main');
    const theirs = await commitOnBranch('ratchet/run-2', { 'feature.txt': 'f\n' }, 'feat: f');
    const ours = await commitOnBranch('main', { 'main.txt': 'm\n' }, 'chore: m');
    const merged = await git.merge('ratchet/run-2', 'merge: ratchet run-2');
    const [entry] = await git.log(undefined, { maxCount: 1 });
    expect(entry).toMatchObject({
      sha: merged,
      subject: 'merge: ratchet run-2',
      parents: [ours, theirs],
    });
    expect(await git.hasChanges()).toBe(false);
  });

  it('aborts a conflicting merge and reports the conflict', async () => {
    const { git } = repo;
    await git.createBranch('ratchet/run-3', 'main');
    await commitOnBranch('ratchet/run-3', { 'app.txt': 'one\ntheirs\nthree\n' }, 'theirs');
    const ours = await commitOnBranch('main', { 'app.txt': 'one\nours\nthree\n' }, 'ours');

    const error = await git.merge('ratchet/run-3', 'merge').catch((caught: unknown) => caught);
    expect(isRatchetError(error, 'git')).toBe(true);
    expect(error).toMatchObject({
      details: { conflict: true, files: ['app.txt'] },
    });
    expect(await git.head()).toBe(ours);
    expect(await git.revParse('MERGE_HEAD')).toBeNull();
    expect(await git.status()).toEqual({ clean: true, files: [] });
    expect(await readFile(join(repo.dir, 'app.txt'), 'utf8')).toBe('one\nours\nthree\n');
  });
});

describe('patches and bundles', () => {
  it('checks and applies a good patch, and rejects a bad one', async () => {
    const { git } = repo;
    const base = await git.head();
    await repo.write({ 'app.txt': 'one\n2\nthree\n', 'added.txt': 'new\n' });
    repo.run('add', '-N', 'added.txt');
    const patch = await git.diff('HEAD');
    await git.resetHard(base);
    await git.clean();

    expect(await git.applyCheck(patch)).toEqual({ ok: true, error: '' });
    await git.apply(patch);
    expect(await readFile(join(repo.dir, 'app.txt'), 'utf8')).toBe('one\n2\nthree\n');
    expect(await readFile(join(repo.dir, 'added.txt'), 'utf8')).toBe('new\n');

    // Applying twice no longer matches.
    const again = await git.applyCheck(patch);
    expect(again.ok).toBe(false);
    expect(again.error).toContain('app.txt');
    await expect(git.apply(patch)).rejects.toMatchObject({ code: 'git' });

    const garbage = await git.applyCheck('not a patch at all\n');
    expect(garbage.ok).toBe(false);
    expect(garbage.error).not.toBe('');
  });

  it('creates a bundle that git can clone', async () => {
    const { git } = repo;
    await git.createBranch('ratchet/run-4', 'main');
    await commitOnBranch('ratchet/run-4', { 'x.txt': 'x\n' }, 'x');
    const bundle = repo.path('backup.bundle');
    await git.bundleCreate(bundle);

    const clone = repo.path('clone');
    execFileSync('git', ['clone', '--quiet', bundle, clone], {
      env: { ...process.env, ...repo.env },
    });
    const cloned = new Git(clone, { env: repo.env });
    expect(await cloned.revParse('origin/ratchet/run-4')).toBe(await git.revParse('ratchet/run-4'));
    expect(await cloned.showFile('origin/ratchet/run-4', 'x.txt')).toBe('x\n');
  });
});
