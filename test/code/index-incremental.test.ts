import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildIndex, type BuildIndexOptions } from '../../src/code/index/build-index.js';
import type { CodeIndex, IndexedFile } from '../../src/code/index/types.js';

/** Everything but timing: what two builds of the same tree must agree on. */
function content(index: CodeIndex): unknown {
  return {
    files: index.files.map(({ mtimeMs: _mtime, ...file }: IndexedFile) => file),
    dependencies: index.dependencies,
    dependents: index.dependents,
    risk: index.risk,
  };
}

describe('buildIndex, incrementally (plain directory, no git)', () => {
  let root: string;
  let tree: string;
  let options: BuildIndexOptions;

  const write = async (files: Record<string, string>): Promise<void> => {
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(tree, path)), { recursive: true });
      await writeFile(join(tree, path), text);
    }
  };

  beforeEach(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-index-')));
    tree = join(root, 'tree');
    options = { root: tree, cacheDir: join(root, 'cache'), excludes: ['**/node_modules/**'], git: false };
    await write({
      'src/a.ts': "import { b } from './b.js';\nexport function a(): number {\n  return b();\n}\n",
      'src/b.ts': "import { c } from './c.js';\nexport function b(): number {\n  return c();\n}\n",
      'src/c.ts': 'export function c(): number {\n  return 1;\n}\n',
      'src/d.py': 'def d():\n    return 1\n',
      'notes.txt': 'not code\n',
      'node_modules/x/index.js': 'module.exports = 1;\n',
    });
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('parses everything cold, then reuses everything when nothing changed', async () => {
    const cold = await buildIndex(options);
    expect(cold.git).toBe(false);
    expect(cold.files.map((file) => file.path)).toEqual(['notes.txt', 'src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.py']);
    expect(cold.stats).toMatchObject({ parsed: 4, reused: 0, removed: 0, workers: 0 });

    const warm = await buildIndex(options);
    expect(warm.stats).toMatchObject({ parsed: 0, reused: 4, removed: 0 });
    expect(content(warm)).toEqual(content(cold));
  });

  it('leaves symbolic links out, whether they point outside the tree or inside it', async () => {
    await writeFile(join(root, 'secret.ts'), 'export const token = "outside the repository";\n');
    await symlink(join(root, 'secret.ts'), join(tree, 'src', 'secret.ts'));
    await symlink(join(tree, 'src', 'c.ts'), join(tree, 'src', 'alias.ts'));
    const index = await buildIndex(options);
    expect(index.files.map((file) => file.path)).toEqual(['notes.txt', 'src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.py']);
    expect(JSON.stringify(index)).not.toContain('outside the repository');
  });

  it('re-parses only the changed file', async () => {
    await buildIndex(options);
    await write({ 'src/c.ts': 'export function c(): number {\n  return 2;\n}\n\nexport function extra(): void {}\n' });
    const index = await buildIndex(options);
    expect(index.stats).toMatchObject({ parsed: 1, reused: 3, removed: 0 });
    const c = index.files.find((file) => file.path === 'src/c.ts');
    expect(c?.symbols.map((symbol) => symbol.name)).toEqual(['c', 'extra']);
    expect(index.dependents['src/c.ts']).toEqual(['src/b.ts']);
  });

  it('does not re-parse a file that was rewritten with the same content', async () => {
    await buildIndex(options);
    await write({ 'src/a.ts': await readFile(join(tree, 'src/a.ts'), 'utf8') });
    const index = await buildIndex(options);
    expect(index.stats).toMatchObject({ parsed: 0, reused: 4 });
  });

  it('drops deleted files from the tree and the graphs', async () => {
    await buildIndex(options);
    await unlink(join(tree, 'src/b.ts'));
    const index = await buildIndex(options);
    expect(index.stats).toMatchObject({ parsed: 0, reused: 3, removed: 1 });
    expect(index.files.map((file) => file.path)).not.toContain('src/b.ts');
    expect(index.dependents['src/c.ts']).toBeUndefined();
    expect(index.files.find((file) => file.path === 'src/a.ts')?.imports[0]?.resolved).toEqual([]);
    expect(index.risk.map((entry) => entry.path)).not.toContain('src/b.ts');
  });

  it('parses added files and resolves imports of unchanged files to them', async () => {
    await write({ 'src/a.ts': "import { e } from './e.js';\nexport const a = e;\n" });
    await buildIndex(options);
    await write({ 'src/e.ts': 'export const e = 1;\n' });
    const index = await buildIndex(options);
    expect(index.stats).toMatchObject({ parsed: 1, reused: 4 });
    expect(index.dependencies['src/a.ts']).toEqual(['src/e.ts']);
  });

  it('ignores a cache written by another index version', async () => {
    await buildIndex(options);
    const manifestPath = join(root, 'cache', 'manifest.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { version: number };
    await writeFile(manifestPath, JSON.stringify({ ...manifest, version: -1 }));
    const index = await buildIndex(options);
    expect(index.stats).toMatchObject({ parsed: 4, reused: 0 });
    expect((await buildIndex(options)).stats).toMatchObject({ parsed: 0, reused: 4 });
  });

  it('rebuilds a cache of the older layout (256 shards) and leaves none of its shards behind', async () => {
    await buildIndex(options);
    const cache = join(root, 'cache');
    const manifestPath = join(cache, 'manifest.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { version: number };
    await writeFile(manifestPath, JSON.stringify({ ...manifest, version: 4 }));
    await writeFile(join(cache, 'parsed', 'ff.json'), '{}');
    await writeFile(join(cache, 'parsed', '7a.json'), '{}');
    const index = await buildIndex(options);
    expect(index.stats).toMatchObject({ parsed: 4, reused: 0 });
    const names = await readdir(join(cache, 'parsed'));
    expect(names).toHaveLength(64);
    expect(names).not.toContain('ff.json');
    expect(names).not.toContain('7a.json');
    expect((await buildIndex(options)).stats).toMatchObject({ parsed: 0, reused: 4 });
  });

  it('updates from a previous index in memory the same way as from the disk cache', async () => {
    const first = await buildIndex(options);
    await write({ 'src/c.ts': 'export function c(): number {\n  return 3;\n}\n' });
    const fromMemory = await buildIndex({ ...options, previous: first });
    expect(fromMemory.stats).toMatchObject({ parsed: 1, reused: 3 });
    // Unchanged files are carried over as they were, imports already resolved.
    expect(fromMemory.files.find((file) => file.path === 'src/a.ts')).toBe(
      first.files.find((file) => file.path === 'src/a.ts'),
    );
    const fromDisk = await buildIndex(options);
    expect(fromDisk.stats).toMatchObject({ parsed: 0, reused: 4 });
    expect(content(fromMemory)).toEqual(content(fromDisk));
  });

  it('with changedPaths, stats only those paths and agrees with a full scan', async () => {
    const first = await buildIndex(options);
    await write({
      'src/c.ts': 'export function c(): number {\n  return 4;\n}\n',
      'src/e.ts': "import { c } from './c.js';\n",
    });
    await unlink(join(tree, 'src/d.py'));
    const changedPaths = ['src/c.ts', 'src/e.ts', 'src/d.py', 'node_modules/x/index.js'];
    const hinted = await buildIndex({ ...options, previous: first, changedPaths });
    expect(hinted.stats).toMatchObject({ parsed: 2, reused: 2, removed: 1 });
    expect(hinted.files.map((file) => file.path)).toEqual([
      'notes.txt',
      'src/a.ts',
      'src/b.ts',
      'src/c.ts',
      'src/e.ts',
    ]);
    expect(hinted.dependents['src/c.ts']).toEqual(['src/b.ts', 'src/e.ts']);
    const scanned = await buildIndex(options);
    expect(scanned.stats).toMatchObject({ parsed: 0, removed: 0 });
    expect(content(hinted)).toEqual(content(scanned));
  });

  it('patches the graphs, coverage and risk of a same-paths update to what a full build derives', async () => {
    await write({ 'test/checks.test.ts': 'export const pending = true;\n' });
    const first = await buildIndex(options);
    // a.ts now imports c instead of b (b loses its only importer), a test (named for no source
    // file) starts covering c by importing it, c grows, and a non-source file changes.
    await write({
      'src/a.ts': "import { c } from './c.js';\nexport function a(): number {\n  return c();\n}\n",
      'test/checks.test.ts': "import { c } from '../src/c.js';\nif (c() !== 1) throw new Error('c');\n",
      'src/c.ts': 'export function c(): number {\n  return 1;\n}\n\nexport const more = 2;\n',
      'notes.txt': 'still not code\n',
    });
    const changedPaths = ['src/a.ts', 'test/checks.test.ts', 'src/c.ts', 'notes.txt'];
    const patched = await buildIndex({ ...options, previous: first, changedPaths });
    expect(patched.stats).toMatchObject({ parsed: 3, removed: 0 });
    expect(patched.dependents['src/b.ts']).toBeUndefined();
    expect(patched.dependents['src/c.ts']).toEqual(['src/a.ts', 'src/b.ts', 'test/checks.test.ts']);
    expect(patched.risk.find((entry) => entry.path === 'src/c.ts')).toMatchObject({
      fanIn: 2,
      lines: 5,
      tests: ['test/checks.test.ts'],
    });
    const full = await buildIndex({ ...options, cacheDir: join(root, 'fresh-cache') });
    expect(full.stats.reused).toBe(0);
    expect(content(patched)).toEqual(content(full));
    // Key order too, as the artifacts print them.
    expect(Object.keys(patched.dependencies)).toEqual(Object.keys(full.dependencies));
    expect(Object.keys(patched.dependents)).toEqual(Object.keys(full.dependents));
  });

  it('shares the previous graphs when an edit leaves every import as it was', async () => {
    const first = await buildIndex(options);
    await write({ 'src/b.ts': "import { c } from './c.js';\nexport function b(): number {\n  return c() + 1;\n}\n" });
    const next = await buildIndex({ ...options, previous: first, changedPaths: ['src/b.ts'] });
    expect(next.stats).toMatchObject({ parsed: 1 });
    expect(next.dependencies).toBe(first.dependencies);
    expect(next.dependents).toBe(first.dependents);
    const full = await buildIndex({ ...options, cacheDir: join(root, 'fresh-cache') });
    expect(content(next)).toEqual(content(full));
  });

  it('keeps JavaScript and TypeScript in the calling thread when told to, and other languages on workers', async () => {
    const many: Record<string, string> = {};
    for (let index = 0; index < 210; index++) many[`gen/m${index}.ts`] = `export const m${index} = ${index};\n`;
    await write(many);
    const typescriptOnly = await buildIndex({ ...options, workers: 2, javaScriptInThread: true });
    expect(typescriptOnly.stats).toMatchObject({ parsed: 214, workers: 0 });
    const python: Record<string, string> = {};
    for (let index = 0; index < 210; index++) python[`py/p${index}.py`] = `def p${index}():\n    return ${index}\n`;
    await write(python);
    await rm(join(root, 'cache'), { recursive: true });
    const mixed = await buildIndex({ ...options, workers: 2, javaScriptInThread: true });
    expect(mixed.stats).toMatchObject({ parsed: 424, workers: 2 });
    await rm(join(root, 'cache'), { recursive: true });
    const inline = await buildIndex({ ...options, workers: 0 });
    expect(content(mixed)).toEqual(content(inline));
  });

  it('stops with an interrupted error when the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(buildIndex({ ...options, signal: controller.signal })).rejects.toMatchObject({ code: 'interrupted' });
  });

  it('parses on worker threads when many files changed, with the same results and the same cache', async () => {
    const many: Record<string, string> = {};
    for (let index = 0; index < 240; index++) {
      // Every third module imports a namespace too.
      many[`gen/m${index}.ts`] =
        (index % 3 === 0 ? `import * as cs from '../src/c.js';\nconst d = require('../src/d.js');\n` : '') +
        `import { c } from '../src/c.js';\n/** Module ${index}. */\nexport function f${index}(x: number): number {\n  return c() + x;\n}\n`;
    }
    await write(many);
    const cacheFiles = async (): Promise<Record<string, string>> => {
      const shards = join(root, 'cache', 'parsed');
      const names = (await readdir(shards)).sort();
      const files: Record<string, string> = {};
      for (const name of names) files[name] = await readFile(join(shards, name), 'utf8');
      const manifest = JSON.parse(await readFile(join(root, 'cache', 'manifest.json'), 'utf8')) as { files: unknown };
      files['manifest.json'] = JSON.stringify(manifest.files);
      return files;
    };
    const threaded = await buildIndex({ ...options, workers: 2, javaScriptInThread: false });
    expect(threaded.stats.workers).toBeGreaterThan(0);
    expect(threaded.stats.parsed).toBe(244);
    const threadedCache = await cacheFiles();
    await rm(join(root, 'cache'), { recursive: true });
    const inline = await buildIndex({ ...options, workers: 0 });
    expect(inline.stats.workers).toBe(0);
    expect(content(threaded)).toEqual(content(inline));
    expect(threadedCache).toEqual(await cacheFiles());
    // The manifest and 64 shards.
    expect(Object.keys(threadedCache)).toHaveLength(65);
    expect(threaded.dependents['src/c.ts']).toHaveLength(241);
  });
});
