import { describe, expect, it } from 'vitest';
import { SourceExtractor } from '../../src/code/index/source-extractor.js';

/**
 * oxc's extractor finds a declaration's doc comment by scanning the text between it and the
 * previous statement or class member (see `OxcDeclarations.docBefore`): the same docs as from
 * oxc's list of comments, for every way a comment can be written there.
 */
const SOURCES: Record<string, string> = {
  'a.ts': [
    '#!/usr/bin/env node',
    '// Hashbang is not a doc; this line is.',
    'export function a(): void {}',
    '',
    '/* one /* two */',
    'export function b(): void {}',
    '// far',
    '',
    'export function c(): void {}',
    'class C {',
    '  x = 1;;',
    '  /** doc of m */',
    '  m(): void {}',
    '  // line doc of n',
    '  n(): void {}',
    '  /* a */ /* b */ o(): void {}',
    '}',
    '',
  ].join('\n'),
  'crlf.ts':
    '// first\r\n// crlf doc\r\nexport function d(): void {}\r\n/**\r\n * block\r\n */\r\nexport const e = () => 1;\r\n',
  'separator.js': '// ls\u2028function f() {}\n/*x*/function g() {}\n',
  'directive.ts': "'use client';\n/** after directive */\nexport function h() {}\n",
};

const EXPECTED: Record<string, [string, string | undefined][]> = {
  'a.ts': [
    ['a', 'Hashbang is not a doc; this line is.'],
    ['b', 'one /* two'],
    ['c', undefined],
    ['C', undefined],
    ['m', 'doc of m'],
    ['n', 'line doc of n'],
    ['o', 'b'],
  ],
  'crlf.ts': [
    ['d', 'crlf doc'],
    ['e', 'block'],
  ],
  'separator.js': [
    ['f', 'ls'],
    ['g', 'x'],
  ],
  'directive.ts': [['h', 'after directive']],
};

describe('doc comments found by oxc’s extractor', () => {
  it('takes the last comment between two declarations: line and block comments, CRLF, U+2028, after a hashbang or a directive', async () => {
    using extractor = new SourceExtractor();
    for (const [path, text] of Object.entries(SOURCES)) {
      const result = await extractor.extract(path, text);
      expect(result?.hasErrors, path).toBe(false);
      expect(
        result?.symbols.map((symbol) => [symbol.name, symbol.doc]),
        path,
      ).toEqual(EXPECTED[path]);
    }
  });
});
