import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRatchetError } from '../../src/core/errors.js';
import { Git } from '../../src/git/git.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;
beforeEach(async () => {
  repo = await createTempRepo();
});
afterEach(async () => {
  await repo.cleanup();
});

describe('repository basics', () => {
  it('detects repositories and initialises new ones', async () => {
    expect(await Git.isRepository(repo.dir)).toBe(true);
    expect(await Git.isRepository(repo.path('does-not-exist'))).toBe(false);
    const plain = repo.path('plain');
    await mkdir(plain);
    expect(
      await Git.isRepository(plain, {
        env: { GIT_CEILING_DIRECTORIES: repo.root },
      }),
    ).toBe(false);

    const created = await Git.init(repo.path('fresh'), {
      env: repo.env,
      initialBranch: 'trunk',
    });
    expect(await Git.isRepository(created.dir)).toBe(true);
    expect(await created.currentBranch()).toBe('trunk');
    expect(await created.log()).toEqual([]);
    expect(await created.revParse('HEAD')).toBeNull();
  });

  it('reports root, common dir, branch, head and config', async () => {
    const { git } = repo;
    expect(await git.root()).toBe(repo.dir);
    expect(await git.commonDir()).toBe(join(repo.dir, '.git'));
    expect(await git.currentBranch()).toBe('main');
    const head = await git.head();
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    expect(await git.revParse('main')).toBe(head);
    expect(await git.revParse('no-such-ref')).toBeNull();
    expect(await git.configGet('user.email')).toBe('test@example.com');
    expect(await git.configGet('ratchet.missing')).toBeNull();

    await git.checkout(head);
    expect(await git.currentBranch()).toBeNull();
    await git.checkout('main');
    expect(await git.currentBranch()).toBe('main');
  });

  it('throws git errors that name the command and stderr', async () => {
    const error = await repo.git.createBranch('x', 'no-such-start').catch((caught: unknown) => caught);
    expect(isRatchetError(error, 'git')).toBe(true);
    expect((error as Error).message).toContain('git branch --quiet x no-such-start');
    expect((error as Error).message).toContain('no-such-start');
    await expect(repo.git.resetHard('--hard')).rejects.toMatchObject({
      code: 'git',
    });
  });
});

describe('status', () => {
  it('is clean after the initial commit and dirty with modified, staged and untracked files', async () => {
    const { git } = repo;
    expect(await git.status()).toEqual({ clean: true, files: [] });
    expect(await git.hasChanges()).toBe(false);

    await repo.write({ 'new dir/untracked file.txt': 'x\n' });
    const untracked = await git.status();
    expect(untracked.clean).toBe(false);
    expect(untracked.files).toEqual([{ path: 'new dir/untracked file.txt', index: '?', worktree: '?' }]);

    await repo.write({ 'README.md': 'changed\n' });
    repo.run('add', 'new dir/untracked file.txt');
    const files = (await git.status()).files.sort((a, b) => (a.path < b.path ? -1 : 1));
    expect(files).toEqual([
      { path: 'README.md', index: ' ', worktree: 'M' },
      { path: 'new dir/untracked file.txt', index: 'A', worktree: ' ' },
    ]);
    expect(await git.hasChanges()).toBe(true);
  });

  it('reports renames with their original path', async () => {
    repo.run('mv', 'README.md', 'DOCS.md');
    expect((await repo.git.status()).files).toEqual([
      { path: 'DOCS.md', origPath: 'README.md', index: 'R', worktree: ' ' },
    ]);
  });

  it('ignores ignored files and clean() keeps them', async () => {
    await repo.write({ '.gitignore': 'build/\n' });
    await repo.git.commitAll('ignore build');
    await repo.write({ 'build/out.js': 'x', 'scratch/tmp.txt': 'y' });
    expect((await repo.git.status()).files.map((file) => file.path)).toEqual(['scratch/tmp.txt']);
    await repo.git.clean();
    expect(await repo.git.hasChanges()).toBe(false);
    expect(await readFile(join(repo.dir, 'build/out.js'), 'utf8')).toBe('x');
  });
});

describe('commits, log and diffs', () => {
  it('commits everything and reads it back through log', async () => {
    const { git } = repo;
    const base = await git.head();
    await repo.write({
      'src/a.ts': 'export const a = 1;\n',
      'README.md': '# test\nmore\n',
    });
    const sha = await git.commitAll('feat: add a\n\nWith a body line.\n');
    expect(sha).toBe(await git.head());
    expect(await git.hasChanges()).toBe(false);

    const log = await git.log();
    expect(log).toHaveLength(2);
    expect(log[0]).toMatchObject({
      sha,
      subject: 'feat: add a',
      body: 'With a body line.',
      parents: [base],
    });
    expect(log[0]?.date).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(log[1]).toMatchObject({
      sha: base,
      subject: 'initial',
      body: '',
      parents: [],
    });
    expect(await git.log(`${base}..HEAD`)).toHaveLength(1);
    expect(await git.log(undefined, { maxCount: 1 })).toHaveLength(1);
  });

  it('returns null when there is nothing to commit, and commits empty when asked', async () => {
    const { git } = repo;
    const before = await git.head();
    expect(await git.commitAll('nothing')).toBeNull();
    expect(await git.head()).toBe(before);
    const empty = await git.commitAll('chore: empty', { allowEmpty: true });
    expect(empty).not.toBe(before);
    expect((await git.log(undefined, { maxCount: 1 }))[0]?.subject).toBe('chore: empty');
  });

  it('keeps commit messages that start with a dash', async () => {
    await repo.write({ 'x.txt': 'x\n' });
    await repo.git.commitAll('-n looks like an option');
    expect((await repo.git.log(undefined, { maxCount: 1 }))[0]?.subject).toBe('-n looks like an option');
  });

  it('diffs, counts lines and lists changed files', async () => {
    const { git } = repo;
    const base = await git.head();
    await repo.write({
      'README.md': '# title\nline 2\n',
      'bin.dat': '\u0000\u0001binary',
    });
    repo.run('config', 'diff.noprefix', 'true');
    const head = await git.commitAll('change');
    if (head === null) throw new Error('expected a commit');

    const patch = await git.diff(base, head);
    expect(patch).toContain('--- a/README.md');
    expect(patch).toContain('+++ b/README.md');
    expect(patch).toContain('-# test');
    expect(patch).toContain('+line 2');

    const stat = await git.diffStat(base, head);
    expect(stat.files.sort((a, b) => (a.path < b.path ? -1 : 1))).toEqual([
      { path: 'README.md', added: 2, deleted: 1, binary: false },
      { path: 'bin.dat', added: 0, deleted: 0, binary: true },
    ]);
    expect(stat).toMatchObject({ added: 2, deleted: 1 });
    expect((await git.changedFiles(base, head)).sort()).toEqual(['README.md', 'bin.dat']);

    // Against the working tree when `to` is omitted.
    await repo.write({ 'README.md': 'again\n' });
    expect(await git.changedFiles('HEAD')).toEqual(['README.md']);
    expect(await git.diff('HEAD')).toContain('+again');
    expect(await git.diffStat(head)).toMatchObject({ added: 1, deleted: 2 });
  });

  it('shows files at a revision and resets hard', async () => {
    const { git } = repo;
    const base = await git.head();
    await repo.write({ 'README.md': 'v2\n', 'docs/new.md': 'new\n' });
    await git.commitAll('v2');
    expect(await git.showFile(base, 'README.md')).toBe('# test\n');
    expect(await git.showFile('HEAD', './docs/new.md')).toBe('new\n');
    expect(await git.showFile(base, 'docs/new.md')).toBeNull();
    expect(await git.showFile('no-such-ref', 'README.md')).toBeNull();

    // Several revisions answered by one process: only a file counts (not a directory, not a bad ref).
    expect(await git.fileExistsAt(['HEAD', base, 'no-such-ref'], 'docs/new.md')).toEqual([true, false, false]);
    expect(await git.fileExistsAt(['HEAD'], './docs/new.md')).toEqual([true]);
    expect(await git.fileExistsAt(['HEAD'], 'docs')).toEqual([false]);
    // A line break would ask a second question of cat-file's stdin.
    await expect(git.fileExistsAt(['HEAD'], 'README.md\nHEAD:docs/new.md')).rejects.toMatchObject({ code: 'git' });

    await git.resetHard(base);
    expect(await git.head()).toBe(base);
    expect(await readFile(join(repo.dir, 'README.md'), 'utf8')).toBe('# test\n');
    expect(await git.isAncestor(base, 'HEAD')).toBe(true);
  });
});

describe('branches and info/exclude', () => {
  it('creates, lists and deletes branches', async () => {
    const { git } = repo;
    expect(await git.branchExists('ratchet/run-1')).toBe(false);
    await git.createBranch('ratchet/run-1', 'HEAD');
    await git.createBranch('ratchet/run-2', 'main');
    expect(await git.branchExists('ratchet/run-1')).toBe(true);
    expect(await git.listBranches('ratchet/')).toEqual(['ratchet/run-1', 'ratchet/run-2']);
    await expect(git.createBranch('ratchet/run-1', 'HEAD')).rejects.toMatchObject({ code: 'git' });

    await git.checkout('ratchet/run-1');
    await repo.write({ 'only-on-branch.txt': 'x\n' });
    await git.commitAll('branch work');
    await git.checkout('main');
    await expect(git.deleteBranch('ratchet/run-1')).rejects.toMatchObject({
      code: 'git',
    });
    await git.deleteBranch('ratchet/run-1', { force: true });
    await git.deleteBranch('ratchet/run-2');
    expect(await git.listBranches('ratchet/')).toEqual([]);
  });

  it('moves, creates and deletes refs and resets softly', async () => {
    const { git } = repo;
    const base = await git.head();
    await git.updateRef('refs/notes/aside', base);
    expect(await git.revParse('refs/notes/aside')).toBe(base);
    await git.deleteRef('refs/notes/aside');
    await git.deleteRef('refs/notes/aside');
    expect(await git.revParse('refs/notes/aside')).toBeNull();

    await repo.write({ 'soft.txt': 'kept\n' });
    await git.commitAll('to be uncommitted');
    await git.resetSoft(base);
    expect(await git.head()).toBe(base);
    expect((await git.status()).files).toEqual([{ path: 'soft.txt', index: 'A', worktree: ' ' }]);
  });

  it('appends missing info/exclude lines idempotently', async () => {
    const file = join(repo.dir, '.git', 'info', 'exclude');
    await rm(join(repo.dir, '.git', 'info'), { recursive: true, force: true });
    await repo.git.addInfoExclude(['.ratchet/ledger.db', '.ratchet/runs/']);
    await repo.git.addInfoExclude(['.ratchet/runs/', '.ratchet/ledger.db', '.ratchet/tmp/']);
    await repo.git.addInfoExclude(['.ratchet/tmp/']);
    expect(await readFile(file, 'utf8')).toBe('.ratchet/ledger.db\n.ratchet/runs/\n.ratchet/tmp/\n');

    await writeFile(file, '# comment without newline');
    await repo.git.addInfoExclude(['.ratchet/runs/']);
    expect(await readFile(file, 'utf8')).toBe('# comment without newline\n.ratchet/runs/\n');

    await repo.write({ '.ratchet/runs/r1/report.md': 'x' });
    expect(await repo.git.hasChanges()).toBe(false);
  });
});

describe('environment', () => {
  it('ignores GIT_DIR inherited from a parent git process', async () => {
    const other = await mkdtemp(join(tmpdir(), 'ratchet-other-'));
    try {
      const git = new Git(repo.dir, { env: { ...repo.env } });
      const saved = process.env.GIT_DIR;
      process.env.GIT_DIR = join(other, '.git');
      try {
        expect(await git.root()).toBe(repo.dir);
      } finally {
        if (saved === undefined) delete process.env.GIT_DIR;
        else process.env.GIT_DIR = saved;
      }
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});
