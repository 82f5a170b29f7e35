import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildIndex } from '../../src/code/index/build-index.js';
import type { CodeIndex } from '../../src/code/index/types.js';
import { parseRetrievalStages, retrieve } from '../../src/context/retrieve.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

/** The context package of a solve pass (seed 004, R1-R5): the most relevant files whole, signatures for the rest, within the budget. */

let repo: TempRepo;
let index: CodeIndex;

function module(name: string, lines: number): string {
  const body = Array.from({ length: lines }, (_, line) => `  const v${line} = ${line};`).join('\n');
  return `import { total } from './stats.js';\n\nexport function ${name}(xs) {\n${body}\n  return total(xs);\n}\n`;
}

beforeEach(async () => {
  const files: Record<string, string> = {
    'src/stats.js': 'export function total(xs) {\n  return xs.reduce((a, b) => a + b, 0);\n}\n',
  };
  for (let i = 1; i <= 6; i++) files[`src/user${i}.js`] = module(`user${i}`, 40);
  repo = await createTempRepo({ files });
  index = await buildIndex({ root: repo.dir, cacheDir: repo.path('cache'), excludes: [], git: repo.git });
});

afterEach(async () => {
  await repo.cleanup();
});

const read = (path: string) => repo.git.showFile('HEAD', path);

describe('retrieve', () => {
  it('gives the seed and the first few candidates whole, the others as signatures, all within the budget', async () => {
    const pkg = await retrieve({
      task: 'fix total',
      seeds: ['src/stats.js'],
      symbols: ['total'],
      index,
      readText: read,
      stages: ['scope'],
      budgetTokens: 2000,
      maxFullFiles: 2,
    });
    const full = pkg.files.filter((file) => file.mode === 'full').map((file) => file.path);
    expect(full).toHaveLength(2);
    expect(full[0]).toBe('src/stats.js');
    expect(pkg.files.some((file) => file.mode === 'signatures')).toBe(true);
    expect(pkg.tokens).toBeLessThanOrEqual(2000);
  });

  it('whole-file prompting gives every candidate whole', async () => {
    const pkg = await retrieve({
      task: 'fix total',
      seeds: ['src/stats.js'],
      symbols: ['total'],
      index,
      readText: read,
      stages: ['scope', 'precision'],
      budgetTokens: 100_000,
      wholeFiles: true,
    });
    expect(pkg.files.length).toBe(7);
    expect(pkg.files.every((file) => file.mode === 'full')).toBe(true);
  });

  it('parses --stages, refusing unknown stages and a list without scope', () => {
    expect(parseRetrievalStages('precision, scope')).toEqual(['scope', 'precision']);
    expect(() => parseRetrievalStages('scope,rerank')).toThrow(/rerank/);
    expect(() => parseRetrievalStages('precision')).toThrow(/leaves out scope/);
  });
});
