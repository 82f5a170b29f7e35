/**
 * The default `[test] patterns` decide which files TDD locks after RED (the fingerprint); the code
 * index's `isTestPath` decides what the refactor planner calls a test. They disagreed: tstyche's
 * `*.tst.ts`, tsd's `*.test-d.ts`, a root `test.js` and `tests.py` were tests to the planner, but
 * no default pattern matched them, so GREEN could rewrite them unnoticed. Both read one list now.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isTestPath, MAYBE_TEST } from '../../src/code/index/test-files.js';
import { TEST_FILE_GLOBS } from '../../src/core/test-file-globs.js';
import { loadConfig } from '../../src/config/load.js';
import { fingerprintFiles } from '../../src/verify/fingerprint.js';

const TESTS = [
  'types/index.test-d.ts',
  'types/example-async.tst.ts',
  'test.js',
  'packages/x/test.mjs',
  'tests.py',
  'test.py',
  'src/pkg/conftest.py',
  'src/test/java/com/acme/CacheIT.java',
  'typing_tests/mypy.py',
  'integration-tests/run.ts',
  'src/sum.test.ts',
  'lib/test_sum.py',
];
const NOT_TESTS = ['src/index.ts', 'types/index.d.ts', 'latest.js', 'contest.py', 'testing.js', 'latest/app.py'];

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ratchet-patterns-'));
  for (const file of [...TESTS, ...NOT_TESTS]) {
    await mkdir(join(root, dirname(file)), { recursive: true });
    await writeFile(join(root, file), `// ${file}\n`);
  }
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the default [test] patterns', () => {
  it('lock exactly the files the code index treats as tests: type tests, one-file suites, tests.py', async () => {
    const config = await loadConfig({ repoRoot: root, env: { HOME: '/home/tester' } });
    const locked = Object.keys(await fingerprintFiles(root, config.test.patterns)).sort();
    expect(locked).toEqual([...TESTS].sort());
    const indexed = [...TESTS, ...NOT_TESTS].filter((file) => isTestPath(file)).sort();
    expect(indexed).toEqual(locked);
  });

  it('each name what isTestPath looks for before matching (a path without it is no test)', () => {
    for (const glob of TEST_FILE_GLOBS) expect(glob).toMatch(MAYBE_TEST);
  });
});
