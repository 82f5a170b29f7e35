/**
 * What the JavaScript/TypeScript declarations reader (`oxc-declarations.ts`) reads from a file's
 * text rather than from its syntax tree: the doc comment before a declaration, where an ambient
 * declaration starts after `declare`, a span's lines. Offsets are UTF-16 indexes into the text.
 */
import { docComment, type SourceSpan } from './extract-shared.js';
import { CARRIAGE_RETURN, LINE_FEED, LINE_SEPARATOR, LOWER_D, PARAGRAPH_SEPARATOR, SLASH, STAR } from './char-codes.js';
import type { LineTable } from './line-table.js';

/** Where the line holding `from` ends (its line terminator), or `limit`. */
function lineEnd(text: string, from: number, limit: number): number {
  for (let at = from; at < limit; at++) {
    const code = text.charCodeAt(at);
    if (code === LINE_FEED || code === CARRIAGE_RETURN || code === LINE_SEPARATOR || code === PARAGRAPH_SEPARATOR)
      return at;
  }
  return limit;
}

/**
 * The doc of the comment right before `start`, when it comes after `previousEnd` (the end of
 * the previous statement or member): the last comment between them. Between two statements
 * (or two class members) there is only whitespace, comments and `;`, so the text itself is
 * scanned: cheaper than oxc's list of comments, whose every element becomes an object (a
 * declaration file has hundreds), and the same comments (a hashbang is not one, as in oxc).
 */
export function docBefore(text: string, previousEnd: number, start: number): string | undefined {
  let commentStart = -1;
  let commentEnd = -1;
  let at = previousEnd;
  if (at === 0 && text.startsWith('#!')) at = lineEnd(text, 2, start);
  while (at < start) {
    if (text.charCodeAt(at) === SLASH) {
      const next = text.charCodeAt(at + 1);
      if (next === SLASH || next === STAR) {
        commentStart = at;
        if (next === SLASH) commentEnd = lineEnd(text, at + 2, start);
        else {
          const close = text.indexOf('*/', at + 2);
          commentEnd = close === -1 || close + 2 > start ? start : close + 2;
        }
        at = commentEnd;
        continue;
      }
    }
    at++;
  }
  return commentStart === -1 ? undefined : docComment(text, commentStart, commentEnd, start);
}

/** The first offset from `index` on that is not whitespace (or the text's end). */
export function skipSpace(text: string, index: number): number {
  let at = index;
  while (at < text.length && /\s/.test(text.charAt(at))) at++;
  return at;
}

/** After a leading `declare` (tree-sitter's ambient declarations start their inner node after it). */
export function declarationStart(text: string, start: number): number {
  if (text.charCodeAt(start) !== LOWER_D || !text.startsWith('declare', start)) return start;
  if (!/\s/.test(text.charAt(start + 7))) return start;
  return skipSpace(text, start + 7);
}

export function textSpan(lines: LineTable, start: number, end: number): SourceSpan {
  return { start, end, startLine: lines.line(start), endLine: lines.line(end) };
}
