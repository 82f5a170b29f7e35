/**
 * The Python project of the end-to-end TDD test and the scripted model that builds it: a tiny
 * calculator tested with pytest (found through `pytest.ini`), in two cycles with these faults:
 * - cycle 1: the first RED test passes immediately (`is not None`); RED_FIX tightens it;
 * - cycle 2: the first RED test imports a function that does not exist (a collection error,
 *   not an assertion failure); RED_FIX adds a stub. The first REFACTOR breaks a test and is
 *   rolled back; the second changes nothing.
 */
import { bash, edit, planSteps, say, write, type BrainScript, type ScriptStep } from './scripted-brain.js';

export const PY_FEATURE = 'Calculator: subtract and divide';
export const PY_TEST_FILE = 'tests/test_calc.py';
export const PY_IMPL_FILE = 'calc.py';

export const PY_ITEMS = [
  'subtract returns the difference of two numbers',
  'divide returns the quotient of two numbers',
] as const;
const [SUBTRACT, DIVIDE] = PY_ITEMS;

const ADD = 'def add(a, b):\n    return a + b\n';

/** The repository's first commit. */
export const PY_PROJECT_FILES: Record<string, string> = {
  'README.md': '# calc\n\nA tiny calculator.\n',
  '.gitignore': '__pycache__/\n.pytest_cache/\n',
  'pytest.ini': '[pytest]\ntestpaths = tests\npythonpath = .\nmarkers =\n    slow: tests that take long\n',
  'calc.py': `"""A tiny calculator."""\n\n\n${ADD}`,
  'tests/test_calc.py': 'from calc import add\n\n\ndef test_add_returns_the_sum():\n    assert add(2, 3) == 5\n',
};

const TEST_ADD = '\n\ndef test_add_returns_the_sum():\n    assert add(2, 3) == 5\n';
const TEST_SUBTRACT_WEAK = '\n\ndef test_subtract_returns_the_difference():\n    assert subtract(5, 3) is not None\n';
const TEST_SUBTRACT = TEST_SUBTRACT_WEAK.replace('is not None', '== 2');
const TEST_DIVIDE = '\n\ndef test_divide_returns_the_quotient():\n    assert divide(7, 2) == 3.5\n';

const TYPED = `"""A tiny calculator."""


def add(a: float, b: float) -> float:
    return a + b


def subtract(a: float, b: float) -> float:
    return a - b
`;

/** The implementation file at the end of the run. */
export const PY_FINAL_IMPL = `${TYPED}\n\ndef divide(a, b):\n    return a / b\n`;

const steps: ScriptStep[] = [
  ...planSteps(
    'a calculator',
    PY_ITEMS.map((text) => ({ text, testFile: PY_TEST_FILE, implFile: PY_IMPL_FILE })),
  ),

  // Cycle 1
  {
    stage: 'RED',
    test: SUBTRACT,
    why: 'a RED whose test passes immediately',
    turns: [
      say(
        'A subtract test and a stub.',
        write(PY_TEST_FILE, `from calc import add, subtract${TEST_ADD}${TEST_SUBTRACT_WEAK}`),
        edit(PY_IMPL_FILE, ADD, `${ADD}\n\ndef subtract(a, b):\n    return 0\n`),
      ),
      say('Run the suite.', bash('pytest -q')),
    ],
  },
  {
    stage: 'RED_FIX',
    test: SUBTRACT,
    attempt: 2,
    turns: [say('Check the actual difference.', edit(PY_TEST_FILE, 'is not None', '== 2'))],
  },
  { stage: 'GREEN', test: SUBTRACT, turns: [say('Subtract.', edit(PY_IMPL_FILE, 'return 0', 'return a - b'))] },
  {
    stage: 'REFACTOR',
    test: SUBTRACT,
    why: 'a REFACTOR that is kept',
    turns: [say('Add type hints.', write(PY_IMPL_FILE, TYPED))],
  },

  // Cycle 2
  {
    stage: 'RED',
    test: DIVIDE,
    why: 'a RED test that fails to import (collection error)',
    turns: [
      say(
        'A divide test.',
        write(PY_TEST_FILE, `from calc import add, divide, subtract${TEST_ADD}${TEST_SUBTRACT}${TEST_DIVIDE}`),
      ),
    ],
  },
  {
    stage: 'RED_FIX',
    test: DIVIDE,
    attempt: 2,
    why: 'RED_FIX adds the stub so the test fails on its assertion',
    turns: [
      say(
        'Add a divide stub.',
        edit(PY_IMPL_FILE, '    return a - b\n', '    return a - b\n\n\ndef divide(a, b):\n    return 0\n'),
      ),
    ],
  },
  { stage: 'GREEN', test: DIVIDE, turns: [say('Divide.', edit(PY_IMPL_FILE, 'return 0', 'return a / b'))] },
  {
    stage: 'REFACTOR',
    test: DIVIDE,
    why: 'a REFACTOR that breaks a test',
    turns: [say('Floor division is simpler.', edit(PY_IMPL_FILE, 'return a / b', 'return a // b'))],
  },
  { stage: 'REFACTOR', test: DIVIDE, attempt: 2, turns: [say('True division is right after all; nothing to change.')] },
];

export const PY_SCRIPT: BrainScript = { items: PY_ITEMS, steps };
