/**
 * A monorepo's packages import each other by name (`import { parse } from 'remark-parse'`): the
 * index resolves such imports to the package's source in the repository (found on remark, an npm
 * workspace, where every cross-package import stayed unresolved and the packages looked unrelated).
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../../src/code/index/build-index.js';
import type { CodeIndex } from '../../src/code/index/types.js';
import { packageTargets, readWorkspacePackages, splitBareSpecifier } from '../../src/code/index/workspace-packages.js';

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** A workspace shaped like remark's and unified's: built entries in `exports`, sources in `src/`. */
const WORKSPACE: Record<string, string> = {
  'package.json': json({ name: 'root', private: true, workspaces: ['packages/*'] }),
  // Exports naming built output, with conditions, a subpath and a pattern.
  'packages/parse/package.json': json({
    name: '@demo/parse',
    type: 'module',
    exports: {
      '.': { types: './dist/index.d.ts', import: './dist/index.js' },
      './util': './dist/util.js',
      './features/*': './dist/features/*.js',
      './package.json': './package.json',
    },
  }),
  'packages/parse/src/index.ts': "export function parse(text: string): string[] {\n  return text.split(' ');\n}\n",
  'packages/parse/src/util.ts': 'export const SPACE = " ";\n',
  'packages/parse/src/features/gfm.ts': 'export const gfm = true;\n',
  // No exports: `main` names a committed file; every file is open.
  'packages/legacy/package.json': json({ name: 'legacy-lib', main: 'lib/index.js' }),
  'packages/legacy/lib/index.js': 'exports.legacy = 1;\n',
  'packages/legacy/lib/extra.js': 'exports.extra = 2;\n',
  // Neither exports nor main: `index`.
  'packages/plain/package.json': json({ name: 'plain' }),
  'packages/plain/index.ts': 'export const plain = 1;\n',
  // A name two manifests share: which one an import means is unknown.
  'packages/twin-a/package.json': json({ name: 'twin', main: 'index.js' }),
  'packages/twin-a/index.js': 'export const a = 1;\n',
  'fixtures/twin-b/package.json': json({ name: 'twin', main: 'index.js' }),
  'fixtures/twin-b/index.js': 'export const b = 1;\n',
  'packages/broken/package.json': '{ "name": ',
  'packages/app/package.json': json({ name: 'app', type: 'module' }),
  'packages/app/src/main.ts': [
    "import { parse } from '@demo/parse';",
    "import { SPACE } from '@demo/parse/util';",
    "import { gfm } from '@demo/parse/features/gfm';",
    "import legacy from 'legacy-lib';",
    "import extra from 'legacy-lib/lib/extra.js';",
    "import { plain } from 'plain';",
    "import { a } from 'twin';",
    "import { readFileSync } from 'node:fs';",
    "import lodash from 'lodash';",
    "import hidden from '@demo/parse/src/util';",
    'export const all = [parse, SPACE, gfm, legacy, extra, plain, a, readFileSync, lodash, hidden];',
    '',
  ].join('\n'),
};

describe('workspace packages in the index', () => {
  let root: string;
  let index: CodeIndex;

  beforeAll(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-workspace-index-')));
    for (const [path, text] of Object.entries(WORKSPACE)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
    index = await buildIndex({ root, cacheDir: join(root, '.cache'), excludes: [], git: false });
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("resolves a bare import of a repository package to its entry's source", () => {
    const main = index.files.find((file) => file.path === 'packages/app/src/main.ts');
    const resolved = Object.fromEntries(main?.imports.map((ref) => [ref.specifier, ref.resolved]) ?? []);
    expect(resolved).toEqual({
      '@demo/parse': ['packages/parse/src/index.ts'],
      '@demo/parse/util': ['packages/parse/src/util.ts'],
      '@demo/parse/features/gfm': ['packages/parse/src/features/gfm.ts'],
      'legacy-lib': ['packages/legacy/lib/index.js'],
      'legacy-lib/lib/extra.js': ['packages/legacy/lib/extra.js'],
      plain: ['packages/plain/index.ts'],
      // Ambiguous, a built-in, a dependency, and a path the package's exports do not open.
      twin: [],
      'node:fs': [],
      lodash: [],
      '@demo/parse/src/util': [],
    });
  });

  it('gives the packages their dependents (the risk ranking and plan context read them)', () => {
    expect(index.dependents['packages/parse/src/index.ts']).toEqual(['packages/app/src/main.ts']);
    expect(index.dependencies['packages/app/src/main.ts']).toContain('packages/legacy/lib/index.js');
  });

  it('reads named, unambiguous manifests and skips broken ones', async () => {
    const packages = await readWorkspacePackages(
      root,
      Object.keys(WORKSPACE).filter((path) => path.endsWith('package.json')),
    );
    expect(packages.map((pkg) => `${pkg.name} ${pkg.dir}`).sort()).toEqual([
      '@demo/parse packages/parse',
      'app packages/app',
      'legacy-lib packages/legacy',
      'plain packages/plain',
      'root ',
    ]);
  });
});

describe('package entry targets', () => {
  const pkg = (exports: unknown, main: string[] = []) => ({
    dir: 'p',
    name: 'p',
    exports: exports === null ? null : new Map(Object.entries(exports as Record<string, string[]>)),
    main,
  });

  it('prefers exact subpaths, then the longest pattern', () => {
    const exported = pkg({ './a/*': ['./dist/a/*.js'], './a/b/*': ['./dist/ab/*.mjs'], './a/b/c': ['./c.js'] });
    expect(packageTargets(exported, './a/b/c')).toEqual(['./c.js']);
    expect(packageTargets(exported, './a/b/x')).toEqual(['./dist/ab/x.mjs']);
    expect(packageTargets(exported, './a/y')).toEqual(['./dist/a/y.js']);
    expect(packageTargets(exported, './z')).toEqual([]);
  });

  it('opens every path of a package without exports, its main fields for the root', () => {
    expect(packageTargets(pkg(null, ['./lib/main.js']), '.')).toEqual(['./lib/main.js', './index']);
    expect(packageTargets(pkg(null), './lib/x.js')).toEqual(['./lib/x.js']);
  });

  it('splits scoped and plain specifiers', () => {
    expect(splitBareSpecifier('@scope/name/sub/path')).toEqual(['@scope/name', './sub/path']);
    expect(splitBareSpecifier('name')).toEqual(['name', '.']);
    expect(splitBareSpecifier('@scope')).toBeUndefined();
  });
});
