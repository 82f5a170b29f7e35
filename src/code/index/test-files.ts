/**
 * Test files by convention, and which source files they cover: a test covers a source file when
 * it imports it, or when their names match (`foo.test.ts`, `foo.spec.js`, `test_foo.py`,
 * `foo_test.py`, `foo_test.go`, `FooTest.java`, `foo.rs` under `tests/`) and the test sits in the
 * same directory or in a test directory (`test/`, `tests/`, `__tests__/`, `spec/`, `src/test/`).
 */
import { basename, dirname } from 'node:path/posix';

const TEST_DIRECTORY = /(?:^|\/)(?:tests?|__tests__|spec)\//;
const TEST_NAME = /(?:\.(?:test|spec)\.[cm]?[jt]sx?$|^test_.*\.py$|_test\.(?:py|go)$|(?:Test|Tests|IT)\.java$)/;

export function isTestPath(path: string): boolean {
  return TEST_NAME.test(basename(path)) || TEST_DIRECTORY.test(path);
}

/** The base name a test is about: `foo` for `foo.test.ts`, `test_foo.py`, `FooTest.java`. */
function testSubject(path: string): string {
  const name = basename(path);
  return stem(
    name
      .replace(/\.(?:test|spec)(\.[cm]?[jt]sx?)$/, '$1')
      .replace(/^test_/, '')
      .replace(/_test(\.(?:py|go))$/, '$1')
      .replace(/(?:Test|Tests|IT)\.java$/, '.java'),
  );
}

function stem(path: string): string {
  const name = basename(path);
  const dot = name.indexOf('.');
  return dot <= 0 ? name : name.slice(0, dot);
}

/**
 * Maps each source file to the tests covering it. `dependents` is the reverse import graph
 * (file -> files importing it).
 */
export function testsBySource(
  paths: readonly string[],
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
  for (const path of paths) {
    if (testPaths.has(path)) continue;
    const tests: string[] = [];
    // Importers are distinct already; a test matched by name may be one of them too.
    for (const importer of dependents[path] ?? []) if (testPaths.has(importer)) tests.push(importer);
    const named = bySubject.get(stem(path));
    if (named !== undefined) {
      const directory = dirname(path);
      for (const test of named)
        if ((dirname(test) === directory || TEST_DIRECTORY.test(test)) && !tests.includes(test)) tests.push(test);
    }
    result.set(path, tests.length > 1 ? tests.sort() : tests);
  }
  return result;
}
