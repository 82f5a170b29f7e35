import { describe, expect, it } from 'vitest';
import { reviewTestQuality, type TestQualityInput } from '../../src/code/test-quality.js';

const NODE_HEAD = `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from '../src/add.js';\n`;
const VITEST_HEAD = `import { expect, it, vi } from 'vitest';\nimport { add } from './add';\n`;

function js(body: string, before: string | null = null): TestQualityInput {
  return { testFile: 'test/add.test.js', implFile: 'src/add.js', text: NODE_HEAD + body, before };
}

async function rules(input: TestQualityInput): Promise<Array<[string, string | null]>> {
  return ((await reviewTestQuality(input)) ?? []).map((finding) => [finding.rule, finding.test]);
}

describe('the static review of test quality (JavaScript and TypeScript)', () => {
  it('passes a test that asserts on what the implementation returns', async () => {
    expect(await rules(js(`test('adds', () => { assert.equal(add(1, 2), 3); });\n`))).toEqual([]);
    const vitest = `${VITEST_HEAD}it('adds', () => {\n  expect(add(1, 2)).not.toBe(4);\n  expect(add(1, 2)).toBe(3);\n});\n`;
    expect(await rules({ testFile: 'src/add.test.ts', implFile: 'src/add.ts', text: vitest, before: null })).toEqual(
      [],
    );
  });

  it('refuses a new test with no assertion', async () => {
    const findings = await reviewTestQuality(js(`test('adds', () => {\n  add(1, 2);\n});\n`));
    expect(findings).toEqual([
      {
        rule: 'no-assertion',
        test: 'adds',
        line: 4,
        message:
          'The test "adds" asserts nothing: it passes whatever the code does. Assert on what src/add.js returns or does.',
      },
    ]);
  });

  it('counts a call of a helper of the file that asserts as an assertion', async () => {
    const text = `function check(value) {\n  assert.equal(value, 3);\n}\ntest('adds', () => {\n  check(add(1, 2));\n});\n`;
    expect(await rules(js(text))).toEqual([]);
  });

  it('refuses assertions that cannot fail: two literals, one expression against itself, a literal that is truthy', async () => {
    const text = [
      `test('one', () => { assert.equal(add(1, 2), 3); assert.equal(1, 1); });`,
      `test('two', () => { const x = add(1, 2); assert.deepEqual(x, x); });`,
      `test('three', () => { add(1, 2); assert.ok(true); });`,
      `test('four', () => { assert(add(1, 2) === 3); });`,
      '',
    ].join('\n');
    expect(await rules(js(text))).toEqual([
      ['constant-assertion', 'one'],
      ['constant-assertion', 'two'],
      ['constant-assertion', 'three'],
    ]);
    const vitest = `${VITEST_HEAD}it('adds', () => {\n  add(1, 2);\n  expect(true).toBe(true);\n  expect('x').toBeTruthy();\n});\n`;
    expect(await rules({ testFile: 'src/add.test.ts', implFile: 'src/add.ts', text: vitest, before: null })).toEqual([
      ['constant-assertion', 'adds'],
      ['constant-assertion', 'adds'],
    ]);
  });

  it('judges only the tests that are new: an older test of the file is not RED’s to fix', async () => {
    const old = `test('old', () => { add(1, 2); });\n`;
    const text = `${old}test('adds', () => { assert.equal(add(1, 2), 3); });\n`;
    expect(await rules(js(text, NODE_HEAD + old))).toEqual([]);
  });

  it('refuses a test file that mocks the implementation file it tests, and one that never imports it', async () => {
    const mocked = `${VITEST_HEAD}vi.mock('./add');\nit('adds', () => { expect(add(1, 2)).toBe(3); });\n`;
    expect(await rules({ testFile: 'src/add.test.ts', implFile: 'src/add.ts', text: mocked, before: null })).toEqual([
      ['mocks-unit-under-test', null],
    ]);
    const elsewhere = `import { expect, it } from 'vitest';\nimport { sub } from './sub';\nit('adds', () => { expect(sub(1, 2)).toBe(3); });\n`;
    expect(await rules({ testFile: 'src/add.test.ts', implFile: 'src/add.ts', text: elsewhere, before: null })).toEqual(
      [['unit-not-used', null]],
    );
  });

  it('fails (for its circuit breaker) on a file it cannot parse, and does not review other languages', async () => {
    await expect(reviewTestQuality(js(`test('adds', () => { assert.equal(add(1, 2), 3); \n`))).rejects.toThrow(
      /could not parse test\/add\.test\.js/,
    );
    expect(
      await reviewTestQuality({ testFile: 'add_test.go', implFile: 'add.go', text: 'package add\n', before: null }),
    ).toBeUndefined();
  });
});

describe('the static review of test quality (Python)', () => {
  const py = (text: string, before: string | null = null): TestQualityInput => ({
    testFile: 'tests/test_calc.py',
    implFile: 'src/calc.py',
    text,
    before,
  });

  it('passes asserts on the result, pytest.raises and unittest assertions', async () => {
    const text = [
      'import pytest',
      'import unittest',
      'from calc import add',
      '',
      'def test_adds():',
      '    assert add(1, 2) == 3',
      '',
      'def test_rejects_none():',
      '    with pytest.raises(TypeError):',
      '        add(None, 1)',
      '',
      'class TestAdd(unittest.TestCase):',
      '    def test_zero(self):',
      '        self.assertEqual(add(0, 0), 0)',
      '',
    ].join('\n');
    expect(await rules(py(text))).toEqual([]);
  });

  it('refuses no assertion, assert True, x == x, assertEqual(1, 1), and patching the function under test', async () => {
    const text = [
      'from unittest.mock import patch',
      'from calc import add',
      '',
      'def test_none():',
      '    add(1, 2)',
      '',
      'def test_true():',
      '    add(1, 2)',
      '    assert True',
      '',
      'def test_same():',
      '    result = add(1, 2)',
      '    assert result == result',
      '',
      'def test_mocked():',
      '    with patch("calc.add", return_value=3):',
      '        assert add(1, 2) == 3',
      '',
      'class TestAdd:',
      '    def test_literal(self):',
      '        add(1, 2)',
      '        self.assertEqual(1, 1)',
      '',
    ].join('\n');
    expect(await rules(py(text))).toEqual([
      ['no-assertion', 'test_none'],
      ['constant-assertion', 'test_true'],
      ['constant-assertion', 'test_same'],
      ['constant-assertion', 'TestAdd.test_literal'],
      ['mocks-unit-under-test', null],
    ]);
  });

  it('lets a test patch a collaborator of the implementation module', async () => {
    const text =
      'from unittest.mock import patch\nfrom calc import add\n\ndef test_adds():\n    with patch("calc.fetch"):\n        assert add(1, 2) == 3\n';
    expect(await rules(py(text))).toEqual([]);
  });

  it('refuses a test file that never imports the implementation module', async () => {
    expect(await rules(py('from other import add\n\ndef test_adds():\n    assert add(1, 2) == 3\n'))).toEqual([
      ['unit-not-used', null],
    ]);
  });
});

describe('the static review of test quality: imports it cannot resolve are given the benefit of the doubt', () => {
  it('accepts an import through the folder`s index, the project`s own package, or a Python package of the path', async () => {
    const through = (specifier: string): TestQualityInput => ({
      testFile: 'test/add.test.js',
      implFile: 'src/math/add.js',
      text: `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from '${specifier}';\ntest('adds', () => { assert.equal(add(1, 2), 3); });\n`,
      before: null,
    });
    expect(await rules(through('../src/math/index.js'))).toEqual([]);
    expect(await rules(through('../src/math'))).toEqual([]);
    expect(await rules(through('letters'))).toEqual([]);
    expect(await rules(through('node:path'))).toEqual([['unit-not-used', null]]);
    const python = {
      testFile: 'tests/test_calc.py',
      implFile: 'src/mypkg/calc.py',
      text: 'from mypkg import add\n\ndef test_adds():\n    assert add(1, 2) == 3\n',
      before: null,
    };
    expect(await rules(python)).toEqual([]);
  });
});

describe('the static review of test quality: assertions imported by name', () => {
  it('counts calls of functions imported from an assertion module (strictEqual, a default import under another name)', async () => {
    const named = `import { test } from 'node:test';\nimport { strictEqual as same } from 'node:assert';\nimport check from 'node:assert/strict';\nimport { add } from '../src/add.js';\ntest('adds', () => { same(add(1, 2), 3); });\ntest('adds again', () => { check.equal(add(2, 2), 4); });\ntest('no check', () => { add(1, 2); });\n`;
    expect(await rules({ testFile: 'test/add.test.js', implFile: 'src/add.js', text: named, before: null })).toEqual([
      ['no-assertion', 'no check'],
    ]);
  });
});
