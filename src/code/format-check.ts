/**
 * Tells a formatting-only change from any other (seed 002, 17.3: a formatting batch may only
 * reformat). A formatter's output is accepted file by file when nothing but layout changed:
 *
 * - Files in a language Ratchet parses: both versions must parse cleanly and have the same
 *   syntax, token for token, once layout is set aside: whitespace, the punctuation formatters add
 *   or drop without changing meaning (`;` `,` `(` `)` and string quotes), redundant parentheses
 *   (`parenthesized_expression` wrappers; the tree around them must still be the same, so
 *   parentheses that change precedence are caught), parameter lists' parentheses (`x => x` and
 *   `(x) => x`), empty statements, Python's line continuations, whitespace inside comments and
 *   around JSX text. String contents, identifiers, numbers and operators must be identical.
 * - JSON files: the same value.
 * - Any other file: the same text once all whitespace is removed.
 *
 * Anything else (a renamed variable, a new `()` on a constructor call, a rewritten number) makes
 * the file "not formatting-only": the caller keeps the original.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Node } from 'web-tree-sitter';
import { parseFile } from './tree-sitter.js';

export type FormatVerdict = { formattingOnly: true } | { formattingOnly: false; reason: string };

/** Nodes that only group others: skipped, their children compared in their place. */
const TRANSPARENT = new Set(['parenthesized_expression', 'formal_parameters']);
/** Nodes whose presence says nothing about meaning: skipped with everything under them. */
const IGNORED = new Set(['empty_statement', 'line_continuation']);
/** Anonymous tokens formatters add or remove freely. */
const LAYOUT_TOKENS = new Set([';', ',', '(', ')', '"', "'"]);

interface Token {
  text: string;
  line: number;
}

/** The tokens of a tree that carry meaning, in source order (see the module comment). */
function meaningfulTokens(root: Node): Token[] {
  const tokens: Token[] = [];
  const cursor = root.walk();
  try {
    let descend = true;
    for (;;) {
      if (descend) {
        const node = cursor.currentNode;
        descend = visit(node, tokens);
        if (descend && cursor.gotoFirstChild()) continue;
      }
      if (cursor.gotoNextSibling()) {
        descend = true;
        continue;
      }
      if (!cursor.gotoParent()) break;
      descend = false;
    }
  } finally {
    cursor.delete();
  }
  return tokens;
}

/** Adds `node`'s own token (if any); false when its subtree is to be skipped. */
function visit(node: Node, tokens: Token[]): boolean {
  const { type } = node;
  if (IGNORED.has(type)) return false;
  if (TRANSPARENT.has(type)) return true;
  const line = node.startPosition.row + 1;
  if (type.includes('comment')) {
    tokens.push({ text: `comment:${node.text.replace(/\s+/g, '')}`, line });
    return false;
  }
  if (type === 'jsx_text') {
    const text = node.text.replace(/\s+/g, ' ').trim();
    if (text !== '') tokens.push({ text: `jsx_text:${text}`, line });
    return false;
  }
  if (type === 'string_start' || type === 'string_end') {
    // Python: the prefix and the quotes; formatters swap ' and " and lower-case prefixes.
    tokens.push({ text: `${type}:${node.text.toLowerCase().replaceAll('"', "'")}`, line });
    return false;
  }
  if (node.childCount > 0) {
    tokens.push({ text: type, line });
    return true;
  }
  if (!node.isNamed && LAYOUT_TOKENS.has(type)) return false;
  tokens.push({ text: node.isNamed ? `${type}:${node.text}` : node.text, line });
  return false;
}

/** Whether `after` is `before` reformatted; `path` chooses how the two are compared. */
export async function compareFormatting(path: string, before: string, after: string): Promise<FormatVerdict> {
  if (before === after) return { formattingOnly: true };
  using parsedBefore = await parseFile(path, before);
  using parsedAfter = await parseFile(path, after);
  if (parsedBefore !== undefined && parsedAfter !== undefined) {
    if (parsedBefore.hasErrors) return { formattingOnly: false, reason: 'the original does not parse cleanly' };
    if (parsedAfter.hasErrors) return { formattingOnly: false, reason: 'the formatted file does not parse cleanly' };
    return compareTokens(meaningfulTokens(parsedBefore.tree.rootNode), meaningfulTokens(parsedAfter.tree.rootNode));
  }
  if (path.toLowerCase().endsWith('.json')) {
    const values = [parseJson(before), parseJson(after)];
    if (values[0] !== undefined && values[1] !== undefined) {
      return isDeepStrictEqual(values[0], values[1])
        ? { formattingOnly: true }
        : { formattingOnly: false, reason: 'the JSON value changed' };
    }
  }
  return before.replace(/\s+/g, '') === after.replace(/\s+/g, '')
    ? { formattingOnly: true }
    : { formattingOnly: false, reason: 'more than whitespace changed (no grammar for this kind of file)' };
}

function compareTokens(before: readonly Token[], after: readonly Token[]): FormatVerdict {
  const length = Math.max(before.length, after.length);
  for (let position = 0; position < length; position++) {
    const old = before[position];
    const now = after[position];
    if (old?.text === now?.text) continue;
    const where = now !== undefined ? `line ${now.line}` : old !== undefined ? `original line ${old.line}` : 'the end';
    return { formattingOnly: false, reason: `the syntax changed at ${where} (${describe(old)} -> ${describe(now)})` };
  }
  return { formattingOnly: true };
}

function describe(token: Token | undefined): string {
  if (token === undefined) return 'nothing';
  const text = token.text.length > 40 ? `${token.text.slice(0, 40)}...` : token.text;
  return JSON.stringify(text);
}

/** `{ ok: value }` so that a JSON `null` is told apart from a parse failure. */
function parseJson(text: string): { ok: unknown } | undefined {
  try {
    return { ok: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}
