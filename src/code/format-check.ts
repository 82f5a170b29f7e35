/**
 * Tells a formatting-only change from any other (seed 002, 17.3: a formatting batch may only
 * reformat). A formatter's output is accepted file by file when nothing but layout changed:
 *
 * - Files in a language Ratchet parses: both versions must parse cleanly and have the same
 *   syntax, token for token, once layout is set aside: whitespace, the punctuation formatters add
 *   or drop without changing meaning (`;`, trailing `,`, `(` `)` and string quotes; a comma
 *   between elements stays, since `[, b]` and `[b]` differ, and so does a one-element Python
 *   tuple's), redundant parentheses
 *   (`parenthesized_expression` wrappers; the tree around them must still be the same, so
 *   parentheses that change precedence are caught), parameter lists' parentheses (`x => x` and
 *   `(x) => x`), empty statements, Python's line continuations, whitespace inside comments and
 *   around JSX text. String contents, identifiers, numbers and operators must be identical.
 * - JSON files: the same value.
 * - Any other file: the same lines once whitespace at their ends and blank lines at the end of
 *   the file are set aside (indentation and spaces within a line can carry meaning: YAML,
 *   Makefiles, shell).
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
/** What a plain string literal is made of (with an interpolation or anything else, it is compared token by token). */
const STRING_PARTS = new Set(['string_fragment', 'escape_sequence', 'string_start', 'string_content', 'string_end']);
/** Anonymous tokens formatters add or remove freely. */
const LAYOUT_TOKENS = new Set([';', '(', ')', '"', "'"]);
/** What may follow a trailing comma (one a formatter adds or drops). */
const CLOSING = new Set([']', ')', '}', '>']);

/** Where `,` and `;` both separate members (TypeScript's `{ a: A, b: B }` is `{ a: A; b: B }`). */
const MEMBER_LISTS = new Set(['object_type', 'interface_body']);

/**
 * A comma a formatter may add, drop or turn into `;`: one right before a closing bracket (except
 * the one that makes a Python tuple of one), or a member separator of a type literal.
 */
function isLayoutComma(node: Node): boolean {
  if (node.type !== ',' || node.isNamed) return false;
  if (node.parent !== null && MEMBER_LISTS.has(node.parent.type)) return true;
  let next = node.nextSibling;
  while (next !== null && next.type === 'comment') next = next.nextSibling;
  if (next !== null && !CLOSING.has(next.type)) return false;
  const parent = node.parent;
  return !(
    parent !== null &&
    (parent.type === 'tuple' || parent.type === 'tuple_pattern') &&
    parent.namedChildCount === 1
  );
}

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
  // TypeScript's `(x) => x` wraps the lone parameter in a `required_parameter`; `x => x` does not.
  if (TRANSPARENT.has(type) || isLeadingOperatorType(node) || (type === 'required_parameter' && node.childCount === 1))
    return true;
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
  if (type === 'string' && node.namedChildren.every((child) => child !== null && STRING_PARTS.has(child.type))) {
    const value = stringValue(node.text);
    // `{ 'name': 1 }` and `{ name: 1 }`: formatters drop quotes around keys that need none.
    const key = value.startsWith(':') && IDENTIFIER.test(value.slice(1)) && isPropertyName(node);
    tokens.push({ text: key ? `property_identifier:${value.slice(1)}` : `string:${value}`, line });
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
  if (
    !node.isNamed &&
    (LAYOUT_TOKENS.has(type) ||
      isLayoutComma(node) ||
      ((type === '|' || type === '&') && node.previousSibling === null))
  )
    return false;
  tokens.push({ text: node.isNamed ? `${type}:${node.text}` : node.text, line });
  return false;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
/** The field naming the key or name of a property, by the parent's node type. */
const PROPERTY_NAME_FIELD: Readonly<Record<string, string>> = {
  pair: 'key',
  pair_pattern: 'key',
  property_signature: 'name',
  public_field_definition: 'name',
  method_definition: 'name',
  method_signature: 'name',
  abstract_method_signature: 'name',
};

/** Whether `node` is the key of an object literal, pattern or type member, or a class member's name. */
function isPropertyName(node: Node): boolean {
  const parent = node.parent;
  const field = parent === null ? undefined : PROPERTY_NAME_FIELD[parent.type];
  return field !== undefined && parent?.childForFieldName(field)?.equals(node) === true;
}

/**
 * TypeScript's `type A =\n  | X\n  | Y` (the leading `|` formatters write before a broken-up
 * union or intersection) parses as one more union node around the first member: skipped.
 */
function isLeadingOperatorType(node: Node): boolean {
  if (node.type !== 'union_type' && node.type !== 'intersection_type') return false;
  const first = node.firstChild;
  return first !== null && !first.isNamed && (first.type === '|' || first.type === '&');
}

/**
 * A plain string literal's value, told apart by prefix and by triple quoting but not by which
 * quote encloses it: `'it\'s'` and `"it's"` are the same string (only escaped quotes are decoded;
 * every other escape is compared as written).
 */
function stringValue(text: string): string {
  const opening = /^([A-Za-z]*)('''|"""|'|"|`)/.exec(text);
  const prefix = opening?.[1] ?? '';
  const quote = opening?.[2] ?? '';
  const body = text.slice(prefix.length + quote.length, text.length - quote.length);
  let value = '';
  for (let index = 0; index < body.length; index++) {
    const char = body[index] ?? '';
    const next = body[index + 1];
    if (char === '\\' && next !== undefined) {
      value += next === '"' || next === "'" ? next : `${char}${next}`;
      index++;
    } else value += char;
  }
  return `${prefix.toLowerCase()}${quote.length === 3 ? '(triple)' : ''}:${value}`;
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
  return lineEndsAside(before) === lineEndsAside(after)
    ? { formattingOnly: true }
    : { formattingOnly: false, reason: 'more than whitespace at line ends changed (no grammar for this kind of file)' };
}

/** The text without whitespace at line ends, with one line-ending style and no trailing blank lines. */
function lineEndsAside(text: string): string {
  return text
    .split(/\r?\n/)
    .map((line) => line.replace(/\s+$/, ''))
    .join('\n')
    .replace(/\n+$/, '');
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
