/**
 * The TDD workspace over a git worktree never reads or writes through a symbolic link an agent
 * planted there: restoring a protected file through `src -> <the user's checkout>/src` would
 * have written into the user's checkout, and reading through one would put any file in a prompt.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRatchetError } from '../../src/core/errors.js';
import { createGitWorkspace } from '../../src/workflows/tdd/git-workspace.js';
import type { Workspace } from '../../src/workflows/tdd/ports.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;
let workspace: Workspace;
let outside: string;

beforeEach(async () => {
  repo = await createTempRepo({
    files: { 'src/math.js': 'export const add = () => 0;\n', 'test/math.test.js': 'test\n' },
  });
  workspace = createGitWorkspace(repo.dir, repo.git);
  outside = repo.path('users-checkout');
  await mkdir(join(outside, 'src'), { recursive: true });
  await writeFile(join(outside, 'src', 'secret.js'), "the user's file\n");
  // The agent replaces src/ with a link to a directory outside the worktree.
  await rm(join(repo.dir, 'src'), { recursive: true });
  await symlink(join(outside, 'src'), join(repo.dir, 'src'));
});

afterEach(async () => {
  await repo.cleanup();
});

/** Undoes the planted `src` link of `beforeEach` (after removing it): the tracked files come back. */
async function restoreSrc(): Promise<void> {
  repo.run('checkout', '--', 'src');
  expect(await workspace.unsafeEntries(await workspace.changedFilesSince(await workspace.head()))).toEqual([]);
}

describe('the git workspace and planted symbolic links', () => {
  it('writes a real file in the worktree, removing the link, never into its target', async () => {
    await workspace.writeFile('src/math.test.js', 'restored\n');
    expect(existsSync(join(outside, 'src', 'math.test.js'))).toBe(false);
    expect(lstatSync(join(repo.dir, 'src')).isDirectory()).toBe(true);
    expect(readFileSync(join(repo.dir, 'src', 'math.test.js'), 'utf8')).toBe('restored\n');
    expect(readFileSync(join(outside, 'src', 'secret.js'), 'utf8')).toBe("the user's file\n");
  });

  it('deletes nothing through a link', async () => {
    await workspace.removeFile('src/secret.js');
    expect(readFileSync(join(outside, 'src', 'secret.js'), 'utf8')).toBe("the user's file\n");
  });

  it('reads nothing through a link, nor a file that is a link', async () => {
    expect(await workspace.readFile('src/secret.js')).toBeNull();
    await symlink(join(outside, 'src', 'secret.js'), join(repo.dir, 'test-list.md'));
    expect(await workspace.readFile('test-list.md')).toBeNull();
  });

  it('gives no content for a path that is a directory in the commit', async () => {
    expect(await workspace.readFileAt(await workspace.head(), 'test')).toBeNull();
    expect(await workspace.readFileAt(await workspace.head(), 'test/math.test.js')).toBe('test\n');
  });
});

describe('the git workspace finds what no checkpoint may hold', () => {
  it('lists the changed paths that are links leading outside, from git status, and nothing else', async () => {
    await symlink('../README.md', join(repo.dir, 'test', 'readme.md'));
    await symlink('../../elsewhere', join(repo.dir, 'test', 'up.md'));
    const changed = await workspace.changedFilesSince(await workspace.head());
    expect(changed).toEqual(expect.arrayContaining(['src', 'test/readme.md', 'test/up.md']));
    // `src` is the planted link to the user's directory (absolute); test/up.md climbs out.
    expect(await workspace.unsafeEntries(changed)).toEqual([
      { kind: 'link-outside', path: 'src', detail: `points to the absolute path ${join(outside, 'src')}` },
      { kind: 'link-outside', path: 'test/up.md', detail: 'climbs above the repository root' },
    ]);
  });

  it('resolves a chain of links for real: a -> d/x/.. with d/x -> .. leaves the worktree', async () => {
    // mkdir d && ln -s .. d/x && ln -s d/x/.. a: each target alone stays inside.
    await mkdir(join(repo.dir, 'd'));
    await symlink('..', join(repo.dir, 'd', 'x'));
    await symlink('d/x/..', join(repo.dir, 'a'));
    // The kernel's resolution (Node's own `realpathSync` normalises `d/x/..` lexically first, as
    // the check this replaces did, and says `repo/d`).
    expect(realpathSync.native(join(repo.dir, 'a'))).toBe(repo.root);
    const unsafe = await workspace.unsafeEntries(['a', 'd/x']);
    expect(unsafe).toEqual([{ kind: 'link-outside', path: 'a', detail: 'climbs above the repository root' }]);
  });

  it('finds a nested repository and a gitlink staged for it, and takes both out', async () => {
    await rm(join(repo.dir, 'src'));
    await restoreSrc();
    const sub = join(repo.dir, 'sub');
    await mkdir(sub);
    await writeFile(join(sub, 'x.txt'), 'x\n');
    execFileSync('git', ['init', '-q'], { cwd: sub, env: { ...process.env, ...repo.env } });
    execFileSync('git', ['add', '-A'], { cwd: sub, env: { ...process.env, ...repo.env } });
    execFileSync('git', ['-c', 'user.name=A', '-c', 'user.email=a@x', 'commit', '-qm', 'x'], {
      cwd: sub,
      env: { ...process.env, ...repo.env },
    });
    const head = await workspace.head();
    expect(await workspace.unsafeEntries(await workspace.changedFilesSince(head))).toEqual([
      { kind: 'nested-repository', path: 'sub', detail: 'sub/.git exists' },
    ]);
    repo.run('add', 'sub');
    const unsafe = await workspace.unsafeEntries(await workspace.changedFilesSince(head));
    expect(unsafe.map((entry) => `${entry.kind} ${entry.path}`)).toEqual(['nested-repository sub', 'gitlink sub']);

    await workspace.removeUnsafeEntries(unsafe, head);
    expect(existsSync(sub)).toBe(false);
    expect(repo.run('ls-files', '--stage', 'sub')).toBe('');
    expect(await workspace.changedFilesSince(head)).toEqual([]);
  });

  it('takes out a repository made over tracked files, and puts the files back', async () => {
    await rm(join(repo.dir, 'src'));
    await restoreSrc();
    const head = await workspace.head();
    execFileSync('git', ['init', '-q', 'test'], { cwd: repo.dir, env: { ...process.env, ...repo.env } });
    await writeFile(join(repo.dir, 'test', 'math.test.js'), 'changed\n');
    const unsafe = await workspace.unsafeEntries(await workspace.changedFilesSince(head));
    expect(unsafe.map((entry) => `${entry.kind} ${entry.path}`)).toEqual(['nested-repository test']);
    await workspace.removeUnsafeEntries(unsafe, head);
    expect(existsSync(join(repo.dir, 'test', '.git'))).toBe(false);
    expect(readFileSync(join(repo.dir, 'test', 'math.test.js'), 'utf8')).toBe('test\n');
    expect(await workspace.changedFilesSince(head)).toEqual([]);
  });

  it('removes a link leading outside and puts back what the commit had at its path', async () => {
    const head = await workspace.head();
    await rm(join(repo.dir, 'test', 'math.test.js'));
    await symlink('/etc/passwd', join(repo.dir, 'test', 'math.test.js'));
    const unsafe = await workspace.unsafeEntries(await workspace.changedFilesSince(head));
    expect(unsafe.map((entry) => entry.path)).toEqual(['src', 'test/math.test.js']);
    await workspace.removeUnsafeEntries(unsafe, head);
    expect(lstatSync(join(repo.dir, 'test', 'math.test.js')).isFile()).toBe(true);
    expect(readFileSync(join(repo.dir, 'test', 'math.test.js'), 'utf8')).toBe('test\n');
    // The planted directory link is gone and the tracked directory is back; its target untouched.
    expect(lstatSync(join(repo.dir, 'src')).isDirectory()).toBe(true);
    expect(readFileSync(join(repo.dir, 'src', 'math.js'), 'utf8')).toBe('export const add = () => 0;\n');
    expect(readFileSync(join(outside, 'src', 'secret.js'), 'utf8')).toBe("the user's file\n");
  });

  it('refuses to checkpoint a tree holding a nested repository (made by what the gates ran)', async () => {
    await rm(join(repo.dir, 'src'));
    await restoreSrc();
    execFileSync('git', ['init', '-q', 'fixture'], { cwd: repo.dir, env: { ...process.env, ...repo.env } });
    const head = await workspace.head();
    const error = await workspace.checkpoint('feat: x').catch((caught: unknown) => caught);
    expect(isRatchetError(error, 'gate-failed')).toBe(true);
    expect((error as Error).message).toContain('fixture (a nested git repository');
    expect(await workspace.head()).toBe(head);
    expect(repo.run('ls-files', '--stage', 'fixture')).toBe('');
  });
});
