import { describe, expect, it } from 'vitest';
import {
  findPendingItem,
  markDone,
  parseTestList,
  progressOf,
  type TestListItem,
} from '../../src/workflows/tdd/test-list.js';

const LIST = [
  '# Stack',
  '',
  'Some notes: - [ ] this is prose, not an item',
  '- [ ] pushes an item',
  '* [x] creates an empty stack',
  '+ [X] reports its size',
  '  - [ ] pops the last item  ',
  '- [] not a checkbox',
  '-[ ] no space after the bullet',
  '- [ ]',
  '1. [ ] numbered lists are not items',
  '- [ ] peeks without `removing`',
].join('\n');

function item(line: number, text: string, done = false): TestListItem {
  return { line, text, done };
}

describe('parseTestList', () => {
  it('reads checkbox items with their line, text and state', () => {
    expect(parseTestList(LIST)).toEqual([
      item(3, 'pushes an item'),
      item(4, 'creates an empty stack', true),
      item(5, 'reports its size', true),
      item(6, 'pops the last item'),
      item(11, 'peeks without `removing`'),
    ]);
  });

  it('handles CRLF line endings', () => {
    expect(parseTestList('- [ ] one\r\n- [x] two\r\n')).toEqual([item(0, 'one'), item(1, 'two', true)]);
  });

  it('finds nothing in an empty or itemless file', () => {
    expect(parseTestList('')).toEqual([]);
    expect(parseTestList('# Title\n\njust prose\n')).toEqual([]);
  });
});

describe('findPendingItem', () => {
  const items = parseTestList(
    [
      '- [ ] adds two numbers',
      '- [ ] adds three numbers',
      '- [x] subtracts two numbers',
      '- [ ] handles **negative** `numbers`',
      '- [ ] divides by zero',
    ].join('\n'),
  );

  it('matches exactly after normalising case, spacing, quotes, dots and emphasis', () => {
    expect(findPendingItem(items, 'adds two numbers')?.line).toBe(0);
    expect(findPendingItem(items, '  Adds   TWO numbers.')?.line).toBe(0);
    expect(findPendingItem(items, 'handles negative numbers')?.line).toBe(3);
    expect(findPendingItem(items, '"Handles *negative* numbers"')?.line).toBe(3);
  });

  it('prefers an exact match over containment', () => {
    const list = parseTestList('- [ ] adds\n- [ ] adds two numbers\n');
    expect(findPendingItem(list, 'adds')?.line).toBe(0);
  });

  it('falls back to the only item containing, or contained in, the description', () => {
    expect(findPendingItem(items, 'three')?.line).toBe(1);
    expect(findPendingItem(items, 'it divides by zero and throws')?.line).toBe(4);
  });

  it('refuses an ambiguous description', () => {
    expect(findPendingItem(items, 'adds')).toBeUndefined();
    expect(findPendingItem(items, 'numbers')).toBeUndefined();
  });

  it('ignores done items', () => {
    expect(findPendingItem(items, 'subtracts two numbers')).toBeUndefined();
    const same = parseTestList('- [x] adds two numbers\n- [ ] adds two numbers\n');
    expect(findPendingItem(same, 'adds two numbers')?.line).toBe(1);
  });

  it('refuses a description that is only punctuation', () => {
    const one = parseTestList('- [ ] adds two numbers\n');
    expect(findPendingItem(one, '...')).toBeUndefined();
    expect(findPendingItem(one, '**')).toBeUndefined();
  });

  it('does not match a placeholder item to any description', () => {
    const list = parseTestList('- [ ] adds two numbers\n- [ ] ...\n');
    expect(findPendingItem(list, 'multiplies two numbers')).toBeUndefined();
    expect(findPendingItem(list, 'adds two numbers')?.line).toBe(0);
  });

  it('finds nothing in an empty list', () => {
    expect(findPendingItem([], 'anything')).toBeUndefined();
  });
});

describe('markDone', () => {
  it('checks the item on the given line and nothing else', () => {
    const text = '# T\n- [ ] one [ ] with brackets\n- [ ] two\n';
    expect(markDone(text, 1)).toBe('# T\n- [x] one [ ] with brackets\n- [ ] two\n');
    expect(markDone(text, 2)).toBe('# T\n- [ ] one [ ] with brackets\n- [x] two\n');
  });

  it('keeps indentation, other bullets and CRLF', () => {
    expect(markDone('a\r\n  * [ ] nested\r\n', 1)).toBe('a\r\n  * [x] nested\r\n');
  });

  it('leaves a done item, a line without a checkbox and a missing line as they are', () => {
    const text = '- [x] one\nprose\n';
    expect(markDone(text, 0)).toBe(text);
    expect(markDone(text, 1)).toBe(text);
    expect(markDone(text, 9)).toBe(text);
  });

  it('round-trips with parseTestList', () => {
    const [first] = parseTestList(LIST).filter((entry) => !entry.done);
    expect(first).toBeDefined();
    const updated = parseTestList(markDone(LIST, first?.line ?? -1));
    expect(updated.find((entry) => entry.line === first?.line)).toEqual({ ...first, done: true });
    expect(updated.filter((entry) => entry.done)).toHaveLength(3);
  });
});

describe('progressOf', () => {
  it('splits the texts into completed and pending, in list order', () => {
    expect(progressOf(parseTestList(LIST))).toEqual({
      completed: ['creates an empty stack', 'reports its size'],
      pending: ['pushes an item', 'pops the last item', 'peeks without `removing`'],
    });
  });
});
