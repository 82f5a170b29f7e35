import { describe, expect, it } from 'vitest';
import {
  isRustTestAttribute,
  isRustTestOnlyAttribute,
  isTestPath,
  testsBySource,
  type CoverageSource,
} from '../../src/code/index/test-files.js';

const source = (path: string, extra: Partial<CoverageSource> = {}): CoverageSource => ({
  path,
  symbols: [],
  imports: [],
  ...extra,
});

describe('isTestPath', () => {
  it("knows pytest's conftest.py and test directories with a prefix (attrs's typing_tests/)", () => {
    expect(isTestPath('conftest.py')).toBe(true);
    expect(isTestPath('src/pkg/conftest.py')).toBe(true);
    expect(isTestPath('typing_tests/mypy.py')).toBe(true);
    expect(isTestPath('integration-tests/run.ts')).toBe(true);
    expect(isTestPath('tests/attr/strategies.py')).toBe(true);
    // Words that merely end in "test" are not test directories.
    expect(isTestPath('latest/app.py')).toBe(false);
    expect(isTestPath('contest/score.py')).toBe(false);
    expect(isTestPath('src/attr/_funcs.py')).toBe(false);
  });

  it('knows type tests by their names: tsd (index.test-d.ts) and tstyche (example.tst.ts, fastify-plugin)', () => {
    expect(isTestPath('types/index.test-d.ts')).toBe(true);
    expect(isTestPath('types/example-async.tst.ts')).toBe(true);
    expect(isTestPath('src/index.test-d.mts')).toBe(true);
    expect(isTestPath('types/index.d.ts')).toBe(false);
    expect(isTestPath('src/first.ts')).toBe(false);
  });

  it('knows a suite in one file by its name: test.js (remark), test.mjs, tests.py', () => {
    expect(isTestPath('test.js')).toBe(true);
    expect(isTestPath('packages/x/test.mjs')).toBe(true);
    expect(isTestPath('tests.py')).toBe(true);
    expect(isTestPath('test.py')).toBe(true);
    expect(isTestPath('latest.js')).toBe(false);
    expect(isTestPath('contest.py')).toBe(false);
    expect(isTestPath('testing.js')).toBe(false);
  });
});

describe('Rust attributes', () => {
  it('recognises the attributes the test harness calls a function by', () => {
    for (const attribute of [
      '#[test]',
      '#[tokio::test]',
      '#[tokio::test(flavor = "multi_thread")]',
      '#[async_std::test]',
      '#[should_panic]',
      '#[should_panic(expected = "boom")]',
      '#[rstest]',
      '#[test_case(1, 2)]',
      '#[bench]',
    ])
      expect(isRustTestAttribute(attribute), attribute).toBe(true);
    for (const attribute of ['#[inline]', '#[cfg(test)]', '#[derive(Debug)]', '#[testing_helper]', '#[attest]'])
      expect(isRustTestAttribute(attribute), attribute).toBe(false);
  });

  it('knows which cfg compiles an item only for tests', () => {
    expect(isRustTestOnlyAttribute('#[cfg(test)]')).toBe(true);
    expect(isRustTestOnlyAttribute('#[cfg(all(test, feature = "alloc"))]')).toBe(true);
    expect(isRustTestOnlyAttribute('#[cfg(all(feature = "std", all(unix, test)))]')).toBe(true);
    expect(isRustTestOnlyAttribute('#[cfg(not(test))]')).toBe(false);
    expect(isRustTestOnlyAttribute('#[cfg(any(test, feature = "testing"))]')).toBe(false);
    expect(isRustTestOnlyAttribute('#[cfg(feature = "alloc")]')).toBe(false);
    expect(isRustTestOnlyAttribute('#[test]')).toBe(false);
  });
});

describe('testsBySource', () => {
  it("covers a private module by its test named without the underscore (attrs's _funcs.py and tests/test_funcs.py)", () => {
    const tests = new Set(['tests/test_funcs.py', 'tests/test_next_gen.py', 'tests/test_version_info.py']);
    const covered = testsBySource(
      [
        source('src/attr/_funcs.py'),
        source('src/attr/_next_gen.py'),
        source('src/attr/_version_info.py'),
        source('src/attr/_cmp.py'),
      ],
      tests,
      {},
    );

    expect(Object.fromEntries(covered)).toEqual({
      'src/attr/_funcs.py': ['tests/test_funcs.py'],
      'src/attr/_next_gen.py': ['tests/test_next_gen.py'],
      'src/attr/_version_info.py': ['tests/test_version_info.py'],
      'src/attr/_cmp.py': [],
    });
  });

  it('covers a module by <name>_test.py beside it and by a test under tests/<package>/', () => {
    const covered = testsBySource(
      [source('pkg/_parse.py'), source('src/werkzeug/_internal.py')],
      new Set(['pkg/parse_test.py', 'tests/werkzeug/test_internal.py']),
      {},
    );

    expect(covered.get('pkg/_parse.py')).toEqual(['pkg/parse_test.py']);
    expect(covered.get('src/werkzeug/_internal.py')).toEqual(['tests/werkzeug/test_internal.py']);
  });

  it("covers a package's modules by the test named for the package (werkzeug's tests/test_datastructures.py)", () => {
    const covered = testsBySource(
      [
        source('src/werkzeug/datastructures/etag.py'),
        source('src/werkzeug/routing/rules.py'),
        source('src/werkzeug/user_agent.py'),
        source('lib/routing/rules.py'),
      ],
      new Set(['tests/test_datastructures.py', 'tests/test_routing.py', 'lib/test_routing.py']),
      {},
    );

    expect(Object.fromEntries(covered)).toEqual({
      'src/werkzeug/datastructures/etag.py': ['tests/test_datastructures.py'],
      'src/werkzeug/routing/rules.py': ['tests/test_routing.py'],
      'src/werkzeug/user_agent.py': [],
      // Only a test in a test directory speaks for a whole package.
      'lib/routing/rules.py': ['tests/test_routing.py'],
    });
  });

  it('covers a Rust file by the test modules it declares and by its own #[test] functions', () => {
    const covered = testsBySource(
      [
        source('src/lib.rs', { imports: [{ testOnly: true, resolved: ['src/test.rs'] }] }),
        source('src/guard.rs', { symbols: [{}, { test: true }] }),
        source('src/plain.rs', { imports: [{ resolved: ['src/other.rs'] }] }),
      ],
      new Set(['src/test.rs']),
      {},
    );

    expect(Object.fromEntries(covered)).toEqual({
      'src/lib.rs': ['src/test.rs'],
      'src/guard.rs': ['src/guard.rs'],
      'src/plain.rs': [],
    });
  });
});
