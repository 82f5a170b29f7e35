/**
 * The TDD workspace over a git worktree never reads or writes through a symbolic link an agent
 * planted there: restoring a protected file through `src -> <the user's checkout>/src` would
 * have written into the user's checkout, and reading through one would put any file in a prompt.
 */
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGitWorkspace, linkLeadsOutside } from '../../src/engine/git-workspace.js';
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

describe('the git workspace finds links that lead outside the worktree', () => {
  it('lists the changed paths that are such links, from git status, and nothing else', async () => {
    await symlink('../README.md', join(repo.dir, 'test', 'readme.md'));
    await symlink('../../elsewhere', join(repo.dir, 'test', 'up.md'));
    const changed = await workspace.changedFilesSince(await workspace.head());
    expect(changed).toEqual(expect.arrayContaining(['src', 'test/readme.md', 'test/up.md']));
    // `src` is the planted link to the user's directory (absolute); test/up.md climbs out.
    expect(await workspace.escapingLinks(changed)).toEqual(['src', 'test/up.md']);
  });
});

describe('linkLeadsOutside', () => {
  it.each([
    ['a.txt', '/etc/passwd', true],
    ['a.txt', 'C:\\Users\\me', true],
    ['a.txt', '../a.txt', true],
    ['dir/a.txt', '../b.txt', false],
    ['dir/a.txt', '../../b.txt', true],
    ['dir/a.txt', 'sub/../../../b', true],
    ['dir/a.txt', './b.txt', false],
    ['a.txt', '..', true],
    ['dir/a.txt', '..', false],
  ])('%s -> %s: %s', (path, target, outside) => {
    expect(linkLeadsOutside(path, target)).toBe(outside);
  });
});
