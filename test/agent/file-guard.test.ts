import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileGuard } from '../../src/agent/file-guard.js';
import { ToolError } from '../../src/agent/tool-error.js';
import { OPEN_POLICY, createTempWorktree, type TempWorktree } from './agent-fixtures.js';

let tmp: TempWorktree;

beforeEach(async () => {
  tmp = await createTempWorktree({ 'src/app.ts': 'export {};\n', 'test/app.test.ts': '', '.git/config': '[core]\n' });
});
afterEach(async () => {
  await tmp.cleanup();
});

/** The guard's reasons, as the model reads them. */
const OUTSIDE = /^Access denied: '.*' is outside the worktree\./;
const LINK_OUTSIDE = /^Access denied: '.*' goes through a symbolic link that points outside the worktree\./;
const DANGLING = /^Access denied: '.*' goes through a symbolic link whose target does not exist\./;
const IN_GIT = /^Access denied: '.*' is inside \.git\./;
const NOT_READABLE = /^Reading '.*' is not allowed in this stage\. Readable paths: /;
const NOT_WRITABLE = /^Writing '.*' is not allowed in this stage\. Writable paths: /;
const PROTECTED = /^Writing '.*' is not allowed in this stage: it is protected by /;

/** The refusal of `promise`, which must be a ToolError for `reason` (not a refusal for another). */
async function rejection(promise: Promise<unknown>, reason: RegExp): Promise<ToolError> {
  const error: unknown = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolError);
  expect((error as ToolError).message).toMatch(reason);
  return error as ToolError;
}

describe('createFileGuard', () => {
  it('resolves relative paths against the worktree', async () => {
    const guard = createFileGuard(tmp.dir, OPEN_POLICY);
    expect(await guard.resolveRead('src/app.ts')).toBe(join(tmp.dir, 'src/app.ts'));
    expect(await guard.resolveRead('./src/../src/app.ts')).toBe(join(tmp.dir, 'src/app.ts'));
    expect(await guard.resolveWrite('new/dir/file.ts')).toBe(join(tmp.dir, 'new/dir/file.ts'));
    expect(guard.relative(join(tmp.dir, 'src/app.ts'))).toBe('src/app.ts');
    expect(guard.relative(tmp.dir)).toBe('.');
  });

  it('accepts absolute paths inside the worktree and refuses others', async () => {
    const guard = createFileGuard(tmp.dir, OPEN_POLICY);
    expect(await guard.resolveRead(join(tmp.dir, 'src/app.ts'))).toBe(join(tmp.dir, 'src/app.ts'));
    await rejection(guard.resolveRead('/etc/passwd'), OUTSIDE);
    await rejection(guard.resolveWrite(join(tmp.root, 'sibling.txt')), OUTSIDE);
  });

  it('refuses .. segments that leave the worktree', async () => {
    const guard = createFileGuard(tmp.dir, OPEN_POLICY);
    await rejection(guard.resolveRead('../outside.txt'), OUTSIDE);
    await rejection(guard.resolveWrite('src/../../outside.txt'), OUTSIDE);
    await rejection(guard.resolveRead(`${tmp.dir}/../worktree-other/x`), OUTSIDE);
  });

  it('works when the worktree is reached through a symlinked directory', async () => {
    const link = join(tmp.root, 'link-to-worktree');
    await symlink(tmp.dir, link);
    const guard = createFileGuard(link, OPEN_POLICY);
    expect(await guard.resolveRead('src/app.ts')).toBe(join(tmp.dir, 'src/app.ts'));
    expect(await guard.resolveRead(join(link, 'src/app.ts'))).toBe(join(tmp.dir, 'src/app.ts'));
    expect(await guard.resolveRead(join(tmp.dir, 'src/app.ts'))).toBe(join(tmp.dir, 'src/app.ts'));
    expect(guard.relative(join(link, 'src/app.ts'))).toBe('src/app.ts');
  });

  it('refuses a symlink to a file outside the worktree', async () => {
    await symlink('/etc/passwd', join(tmp.dir, 'passwd'));
    const guard = createFileGuard(tmp.dir, OPEN_POLICY);
    await rejection(guard.resolveRead('passwd'), LINK_OUTSIDE);
    await rejection(guard.resolveWrite('passwd'), LINK_OUTSIDE);
  });

  it('refuses paths under a symlinked directory that points outside', async () => {
    await symlink('/etc', join(tmp.dir, 'etc'));
    const guard = createFileGuard(tmp.dir, OPEN_POLICY);
    await rejection(guard.resolveRead('etc/hostname'), LINK_OUTSIDE);
    // Not-yet-existing files and directories resolve through their nearest existing ancestor.
    await rejection(guard.resolveWrite('etc/new-dir/deeper/file.txt'), LINK_OUTSIDE);
  });

  it('refuses writing into a not-yet-existing directory under an escaping symlink', async () => {
    const outside = join(tmp.root, 'outside');
    await mkdir(outside);
    await symlink(outside, join(tmp.dir, 'escape'));
    const guard = createFileGuard(tmp.dir, OPEN_POLICY);
    await rejection(guard.resolveWrite('escape/not/yet/created.txt'), LINK_OUTSIDE);
  });

  it('refuses dangling symlinks, which a write would follow', async () => {
    await symlink(join(tmp.root, 'does-not-exist.txt'), join(tmp.dir, 'dangling'));
    const guard = createFileGuard(tmp.dir, OPEN_POLICY);
    await rejection(guard.resolveWrite('dangling'), DANGLING);
  });

  it('allows symlinks whose target stays inside the worktree and checks globs on the target', async () => {
    await symlink(join(tmp.dir, 'test'), join(tmp.dir, 'tests-alias'));
    const guard = createFileGuard(tmp.dir, { read: ['**'], write: ['**'], denyWrite: ['test/**'] });
    expect(await guard.resolveRead('tests-alias/app.test.ts')).toBe(join(tmp.dir, 'test/app.test.ts'));
    const error = await rejection(guard.resolveWrite('tests-alias/app.test.ts'), PROTECTED);
    expect(error.message).toContain("Writing 'test/app.test.ts'");
  });

  it('refuses anything inside .git', async () => {
    const guard = createFileGuard(tmp.dir, OPEN_POLICY);
    await rejection(guard.resolveRead('.git/config'), IN_GIT);
    await rejection(guard.resolveWrite('.git/hooks/pre-commit'), IN_GIT);
    await rejection(guard.resolveWrite('sub/.git/HEAD'), IN_GIT);
    await rejection(guard.resolveRead('.git'), IN_GIT);
  });

  it('applies read, write and denyWrite globs with dot files', async () => {
    const guard = createFileGuard(tmp.dir, {
      read: ['src/**', 'test/**', '*.md'],
      write: ['src/**', '.config/**'],
      denyWrite: ['**/*.test.ts'],
    });
    expect(await guard.resolveRead('src/app.ts')).toBe(join(tmp.dir, 'src/app.ts'));
    const readError = await rejection(guard.resolveRead('package.json'), NOT_READABLE);
    expect(readError.message).toContain('Readable paths: src/**, test/**, *.md');
    expect(await guard.resolveWrite('.config/settings.json')).toBe(join(tmp.dir, '.config/settings.json'));
    const writeError = await rejection(guard.resolveWrite('README.md'), NOT_WRITABLE);
    expect(writeError.message).toContain('Writable paths: src/**, .config/**');
    const deniedError = await rejection(guard.resolveWrite('src/app.test.ts'), PROTECTED);
    expect(deniedError.message).toContain('protected by **/*.test.ts');
    expect(guard.allowsRead('src/x.ts')).toBe(true);
    expect(guard.allowsRead('secret.txt')).toBe(false);
  });

  it('refuses empty paths and the worktree itself as a write target', async () => {
    const guard = createFileGuard(tmp.dir, OPEN_POLICY);
    await rejection(guard.resolveRead(''), /^The path is empty/);
    await rejection(guard.resolveWrite('.'), /^'\.' is the worktree directory itself/);
    expect(await guard.resolveSearchRoot(undefined)).toBe(tmp.dir);
  });
});
