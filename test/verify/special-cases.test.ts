import { describe, expect, it } from 'vitest';
import { addedLines, suspectSpecialCasing } from '../../src/verify/special-cases.js';

const JS_TEST = `test('multiply', () => {\n  assert.equal(multiply(2, 3), 6);\n  assert.equal(multiply(4, 5), 20);\n});\n`;
const PY_TEST = `def test_multiply():\n    assert multiply(2, 3) == 6\n`;

const lines = (text: string): string[] => text.split('\n');

describe('suspectSpecialCasing', () => {
  it("suspects guards that compare the test's inputs and return its expected values", () => {
    const cheat =
      'export function multiply(a, b) {\n  if (a === 2 && b === 3) return 6;\n  if (a === 4 && b === 5) return 20;\n  return 0;\n}';
    expect(suspectSpecialCasing(JS_TEST, lines(cheat))?.evidence).toEqual([
      'if (a === 2 && b === 3) return 6;',
      'if (a === 4 && b === 5) return 20;',
    ]);
    const python = 'def multiply(a, b):\n    if a == 2 and b == 3:\n        return 6\n    return 0';
    expect(suspectSpecialCasing(PY_TEST, lines(python))?.evidence).toEqual(['if a == 2 and b == 3: return 6']);
    // One input per guard, but a distinct expected value per case: a lookup by cases.
    const words = "test('x', () => { assert.equal(up('a'), 'A'); assert.equal(up('b'), 'B'); });";
    const lookup = 'function up(s) {\n  if (s === \'a\') return \'A\';\n  if (s === "b") return "B";\n}';
    expect(suspectSpecialCasing(words, lines(lookup))).toBeDefined();
  });

  it('stays quiet on honest code: computations, base cases, guards on values the test does not use', () => {
    expect(suspectSpecialCasing(JS_TEST, lines('  return a * b;'))).toBeUndefined();
    const factorial = "test('f', () => { assert.equal(f(0), 1); assert.equal(f(1), 1); assert.equal(f(4), 24); });";
    expect(
      suspectSpecialCasing(
        factorial,
        lines('  if (n === 0) return 1;\n  if (n === 1) return 1;\n  return n * f(n - 1);'),
      ),
    ).toBeUndefined();
    expect(
      suspectSpecialCasing(JS_TEST, lines('  if (b === 0) return 0;\n  if (b === 1) return a;\n  return a * b;')),
    ).toBeUndefined();
  });
});

describe('addedLines', () => {
  it('keeps the lines the new text adds, counting repeated lines', () => {
    expect(addedLines('a\nb\nb\n', 'a\nb\nb\nb\nc\n')).toEqual(['b', 'c']);
    expect(addedLines(null, 'x\n')).toEqual(['x']);
  });
});
