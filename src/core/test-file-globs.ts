/**
 * What counts as a test file, by path: the one list the default `[test] patterns` (the files TDD
 * locks after RED and the fingerprint watches), the verification's default globs and the code
 * index's `isTestPath` (the refactor planner's file roles) all read, so that a file the index
 * treats as a test is also locked as one. Globs in picomatch syntax, without dot files.
 */
const SCRIPT = '{js,jsx,cjs,mjs,ts,tsx,cts,mts}';
const TYPESCRIPT = '{ts,tsx,cts,mts}';

export const TEST_FILE_GLOBS: readonly string[] = [
  // JavaScript / TypeScript: `foo.test.ts`, `foo.spec.js`, type tests (tsd's `index.test-d.ts`,
  // tstyche's `example.tst.ts`), a suite in one file (remark's `test.js`, `tests.mjs`).
  '**/*.test.*',
  '**/*.spec.*',
  `**/*.test-d.${TYPESCRIPT}`,
  `**/*.tst.${TYPESCRIPT}`,
  `**/test.${SCRIPT}`,
  `**/tests.${SCRIPT}`,
  // Python: pytest's names and `conftest.py`, unittest's `test.py` / `tests.py`.
  '**/test_*.py',
  '**/*_test.py',
  '**/conftest.py',
  '**/test.py',
  '**/tests.py',
  // Go
  '**/*_test.go',
  // Java / Kotlin: surefire's and failsafe's class names (and Maven's `src/test/`, a test directory).
  '**/*Test.java',
  '**/*Tests.java',
  '**/*IT.java',
  // Test directories: `test/`, `tests/` (Rust's integration tests too), `__tests__/`, `spec/`,
  // and prefixed ones (`typing_tests/`, `integration-tests/`).
  '**/test/**',
  '**/tests/**',
  '**/__tests__/**',
  '**/spec/**',
  '**/*[_-]test/**',
  '**/*[_-]tests/**',
];
