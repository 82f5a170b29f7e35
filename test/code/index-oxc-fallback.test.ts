import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildIndex } from '../../src/code/index/build-index.js';
import { OxcExtractor } from '../../src/code/index/extract-oxc.js';
import { loadOxcLazy } from '../support/oxc-lazy-nodes.js';
import { SourceExtractor } from '../../src/code/index/source-extractor.js';

/** A file in the middle of an edit: the second function is not finished. */
const MID_EDIT = [
  "import { helper } from './helper.js';",
  '',
  '/** Kept. */',
  'export function kept(): number {',
  '  return helper();',
  '}',
  '',
  'export function editing(value: number {',
  '  return value',
  '',
  'export class After {',
  '  run(): void {}',
  '}',
  '',
].join('\n');

describe('a file oxc rejects', () => {
  it('gives no result from oxc (its program is empty after a fatal error)', async () => {
    const api = await loadOxcLazy();
    if (api === undefined) throw new Error('oxc-parser did not load');
    expect(new OxcExtractor(api).extract('src/mid-edit.ts', MID_EDIT, 'typescript')).toBeUndefined();
  });

  it('keeps its symbols, imports and calls through tree-sitter, marked as having errors', async () => {
    const result = await new SourceExtractor().extract('src/mid-edit.ts', MID_EDIT);
    expect(result?.hasErrors).toBe(true);
    expect(result?.symbols.find((symbol) => symbol.name === 'kept')).toMatchObject({
      kind: 'function',
      exported: true,
      startLine: 4,
      doc: 'Kept.',
    });
    expect(result?.imports).toEqual([{ specifier: './helper.js', names: ['helper'], line: 1 }]);
    expect(result?.calls).toContainEqual({ caller: 'kept', callee: 'helper' });
    // What tree-sitter would give for the file is what the index records.
    expect(result).toEqual(
      await new SourceExtractor({ javascript: 'tree-sitter' }).extract('src/mid-edit.ts', MID_EDIT),
    );
  });

  describe('in an index', () => {
    let root: string;

    beforeEach(async () => {
      root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-oxc-fallback-')));
    });

    afterEach(async () => {
      await rm(root, { recursive: true, force: true });
    });

    it('keeps the symbols of a file being edited, and the import graph around it', async () => {
      const files: Record<string, string> = {
        'src/mid-edit.ts': MID_EDIT,
        'src/helper.ts': 'export function helper(): number {\n  return 1;\n}\n',
        'src/use.ts': "import { kept } from './mid-edit.js';\nexport const value = kept();\n",
      };
      for (const [path, text] of Object.entries(files)) {
        await mkdir(dirname(join(root, 'tree', path)), { recursive: true });
        await writeFile(join(root, 'tree', path), text);
      }
      const index = await buildIndex({
        root: join(root, 'tree'),
        cacheDir: join(root, 'cache'),
        excludes: [],
        git: false,
      });
      const edited = index.files.find((file) => file.path === 'src/mid-edit.ts');
      expect(edited?.hasErrors).toBe(true);
      expect(edited?.symbols.map((symbol) => symbol.name)).toContain('kept');
      expect(index.dependencies['src/mid-edit.ts']).toEqual(['src/helper.ts']);
      expect(index.dependents['src/mid-edit.ts']).toEqual(['src/use.ts']);
    });
  });
});
