import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderArchitectureSnapshot } from '../../src/code/index/architecture-snapshot.js';
import { buildIndex, type BuildIndexOptions } from '../../src/code/index/build-index.js';
import type { CodeIndex, IndexedFile } from '../../src/code/index/types.js';
import { deadFunctions } from '../../src/workflows/refactor/dead-code.js';
import { FALLIBLE_ITERATOR, SCOPEGUARD } from '../support/real-repo-fixtures.js';

/**
 * Where Rust keeps its tests (issue 13): a module its parent declares under `#[cfg(test)]`
 * (fallible-iterator's `src/test.rs`), an inline `#[cfg(test)] mod tests { ... }` (scopeguard),
 * and the `#[test]` functions in either.
 */

function file(index: CodeIndex, path: string): IndexedFile {
  const found = index.files.find((entry) => entry.path === path);
  if (found === undefined) throw new Error(`${path} is not in the index`);
  return found;
}

/** Everything but timing: what two builds of the same tree must agree on. */
function content(index: CodeIndex): unknown {
  return {
    files: index.files.map(({ mtimeMs: _mtime, ...entry }: IndexedFile) => entry),
    dependencies: index.dependencies,
    dependents: index.dependents,
    risk: index.risk,
  };
}

describe('the index on Rust tests', () => {
  let root: string;
  let options: BuildIndexOptions;

  async function tree(files: Record<string, string>): Promise<string> {
    const dir = join(root, 'tree');
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    options = { root: dir, cacheDir: join(root, 'cache'), excludes: [], git: false };
    return dir;
  }

  beforeEach(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-rust-tests-')));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('takes a module declared under #[cfg(all(test, ...))] for a test module that covers its parent (fallible-iterator)', async () => {
    await tree(FALLIBLE_ITERATOR);
    const index = await buildIndex(options);

    expect(file(index, 'src/test.rs').isTest).toBe(true);
    expect(file(index, 'src/lib.rs').isTest).toBe(false);
    expect(file(index, 'src/lib.rs').imports.find((ref) => ref.specifier === 'mod test')).toMatchObject({
      testOnly: true,
      resolved: ['src/test.rs'],
    });
    expect(index.risk.map((entry) => entry.path)).toEqual(['src/lib.rs']);
    expect(index.risk[0]?.tests).toEqual(['src/test.rs']);
    expect(renderArchitectureSnapshot(index)).toContain('2 source files in supported languages, 1 of them tests)');
    // The same from the cache on disk.
    const warm = await buildIndex(options);
    expect(warm.stats.reused).toBe(2);
    expect(content(warm)).toEqual(content(index));
  });

  it('marks #[test] functions, #[should_panic] ones included, and never offers them as dead code', async () => {
    const dir = await tree(FALLIBLE_ITERATOR);
    const index = await buildIndex(options);
    const tests = file(index, 'src/test.rs').symbols.filter((symbol) => symbol.test === true);

    expect(tests.map((symbol) => symbol.name)).toEqual([
      'count',
      'next_error',
      'unwrap_panic',
      'wrap_std_iter_into_fallible',
    ]);
    const dead = await deadFunctions(index, dir);
    expect(dead.get('src/test.rs')).toBeUndefined();
  });

  it('records the functions of an inline #[cfg(test)] mod tests, and counts the file as tested by them (scopeguard)', async () => {
    await tree(SCOPEGUARD);
    const index = await buildIndex(options);
    const lib = file(index, 'src/lib.rs');

    expect(lib.isTest).toBe(false);
    expect(
      lib.symbols
        .filter((symbol) => symbol.container === 'tests')
        .map((symbol) => [symbol.name, symbol.kind, symbol.test]),
    ).toEqual([
      ['counter', 'function', undefined],
      ['test_defer', 'function', true],
      ['test_deref', 'function', true],
    ]);
    expect(index.risk.find((entry) => entry.path === 'src/lib.rs')?.tests).toEqual(['src/lib.rs']);
    // A doc comment above the attributes is still the item's.
    expect(lib.symbols.find((symbol) => symbol.name === 'guard')?.doc).toBe(
      'A guard that runs `dropfn(value)` when it goes out of scope.',
    );
  });

  it('only cfg(test) makes a test module: a plain mod or cfg(not(test)) is code', async () => {
    await tree({
      'Cargo.toml': '[package]\nname = "x"\nversion = "0.1.0"\n',
      'src/lib.rs': 'mod util;\n#[cfg(not(test))]\nmod real;\n#[cfg(test)]\nmod checks;\n',
      'src/util.rs': 'pub fn one() -> u32 {\n    1\n}\n',
      'src/real.rs': 'pub fn two() -> u32 {\n    2\n}\n',
      'src/checks.rs': 'mod helpers;\n\n#[test]\nfn one_is_one() {\n    assert_eq!(super::util::one(), 1);\n}\n',
      'src/checks/helpers.rs': 'pub fn fixture() -> u32 {\n    0\n}\n',
    });
    const index = await buildIndex(options);

    expect(index.files.filter((entry) => entry.isTest).map((entry) => entry.path)).toEqual([
      'src/checks.rs',
      // A test module's own submodule is test code too.
      'src/checks/helpers.rs',
    ]);
  });

  it('an edit adding or removing #[cfg(test)] moves the module in or out of the tests, as a full build would', async () => {
    const dir = await tree(FALLIBLE_ITERATOR);
    const first = await buildIndex(options);
    const libPath = join(dir, 'src/lib.rs');
    const original = await readFile(libPath, 'utf8');

    await writeFile(libPath, original.replace('#[cfg(all(test, feature = "alloc"))]\n', ''));
    const plain = await buildIndex({ ...options, previous: first, changedPaths: ['src/lib.rs'] });
    expect(file(plain, 'src/test.rs').isTest).toBe(false);
    expect(plain.risk.map((entry) => entry.path).sort()).toEqual(['src/lib.rs', 'src/test.rs']);
    expect(content(plain)).toEqual(content(await buildIndex({ ...options, cacheDir: join(root, 'fresh-1') })));

    await writeFile(libPath, original);
    const again = await buildIndex({ ...options, previous: plain, changedPaths: ['src/lib.rs'] });
    expect(file(again, 'src/test.rs').isTest).toBe(true);
    expect(content(again)).toEqual(content(await buildIndex({ ...options, cacheDir: join(root, 'fresh-2') })));
  });
});
