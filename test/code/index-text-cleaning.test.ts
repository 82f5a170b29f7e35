import { describe, expect, it } from 'vitest';
import { cleanDoc, compactSignature, docComment } from '../../src/code/index/extract-shared.js';

/**
 * Docs and signatures are cleaned in one pass over the text (`collapsed` in extract-shared.ts)
 * instead of the regular expressions that defined them, and the index cache must not change:
 * this holds the pass to those expressions (kept here as the reference) on texts made of the
 * characters that matter to them (every kind of whitespace, comment markers, quotes), short and
 * longer than the windows a long doc or signature is first read through.
 */

const MAX = 300;
const WINDOWS = [512, 2048];
const MARGIN = 8;

function capped(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function withoutBodyOpener(signature: string): string {
  return signature.replace(/\s*(\{|=>|:|=|;)$/, '').trim();
}

function referenceSignature(text: string, start: number, end: number): string {
  for (const window of WINDOWS) {
    if (end - start <= window) break;
    const head = text
      .slice(start, start + window)
      .replace(/\s+/g, ' ')
      .trimStart();
    if (head.length >= MAX + MARGIN) return capped(head, MAX);
  }
  return capped(withoutBodyOpener(text.slice(start, end).replace(/\s+/g, ' ').trim()), MAX);
}

const DOC_OPEN = /^\s*(\/\*\*?|\/\/\/?|#|"""|''')/;
const DOC_LINE_START = /(^|\n)\s*(\*(?!\/)|\/\/\/?|#)?/g;

function cleanBody(body: string): string {
  return body.replace(DOC_LINE_START, ' ').replace(/\s+/g, ' ');
}

function referenceDoc(raw: string): string | undefined {
  for (const window of WINDOWS) {
    if (raw.length <= window) break;
    const head = cleanBody(raw.slice(0, window).replace(DOC_OPEN, '')).trimStart();
    if (head.length >= MAX + MARGIN) return capped(head, MAX);
  }
  let body = raw.replace(DOC_OPEN, '');
  const trimmed = body.trimEnd();
  if (trimmed.endsWith('*/')) body = trimmed.slice(0, -2);
  else if (trimmed.endsWith('"""') || trimmed.endsWith("'''")) body = trimmed.slice(0, -3);
  const doc = cleanBody(body).trim();
  return doc === '' ? undefined : capped(doc, MAX);
}

/** A small deterministic generator (mulberry32): the same texts on every run. */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  ' ',
  ' ',
  '  ',
  '\n',
  '\n',
  '\t',
  '\r\n',
  '\u00a0',
  '\u2028',
  '\ufeff',
  '\u3000',
  '\v',
  '*',
  '*/',
  '/*',
  '/**',
  '//',
  '///',
  '#',
  '"""',
  "'''",
  '"',
  "'",
  '\n * ',
  '\n// ',
  '\n# ',
  '\n\n',
  'a',
  'word',
  'x',
  '{',
  '=>',
  ':',
  '=',
  ';',
  'é',
  'longerIdentifier',
  'b c',
];

function text(random: () => number, pieces: number): string {
  let out = '';
  for (let index = 0; index < pieces; index++) out += PIECES[Math.floor(random() * PIECES.length)] ?? '';
  return out;
}

describe('cleaning docs and signatures in one pass', () => {
  it('gives what the regular expressions gave, for short texts and for texts longer than the windows', () => {
    const random = generator(13);
    for (let round = 0; round < 6000; round++) {
      const long = round % 10 === 0;
      const body = text(random, long ? 200 + Math.floor(random() * 900) : Math.floor(random() * 24));
      const opener = ['/**', '/*', '//', '///', '#', '"""', '', '  /**'][round % 8] ?? '';
      const closer = ['*/', ' */', '', '"""', "'''", '\n */ '][round % 6] ?? '';
      const raw = `${opener}${body}${closer}`;
      expect(cleanDoc(raw), JSON.stringify(raw)).toBe(referenceDoc(raw));
      expect(compactSignature(raw, 0, raw.length), JSON.stringify(raw)).toBe(referenceSignature(raw, 0, raw.length));
      // Within a larger text, whose neighbours (a closing `*/` right after) must not be read.
      const outer = `${text(random, 3)}${raw}*/${text(random, 3)}`;
      const start = outer.indexOf(raw);
      expect(compactSignature(outer, start, start + raw.length)).toBe(
        referenceSignature(outer, start, start + raw.length),
      );
      expect(docComment(outer, start, start + raw.length, start + raw.length)).toBe(referenceDoc(raw));
    }
  });

  it('gives what the regular expressions gave on the cases that decide it', () => {
    const cases = [
      '',
      '/***/',
      '/** a\n **/',
      '/**\n * Doc.\n */',
      '/** a\n\n * b */',
      '/** a\n * * b */',
      '/** a\n ** b */',
      '/** a\n *\/ b */',
      '/// x\n/// y',
      '//// x',
      '# a\n# b',
      '"""Doc.\n\n    More."""',
      "'''x'''",
      '  no opener  ',
      '/**\u2028 * a\u00a0b\ufeff*/',
    ];
    for (const raw of cases) {
      expect(cleanDoc(raw), JSON.stringify(raw)).toBe(referenceDoc(raw));
      expect(compactSignature(raw, 0, raw.length), JSON.stringify(raw)).toBe(referenceSignature(raw, 0, raw.length));
    }
  });
});
