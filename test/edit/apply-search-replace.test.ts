import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyEditsToDirectory } from '../../src/edit/apply-search-replace.js';

/** Seed 004's `apply_edits`: every SEARCH matches exactly once, or nothing changes; a step's edits roll back together. */

let root: string;
const A = 'one\ntwo\nthree\n';

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ratchet-apply-'));
  await writeFile(join(root, 'a.txt'), A);
  await writeFile(join(root, 'twice.txt'), 'x\nx\n');
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('applyEditsToDirectory', () => {
  it('applies edits in order, creates a file from an empty SEARCH, and rolls all of it back', async () => {
    const result = await applyEditsToDirectory(root, [
      { path: 'a.txt', search: 'two\n', replace: 'TWO\n' },
      { path: 'a.txt', search: 'TWO\nthree\n', replace: 'TWO\n3\n' },
      { path: 'new/dir/b.txt', search: '', replace: 'b\n' },
    ]);
    if (!result.ok) throw new Error(JSON.stringify(result.failures));
    expect(result.files).toEqual(['a.txt', 'new/dir/b.txt']);
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('one\nTWO\n3\n');
    expect(await readFile(join(root, 'new/dir/b.txt'), 'utf8')).toBe('b\n');
    await result.rollback();
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe(A);
    expect(existsSync(join(root, 'new'))).toBe(false);
  });

  it('changes nothing when one edit fails, and says which and why: not found, found N times, file missing', async () => {
    const result = await applyEditsToDirectory(root, [
      { path: 'a.txt', search: 'one\n', replace: 'ONE\n' },
      { path: 'a.txt', search: 'four\n', replace: '4\n' },
      { path: 'twice.txt', search: 'x\n', replace: 'y\n' },
      { path: 'gone.txt', search: 'x', replace: 'y' },
    ]);
    expect(result.ok).toBe(false);
    const messages = result.ok ? [] : result.failures.map((failure) => failure.message);
    expect(messages).toHaveLength(3);
    expect(messages[0]).toContain('Edit 2 (a.txt): SEARCH matches 0 times');
    expect(messages[1]).toContain('Edit 3 (twice.txt): SEARCH matches 2 times');
    expect(messages[2]).toContain('Edit 4 (gone.txt): the file does not exist');
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe(A);
  });
});
