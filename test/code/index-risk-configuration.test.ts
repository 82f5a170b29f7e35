/**
 * The risk register ranks code a user would refactor or test first: tool configuration
 * (`eslint.config.mjs`, `vitest.config.ts`, `jest.config.js`, `build.config.ts`, rc files, a
 * docs site's config, `setup.py`, `noxfile.py`), examples and benchmarks are left out by their
 * well-known names, in a full build and in an incremental one. Shaped like a small TypeScript library of the unjs kind
 * (sources under src/, tests under test/, several tool configs at the root, a docs site).
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isScaffoldingPath } from '../../src/code/file-role.js';
import { buildIndex, type BuildIndexOptions } from '../../src/code/index/build-index.js';
import { summarizeIndex } from '../../src/code/index/summary.js';

const CONFIGS = [
  'eslint.config.mjs',
  'vitest.config.ts',
  'vitest.config.e2e.mts',
  'jest.config.js',
  'build.config.ts',
  'karma.conf.js',
  '.eslintrc.cjs',
  '.mocharc.js',
  'Gulpfile.js',
  'docs/.vitepress/config.ts',
  'setup.py',
  'noxfile.py',
  'docs/conf.py',
  // Examples and benchmarks (boltons's misc/bench_omd.py) are no code to rank either.
  'examples/basic.js',
  'misc/bench_omd.py',
  'benchmarks/parse.js',
  'src/parse.bench.ts',
];

describe('the risk register leaves tool configuration, examples and benchmarks out', () => {
  let root: string;
  let options: BuildIndexOptions;

  const write = async (files: Record<string, string>): Promise<void> => {
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(options.root, path)), { recursive: true });
      await writeFile(join(options.root, path), text);
    }
  };

  beforeEach(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-index-config-')));
    options = { root: join(root, 'tree'), cacheDir: join(root, 'cache'), excludes: [], git: false };
    // Untested, imported by nothing, and long: a config scores as high as any untested source file.
    const long = Array.from({ length: 80 }, (_, line) => `  rule${line}: 'error',`).join('\n');
    const configs: Record<string, string> = {};
    for (const path of CONFIGS)
      configs[path] = path.endsWith('.py')
        ? `options = dict(\n${long.replaceAll(':', ' =')}\n)\n`
        : `export default {\n${long}\n};\n`;
    await write({
      ...configs,
      'src/index.ts': "export { joinPath } from './join.js';\nexport { parsePath } from './parse.js';\n",
      'src/join.ts':
        "import { parsePath } from './parse.js';\nexport function joinPath(a: string, b: string): string {\n  return parsePath(a) + '/' + b;\n}\n",
      'src/parse.ts': 'export function parsePath(path: string): string {\n  return path.replace(/\\/+$/, "");\n}\n',
      'src/app.config.helpers.ts': 'export const notAConfig = 1;\n',
      // Declares nothing: a Go package's doc.go (golang-lru's), an empty __init__.py.
      'doc.go': '// Package paths joins and parses paths.\npackage paths\n',
      'pkg/__init__.py': '',
      'test/join.test.ts':
        "import { joinPath } from '../src/join.js';\nif (joinPath('a', 'b') !== 'a/b') throw new Error('join');\n",
    });
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('knows the configuration names of the common tools, and not code that only mentions config', () => {
    for (const path of CONFIGS) expect(isScaffoldingPath(path), path).toBe(true);
    for (const path of [
      'src/config.ts',
      'src/configure.ts',
      'lib/conf.py',
      'src/app.config.helpers.ts',
      'src/index.ts',
      'src/benchmark.py',
      'src/workbench/app.ts',
    ])
      expect(isScaffoldingPath(path), path).toBe(false);
  });

  it('ranks only the project code, and summarises the riskiest from it', async () => {
    const index = await buildIndex(options);
    // The configs are indexed (they are source files) but have no risk entry.
    for (const path of CONFIGS)
      expect(
        index.files.some((file) => file.path === path),
        path,
      ).toBe(true);
    expect(index.risk.map((entry) => entry.path).sort()).toEqual([
      'src/app.config.helpers.ts',
      'src/index.ts',
      'src/join.ts',
      'src/parse.ts',
    ]);
    const riskiest = summarizeIndex(index).riskiest.map((entry) => entry.path);
    expect(
      riskiest.some((path) => CONFIGS.includes(path)),
      riskiest.join(', '),
    ).toBe(false);
  });

  it('keeps configuration out when an incremental update changes a config file', async () => {
    const first = await buildIndex(options);
    await write({
      'vitest.config.ts': "import { parsePath } from './src/parse.js';\nexport default { root: parsePath('.') };\n",
    });
    const next = await buildIndex({ ...options, previous: first, changedPaths: ['vitest.config.ts'] });
    expect(next.stats).toMatchObject({ parsed: 1 });
    expect(next.risk.map((entry) => entry.path)).not.toContain('vitest.config.ts');
    // Its import still counts for the code it imports.
    expect(next.risk.find((entry) => entry.path === 'src/parse.ts')?.fanIn).toBe(3);
  });
});
