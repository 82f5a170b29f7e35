import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { YoungGenerationCap } from '../../src/code/index/young-generation.js';

function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

describe('YoungGenerationCap', () => {
  it('stops the young generation from growing while a build keeps everything it allocates', () => {
    const cap = YoungGenerationCap.start();
    expect(cap).toBeDefined();
    const atStart = Math.max(16 * 1024 * 1024, youngGenerationBytes());
    const kept: { name: string; lines: number[] }[][] = [];
    try {
      // About 150 MB that all survive, as an index's results do: V8 would double the young
      // generation after collections that keep this much, up to 128 MB.
      for (let round = 0; round < 300; round++) {
        kept.push(
          Array.from({ length: 2000 }, (_, index) => ({ name: `symbol-${round}-${index}`, lines: [round, index] })),
        );
        cap?.check();
      }
      expect(kept).toHaveLength(300);
      expect(youngGenerationBytes()).toBeLessThanOrEqual(atStart);
    } finally {
      cap?.[Symbol.dispose]();
    }
  });
});
