/**
 * What is a test, and which source files tests cover.
 *
 * A file is a test by its name (`foo.test.ts`, `foo.spec.js`, type tests `foo.test-d.ts` (tsd)
 * and `foo.tst.ts` (tstyche), a suite in one file (`test.js`, remark's; `tests.py`), `test_foo.py`, `foo_test.py`,
 * `foo_test.go`, `FooTest.java`, pytest's `conftest.py`) or its directory (`test/`, `tests/`,
 * `__tests__/`, `spec/`, `src/test/`, `typing_tests/`, `integration-tests/`); a Rust module is a
 * test module when the module declaring it does so under `#[cfg(test)]` (`mod test;` in
 * `lib.rs` makes `test.rs` one, whatever its name).
 *
 * A test covers a source file when it imports it, or when their names match (`foo.ts` and
 * `foo.test.ts`; `_funcs.py` and `test_funcs.py`, a private module's leading underscores aside)
 * and the test sits in the same directory or in a test directory, or when a test in a test
 * directory is named for the file's package (`tests/test_routing.py`, `routing/rules.py`). A
 * Rust file is also covered by the test modules it declares and by its own `#[test]` functions
 * (an inline `mod tests`).
 */
import { basename, dirname } from 'node:path/posix';
import picomatch from 'picomatch';
import { TEST_FILE_GLOBS } from '../../core/test-file-globs.js';
import type { CodeSymbol, IndexedFile, ResolvedImport } from './types.js';

const TEST_DIRECTORY = /(?:^|\/)(?:(?:[\w.-]+[_-])?tests?|__tests__|spec)\//;
/**
 * The default `[test] patterns`, so that what the index calls a test is what TDD locks as one: as
 * one regular expression, tested once per path without allocating (picomatch's matcher for a list
 * tries each glob in turn and makes a result object per try; the index asks for every file).
 */
const TEST_FILE = new RegExp(TEST_FILE_GLOBS.map((glob) => `(?:${picomatch.makeRe(glob).source})`).join('|'), 'y');

/** What every glob of the list needs somewhere in the path: most paths are ruled out by this alone. */
export const MAYBE_TEST = /[tT]est|spec|\.tst\.|IT\.java/;

export function isTestPath(path: string): boolean {
  if (!MAYBE_TEST.test(path)) return false;
  // Sticky: tried at the start only (each glob's expression is anchored, the alternation is not).
  TEST_FILE.lastIndex = 0;
  return TEST_FILE.test(path);
}

/**
 * The name a test and the source it covers share: `foo` for `foo.test.ts`, `test_foo.py`,
 * `FooTest.java` and for `foo.ts`; a Python private module's leading underscores do not count
 * (`_funcs.py` is tested in `test_funcs.py`, not `test__funcs.py`).
 */
function testSubject(path: string): string {
  const name = basename(path);
  return coveredName(
    name
      .replace(/\.(?:test|spec)(\.[cm]?[jt]sx?)$/, '$1')
      .replace(/^test_/, '')
      .replace(/_test(\.(?:py|go))$/, '$1')
      .replace(/(?:Test|Tests|IT)\.java$/, '.java'),
  );
}

/** The name a source file is tested under: its stem, without leading underscores. */
function coveredName(path: string): string {
  const name = stem(path);
  return name.replace(/^_+(?=[^_])/, '');
}

function stem(path: string): string {
  const name = basename(path);
  const dot = name.indexOf('.');
  return dot <= 0 ? name : name.slice(0, dot);
}

/** The test attributes of Rust functions: `#[test]`, `#[tokio::test(...)]`, `#[rstest]`, `#[test_case(...)]`. */
const RUST_TEST_ATTRIBUTE =
  /^#\[\s*(?:[\w:]*::)?(?:test|bench|rstest|test_case|quickcheck|wasm_bindgen_test|should_panic)\s*(?:[(\]]|$)/;

/** Whether an outer attribute (its text, `#[...]`) makes a Rust function a test the harness calls. */
export function isRustTestAttribute(attribute: string): boolean {
  return RUST_TEST_ATTRIBUTE.test(attribute);
}

/**
 * Whether an outer attribute compiles its item only for tests: `#[cfg(test)]`,
 * `#[cfg(all(test, feature = "alloc"))]`; not `cfg(not(test))` or `cfg(any(test, ...))`.
 */
export function isRustTestOnlyAttribute(attribute: string): boolean {
  const predicate = /^#\[\s*cfg\s*\(([\s\S]*)\)\s*\]$/.exec(attribute.trim())?.[1];
  return predicate !== undefined && requiresTest(predicate.trim());
}

/** Whether a `cfg` predicate holds only when `test` does. */
function requiresTest(predicate: string): boolean {
  if (predicate === 'test') return true;
  const all = /^all\s*\(([\s\S]*)\)$/.exec(predicate)?.[1];
  return all !== undefined && topLevelArguments(all).some((argument) => requiresTest(argument));
}

/** `a, b(c, d), e` -> `a`, `b(c, d)`, `e`. */
function topLevelArguments(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let position = 0; position < list.length; position++) {
    const character = list[position];
    if (character === '(') depth++;
    else if (character === ')') depth--;
    else if (character === ',' && depth === 0) {
      parts.push(list.slice(start, position).trim());
      start = position + 1;
    }
  }
  parts.push(list.slice(start).trim());
  return parts.filter((part) => part !== '');
}

/**
 * Sets `isTest` of every Rust file, in place, from its path and from the modules declared under
 * `#[cfg(test)]` (imports resolved), and of the modules those declare in turn (a test module's
 * own submodules are test code too). Returns the files whose mark changed: the test modules a
 * parent declares are known only once every file's imports are resolved.
 */
export function markRustTestModules(files: readonly IndexedFile[]): IndexedFile[] {
  const rust = files.filter((file) => file.language === 'rust');
  if (rust.length === 0) return [];
  const byPath = new Map(rust.map((file) => [file.path, file]));
  const testModules = new Set<string>();
  const pending: IndexedFile[] = [];
  const add = (path: string): void => {
    const module = byPath.get(path);
    if (module === undefined || testModules.has(path)) return;
    testModules.add(path);
    pending.push(module);
  };
  for (const file of rust) for (const ref of file.imports) if (ref.testOnly === true) ref.resolved.forEach(add);
  for (let module = pending.pop(); module !== undefined; module = pending.pop())
    for (const ref of module.imports) if (ref.specifier.startsWith('mod ')) ref.resolved.forEach(add);
  const changed: IndexedFile[] = [];
  for (const file of rust) {
    const isTest = isTestPath(file.path) || testModules.has(file.path);
    if (isTest === file.isTest) continue;
    file.isTest = isTest;
    changed.push(file);
  }
  return changed;
}

/** What `testsBySource` reads of a source file. */
export interface CoverageSource {
  path: string;
  symbols: readonly Pick<CodeSymbol, 'test'>[];
  imports: readonly Pick<ResolvedImport, 'testOnly' | 'resolved'>[];
}

/**
 * Maps each source file to the tests covering it (see the module comment). `dependents` is the
 * reverse import graph (file -> files importing it).
 */
export function testsBySource(
  sources: readonly CoverageSource[],
  testPaths: ReadonlySet<string>,
  dependents: Readonly<Record<string, readonly string[]>>,
): Map<string, string[]> {
  const bySubject = new Map<string, string[]>();
  for (const test of testPaths) {
    const subject = testSubject(test);
    let list = bySubject.get(subject);
    if (list === undefined) bySubject.set(subject, (list = []));
    list.push(test);
  }
  const result = new Map<string, string[]>();
  for (const source of sources) {
    const { path } = source;
    if (testPaths.has(path)) continue;
    const tests = new Set<string>();
    for (const importer of dependents[path] ?? []) if (testPaths.has(importer)) tests.add(importer);
    const directory = dirname(path);
    for (const test of bySubject.get(coveredName(path)) ?? []) {
      if (dirname(test) === directory || TEST_DIRECTORY.test(test)) tests.add(test);
    }
    // A test named for the package: werkzeug's tests/test_datastructures.py covers datastructures/*.
    for (const test of directory === '.' ? [] : (bySubject.get(coveredName(directory)) ?? [])) {
      if (TEST_DIRECTORY.test(test)) tests.add(test);
    }
    for (const ref of source.imports)
      if (ref.testOnly === true) for (const module of ref.resolved) if (testPaths.has(module)) tests.add(module);
    if (source.symbols.some((symbol) => symbol.test === true)) tests.add(path);
    result.set(path, [...tests].sort());
  }
  return result;
}
