import { access, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RatchetError, isRatchetError } from '../../src/core/errors.js';
import { applyPatchAtomically, revertWorkingTree } from '../../src/edit/apply.js';
import { normaliseDiff, parseUnifiedDiff } from '../../src/edit/unified-diff.js';
import { Git } from '../../src/git/git.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { numberedLines, realDiff } from './helpers.js';

let repo: TempRepo;
beforeEach(async () => {
  repo = await createTempRepo({
    files: { 'src/a.ts': numberedLines(10, 'a'), 'src/b.ts': numberedLines(10, 'b'), 'src/c.ts': 'c\n' },
  });
});
afterEach(async () => {
  await repo.cleanup();
});

const read = (path: string): Promise<string> => readFile(join(repo.dir, path), 'utf8');
const exists = (path: string): Promise<boolean> =>
  access(join(repo.dir, path)).then(
    () => true,
    () => false,
  );

async function caught(promise: Promise<unknown>): Promise<RatchetError> {
  try {
    await promise;
  } catch (error) {
    if (isRatchetError(error)) return error;
    throw error;
  }
  throw new Error('expected a RatchetError');
}

/**
 * A real Git whose `apply` writes all but the last file section and then fails, as when git
 * dies part-way through writing (which a root-run test cannot provoke with permissions).
 */
class HalfApplyingGit extends Git {
  override async apply(patchText: string): Promise<void> {
    const patch = parseUnifiedDiff(patchText);
    await super.apply(normaliseDiff({ ...patch, files: patch.files.slice(0, -1) }));
    throw new RatchetError('git', 'git apply failed: simulated write error');
  }
}

describe('applyPatchAtomically', () => {
  it('applies a multi-file patch to the working tree', async () => {
    const patchText = await realDiff(repo, {
      'src/a.ts': numberedLines(10, 'a').replace('a2\n', 'A2\n'),
      'src/new/d.ts': 'd\n',
      'src/c.ts': null,
    });
    expect(await applyPatchAtomically(repo.git, `\`\`\`diff\n${patchText}\`\`\``)).toEqual({
      files: ['src/a.ts', 'src/c.ts', 'src/new/d.ts'],
    });
    expect(await read('src/a.ts')).toContain('A2\n');
    expect(await read('src/new/d.ts')).toBe('d\n');
    expect(await exists('src/c.ts')).toBe(false);
  });

  it('leaves nothing changed when the second file does not apply', async () => {
    const patchText = await realDiff(repo, {
      'src/a.ts': numberedLines(10, 'a').replace('a2\n', 'A2\n'),
      'src/b.ts': numberedLines(10, 'b').replace('b5\n', 'B5\n'),
    });
    // Uncommitted work the tree already has, which must survive; b.ts no longer matches the patch.
    await repo.write({ 'src/b.ts': 'rewritten\n', 'notes.txt': 'untracked\n' });
    const before = await repo.git.status();

    const error = await caught(applyPatchAtomically(repo.git, patchText));
    expect(error.code).toBe('git');
    expect(error.message).toMatch(/^Patch does not apply: .*src\/b\.ts/s);
    expect(error.details).toMatchObject({ restored: true, files: ['src/a.ts', 'src/b.ts'] });

    expect(await repo.git.status()).toEqual(before);
    expect(await read('src/a.ts')).toBe(numberedLines(10, 'a'));
    expect(await read('src/b.ts')).toBe('rewritten\n');
  });

  it('restores every touched path when git fails part-way through writing', async () => {
    const patchText = await realDiff(repo, {
      'src/a.ts': null,
      'src/b.ts': numberedLines(10, 'b').replace('b5\n', 'B5\n'),
      'src/deep/new/d.ts': 'd\n',
      'src/z.ts': 'last\n',
    });
    await repo.write({ 'src/b.ts': numberedLines(10, 'b') + '\n' }); // dirty, and still applies
    const before = await repo.git.status();
    const mode = (await stat(join(repo.dir, 'src/b.ts'))).mode;
    const git = new HalfApplyingGit(repo.dir, { env: repo.env });

    const error = await caught(applyPatchAtomically(git, patchText));
    expect(error.details).toMatchObject({ restored: true });
    expect(await repo.git.status()).toEqual(before);
    expect(await read('src/a.ts')).toBe(numberedLines(10, 'a'));
    expect(await exists('src/deep')).toBe(false);
    expect((await stat(join(repo.dir, 'src/b.ts'))).mode).toBe(mode);
  });

  it('refuses patches that do not parse or escape the work tree', async () => {
    expect((await caught(applyPatchAtomically(repo.git, '@@ -1 +1 @@\n-a\n+b\n'))).code).toBe('internal');
    const escape = '--- a/../x.ts\n+++ b/../x.ts\n@@ -1 +1 @@\n-a\n+b\n';
    expect((await caught(applyPatchAtomically(repo.git, escape))).message).toMatch(/'\.\.\/x\.ts'.*'\.\.' segment/);
    expect(await applyPatchAtomically(repo.git, 'no diff here')).toEqual({ files: [] });
  });
});

describe('revertWorkingTree', () => {
  it('discards modifications, deletions and untracked files', async () => {
    const deletion = await realDiff(repo, { 'src/c.ts': null });
    await repo.write({ 'src/a.ts': 'changed\n', 'src/new/x.ts': 'x\n' });
    await repo.git.apply(deletion);
    expect((await repo.git.status()).clean).toBe(false);
    await revertWorkingTree(repo.git);
    expect((await repo.git.status()).clean).toBe(true);
    expect(await read('src/a.ts')).toBe(numberedLines(10, 'a'));
    expect(await exists('src/new')).toBe(false);
  });
});
