import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProcessRunner } from '../../src/process/runner.js';
import { parsePytestText } from '../../src/verify/parsers/pytest-text.js';
import { parseUnittestText } from '../../src/verify/parsers/unittest-text.js';
import { runTests } from '../../src/verify/run-tests.js';
import { toolchain } from '../support/toolchains.js';
import { makeProject } from './helpers.js';

/** Debian's python3-pytest (`apt-get install -y python3-pytest`) for the system interpreter. */
const PYTHON = '/usr/bin/python3';
const PYTEST = `${PYTHON} -m pytest`;

const PYTEST_PROJECT: Record<string, string> = {
  'pytest.ini': '[pytest]\n',
  'calc.py': 'def add(a, b):\n    return a + b\n',
  'tests/test_calc.py': [
    'import pytest',
    'from calc import add',
    'def test_adds():\n    assert add(1, 1) == 2',
    'def test_wrong():\n    assert add(1, 1) == 3',
    'def test_name_error():\n    return undefined_name',
    'class TestGroup:\n    def test_in_class(self):\n        assert add(2, 2) == 4',
    '@pytest.mark.skip(reason="later")\ndef test_later():\n    pass',
    '',
  ].join('\n'),
};

function pytestRun(root: string, command = PYTEST) {
  return runTests({
    command,
    framework: 'pytest',
    cwd: root,
    runner: createProcessRunner(),
    timeoutMs: 60_000,
    reportDir: path.join(root, '.r'),
  });
}

const pytest = toolchain('python3-pytest');

describe.skipIf(pytest.missing)(`pytest (real runner, JUnit XML via PYTEST_ADDOPTS)${pytest.note}`, () => {
  it('reports passes, assertion failures and errors with pytest node ids', async () => {
    const root = await makeProject({
      ...PYTEST_PROJECT,
      'conftest.py': 'import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n',
    });
    const result = await pytestRun(root);
    expect(result.source).toBe('junit-xml');
    expect(result.exitCode).toBe(1);
    const byId = Object.fromEntries(result.tests.map((test) => [test.id, test]));
    expect(byId['tests/test_calc.py::test_adds']?.status).toBe('passed');
    expect(byId['tests/test_calc.py::test_wrong']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['tests/test_calc.py::test_name_error']).toMatchObject({ status: 'failed', failureKind: 'error' });
    expect(byId['tests/test_calc.py::test_name_error']?.message).toContain('NameError');
    expect(byId['tests/test_calc.py::TestGroup::test_in_class']?.status).toBe('passed');
    expect(byId['tests/test_calc.py::test_later']?.status).toBe('skipped');
    expect(result.collectionErrors).toEqual([]);
  });

  it('reports a module that fails to import as a collection error', async () => {
    const root = await makeProject({
      ...PYTEST_PROJECT,
      'conftest.py': 'import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n',
      'tests/test_new.py': 'from calc import multiply\n\ndef test_multiplies():\n    assert multiply(2, 3) == 6\n',
    });
    const result = await pytestRun(root);
    expect(result.collectionErrors).toHaveLength(1);
    expect(result.collectionErrors[0]).toContain('tests/test_new.py');
    expect(result.collectionErrors[0]).toContain('ImportError');
    // The traceback's last line (from the XML, not cut from the console) says what is missing.
    expect(result.collectionErrors[0]).toContain("cannot import name 'multiply'");
    expect(result.tests).toContainEqual(
      expect.objectContaining({ id: 'tests/test_new.py::(collection)', failureKind: 'collection' }),
    );
  });

  it('parses the console output (-rA) the same way', async () => {
    const root = await makeProject({
      ...PYTEST_PROJECT,
      'conftest.py': 'import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n',
    });
    const result = await runTests({
      command: `${PYTEST} -rA -p no:cacheprovider`,
      framework: 'custom',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 60_000,
      reportDir: path.join(root, '.r'),
    });
    expect(result.source).toBe('exit-code');
    const parsed = parsePytestText(result.output);
    const byId = Object.fromEntries(parsed.tests.map((test) => [test.id, test]));
    expect(byId['tests/test_calc.py::test_adds']?.status).toBe('passed');
    expect(byId['tests/test_calc.py::test_wrong']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['tests/test_calc.py::test_name_error']).toMatchObject({ status: 'failed', failureKind: 'error' });
    expect(byId['tests/test_calc.py::TestGroup::test_in_class']?.status).toBe('passed');
  });

  it('parses a collection error from the console output', async () => {
    const root = await makeProject({
      'pytest.ini': '[pytest]\n',
      'tests/test_x.py': 'import not_a_module\n\ndef test_x():\n    pass\n',
    });
    const result = await runTests({
      command: `${PYTEST} -rA -p no:cacheprovider`,
      framework: 'custom',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 60_000,
      reportDir: path.join(root, '.r'),
    });
    const parsed = parsePytestText(result.output);
    expect(parsed.collectionErrors).toHaveLength(1);
    expect(parsed.collectionErrors[0]).toContain('ModuleNotFoundError');
    expect(parsed.tests).toEqual([
      expect.objectContaining({ id: 'tests/test_x.py::(collection)', failureKind: 'collection' }),
    ]);
  });
});

describe.skipIf(pytest.missing)(`pytest: what RED needs to tell apart (real runner)${pytest.note}`, () => {
  const KINDS: Record<string, string> = {
    'pytest.ini': '[pytest]\n',
    'tests/test_kinds.py': [
      'import pytest',
      'def test_assert():\n    assert 1 == 2',
      'def test_not_implemented():\n    raise Exception("not implemented")',
      'def test_not_implemented_error():\n    raise NotImplementedError()',
      'def test_fail():\n    pytest.fail("explicit")',
      '@pytest.mark.xfail\ndef test_xfail():\n    assert False',
      '@pytest.mark.xfail\ndef test_xpass():\n    assert True',
      '',
    ].join('\n'),
  };

  it('calls a bare Exception an error, not an assertion, in the XML report and the console alike', async () => {
    const root = await makeProject(KINDS);
    const junit = await pytestRun(root);
    const text = await runTests({
      command: `${PYTEST} -rA -p no:cacheprovider`,
      framework: 'custom',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 60_000,
      reportDir: path.join(root, '.r'),
    });
    expect(junit.source).toBe('junit-xml');
    const outcomes = (tests: { id: string; status: string; failureKind?: string }[]) =>
      Object.fromEntries(tests.map((test) => [test.id, [test.status, test.failureKind]]));
    const expected = {
      'tests/test_kinds.py::test_assert': ['failed', 'assertion'],
      'tests/test_kinds.py::test_not_implemented': ['failed', 'error'],
      'tests/test_kinds.py::test_not_implemented_error': ['failed', 'error'],
      'tests/test_kinds.py::test_fail': ['failed', 'assertion'],
      // pytest's XML calls an expected failure skipped and an unexpected (non-strict) pass passed.
      'tests/test_kinds.py::test_xfail': ['skipped', undefined],
      'tests/test_kinds.py::test_xpass': ['passed', undefined],
    };
    expect(outcomes(junit.tests)).toEqual(expected);
    expect(outcomes(parsePytestText(text.output).tests)).toEqual(expected);
  });
});

const python = toolchain('python3');

describe.skipIf(python.missing)(`unittest (real runner, -v added)${python.note}`, () => {
  it('reports ok/FAIL/ERROR/skipped, subtests and modules that fail to import', async () => {
    const root = await makeProject({
      'test_calc.py': [
        'import unittest',
        'class TestCalc(unittest.TestCase):',
        '    def test_adds(self):\n        self.assertEqual(1 + 1, 2)',
        '    def test_wrong(self):\n        self.assertEqual(1 + 1, 3)',
        '    def test_name_error(self):\n        undefined_name',
        '    @unittest.skip("later")\n    def test_later(self):\n        pass',
        '    def test_sub(self):\n        """Docstring."""\n        for i in range(2):\n            with self.subTest(i=i):\n                self.assertEqual(i, 0)',
        '',
      ].join('\n'),
      'test_broken.py': 'import not_a_module\n',
    });
    const result = await runTests({
      command: `${PYTHON} -m unittest`,
      framework: 'unittest',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 60_000,
      reportDir: path.join(root, '.r'),
    });
    expect(result.command).toBe(`${PYTHON} -m unittest -v`);
    expect(result.source).toBe('unittest');
    const byId = Object.fromEntries(result.tests.map((test) => [test.id, test]));
    expect(byId['test_calc.TestCalc::test_adds']?.status).toBe('passed');
    expect(byId['test_calc.TestCalc::test_wrong']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(byId['test_calc.TestCalc::test_name_error']).toMatchObject({ status: 'failed', failureKind: 'error' });
    expect(byId['test_calc.TestCalc::test_later']?.status).toBe('skipped');
    expect(byId['test_calc.TestCalc::test_sub']).toMatchObject({ status: 'failed', failureKind: 'assertion' });
    expect(result.collectionErrors).toHaveLength(1);
    expect(result.collectionErrors[0]).toContain('not_a_module');
    expect(parseUnittestText(result.output).tests).toHaveLength(result.tests.length);
  });

  it('adds -v after `discover` and reports a package module that fails to import', async () => {
    const root = await makeProject({
      'calc.py': 'def add(a, b):\n    return a + b\n',
      'tests/__init__.py': '',
      'tests/test_calc.py':
        'import unittest\nfrom calc import add\nclass T(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(1, 1), 2)\n',
      'tests/test_new.py':
        'import unittest\nfrom calc import mul\nclass M(unittest.TestCase):\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n',
    });
    const result = await runTests({
      command: `${PYTHON} -m unittest discover -s tests -t .`,
      framework: 'unittest',
      cwd: root,
      runner: createProcessRunner(),
      timeoutMs: 60_000,
      reportDir: path.join(root, '.r'),
    });
    // `-m unittest -v discover ...` is a usage error; after `discover` it is an option of discovery.
    expect(result.command).toBe(`${PYTHON} -m unittest discover -v -s tests -t .`);
    expect(result.source).toBe('unittest');
    expect(result.tests).toContainEqual(
      expect.objectContaining({ id: 'tests.test_calc.T::test_adds', status: 'passed' }),
    );
    expect(result.tests).toContainEqual(
      expect.objectContaining({ id: 'tests.test_new::(collection)', failureKind: 'collection' }),
    );
    expect(result.collectionErrors).toHaveLength(1);
    expect(result.collectionErrors[0]).toMatch(/^tests\.test_new: /);
    expect(result.collectionErrors[0]).toContain("cannot import name 'mul'");
  });
});
