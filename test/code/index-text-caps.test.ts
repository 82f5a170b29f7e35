import { describe, expect, it } from 'vitest';
import { cleanDoc, compactSignature } from '../../src/code/index/extract-shared.js';

/**
 * `compactSignature` and `cleanDoc` stop reading a long text once its first part alone decides
 * the capped result. These are the straightforward versions that read everything; the fast ones
 * must give exactly what they give.
 */
function fullSignature(text: string, start: number, end: number): string {
  let signature = text.slice(start, end).replace(/\s+/g, ' ').trim();
  signature = signature.replace(/\s*(\{|=>|:|=|;)$/, '').trim();
  return signature.length > 300 ? `${signature.slice(0, 299)}…` : signature;
}

function fullDoc(raw: string): string | undefined {
  let body = raw.replace(/^\s*(\/\*\*?|\/\/\/?|#|"""|''')/, '');
  const trimmed = body.trimEnd();
  if (trimmed.endsWith('*/')) body = trimmed.slice(0, -2);
  else if (trimmed.endsWith('"""') || trimmed.endsWith("'''")) body = trimmed.slice(0, -3);
  const doc = body
    .replace(/(^|\n)\s*(\*(?!\/)|\/\/\/?|#)?/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (doc === '') return undefined;
  return doc.length > 300 ? `${doc.slice(0, 299)}…` : doc;
}

/** A deterministic generator, so a failure names a reproducible case. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/** Text of words, runs of spaces and newlines, comment markers and body openers: the shapes the caps meet. */
function text(next: () => number, length: number): string {
  const pieces = [
    'word',
    ' ',
    '   ',
    '\n',
    '\n * ',
    '\n// ',
    '\n/// ',
    '#',
    '*',
    '/',
    '*/',
    '{',
    '=>',
    ':',
    ';',
    '=',
    '\t',
    '…',
  ];
  let out = '';
  while (out.length < length) {
    const piece = pieces[Math.floor(next() * pieces.length)] ?? ' ';
    // Long whitespace runs now and then, so a window may hold little but blanks.
    out += next() < 0.02 ? ' '.repeat(Math.floor(next() * 3000)) : piece;
  }
  return out;
}

describe('capped signatures and docs', () => {
  it('compactSignature gives what reading the whole declaration gives, for texts of any length', () => {
    const next = random(13);
    for (let round = 0; round < 600; round++) {
      const source = text(next, Math.floor(next() * 6000));
      const start = Math.floor(next() * Math.min(50, source.length));
      const end = start + Math.floor(next() * (source.length - start + 1));
      expect(compactSignature(source, start, end), `round ${round}`).toBe(fullSignature(source, start, end));
    }
  });

  it('cleanDoc gives what cleaning the whole comment gives, for comments of any length', () => {
    const next = random(7);
    for (let round = 0; round < 600; round++) {
      const opener = ['/**', '/*', '//', '///', '#', '"""', ''][Math.floor(next() * 7)] ?? '';
      const closer = ['*/', '"""', '', '\n'][Math.floor(next() * 4)] ?? '';
      const raw = `${opener}${text(next, Math.floor(next() * 6000))}${closer}`;
      expect(cleanDoc(raw), `round ${round}`).toBe(fullDoc(raw));
    }
  });

  it('keeps a text just at the cap whole when its end removes a body opener or a comment closer', () => {
    // The first 2,048 characters give 301 once collapsed; the whole gives 300 once the end is removed.
    const signature = `${'a'.repeat(300)}${' '.repeat(2000)} {`;
    expect(compactSignature(signature, 0, signature.length)).toBe('a'.repeat(300));
    const doc = `/**${'a'.repeat(300)}${' '.repeat(2000)}*/`;
    expect(cleanDoc(doc)).toBe('a'.repeat(300));
  });

  it('reads only the first part of a long declaration', () => {
    const huge = `type Union = ${Array.from({ length: 20_000 }, (_, index) => `'v${index}'`).join(' | ')};`;
    const signature = compactSignature(huge, 0, huge.length);
    expect(signature).toHaveLength(300);
    expect(signature).toBe(fullSignature(huge, 0, huge.length));
  });
});
