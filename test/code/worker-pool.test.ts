import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ParsePool, planBatches } from '../../src/code/index/worker-pool.js';

describe('planBatches', () => {
  it('hands out the largest files first, in batches of about the byte budget', () => {
    const items = [
      { path: 'small-1.ts', size: 10 },
      { path: 'huge.ts', size: 500 },
      { path: 'small-2.ts', size: 20 },
      { path: 'medium.ts', size: 90 },
      { path: 'small-3.ts', size: 20 },
      { path: 'unknown.ts' },
    ];
    const batches = planBatches(items, 100, 10);
    const paths = batches.map((batch) => batch.map((position) => items[position]?.path));
    expect(paths).toEqual([['huge.ts'], ['medium.ts'], ['small-2.ts', 'small-3.ts', 'small-1.ts', 'unknown.ts']]);
    // Every item exactly once.
    expect(batches.flat().sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('caps the number of files per batch', () => {
    const items = Array.from({ length: 7 }, (_, index) => ({ path: `f${index}.ts`, size: 1 }));
    expect(planBatches(items, 1000, 3).map((batch) => batch.length)).toEqual([3, 3, 1]);
  });
});

describe('ParsePool', () => {
  let root: string;

  beforeEach(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-pool-')));
    for (let index = 0; index < 12; index++)
      await writeFile(
        join(root, `m${index}.ts`),
        `export function f${index}(): number {\n  return ${index};\n}\n`.repeat(index + 1),
      );
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('returns outcomes in the order of the items, however the work was split, and serves several calls', async () => {
    await using pool = ParsePool.start({ root, maxParseBytes: 1024 * 1024, workers: 2 });
    const items = Array.from({ length: 12 }, (_, index) => ({ path: `m${index}.ts`, size: index + 1 }));
    const first = await pool.process(items, { batchBytes: 3, batchFiles: 2 });
    expect(first.map((outcome) => outcome?.path)).toEqual(items.map((item) => item.path));
    const parsed = first[4]?.parse;
    expect(parsed).toMatchObject({ language: 'typescript', hasErrors: false });
    expect(typeof parsed === 'object' && parsed?.symbols.map((symbol) => symbol.name)).toEqual(Array(5).fill('f4'));
    expect(first[4]?.lines).toBe(15);

    const again = await pool.process([{ path: 'm4.ts', knownHash: first[4]?.hash ?? '' }, { path: 'missing.ts' }]);
    expect(again[0]?.parse).toBe('unchanged');
    expect(again[1]).toBeUndefined();
  });

  it('rejects when the signal is aborted, and takes no more work after that', async () => {
    await using pool = ParsePool.start({ root, maxParseBytes: 1024 * 1024, workers: 1 });
    const controller = new AbortController();
    controller.abort();
    await expect(pool.process([{ path: 'm0.ts' }], { signal: controller.signal })).rejects.toMatchObject({
      code: 'interrupted',
    });
    await expect(pool.process([{ path: 'm0.ts' }])).rejects.toMatchObject({ code: 'interrupted' });
  });

  it('refuses work once disposed', async () => {
    const pool = ParsePool.start({ root, maxParseBytes: 1024 * 1024, workers: 1 });
    await pool[Symbol.asyncDispose]();
    await expect(pool.process([{ path: 'm0.ts' }])).rejects.toThrow(/disposed/);
  });
});
