/**
 * Building blocks shared by the per-language extractors: a collector that turns declarations,
 * imports, exports and call sites into a `FileParseResult`, and the text helpers that make
 * signatures and doc comments compact and stable.
 *
 * Extractors walk only the top level of a file (and class bodies) in JavaScript, where node
 * access crosses into wasm; call sites come from one tree-sitter query per language, which runs
 * inside wasm and is far cheaper than a JavaScript walk of every node.
 */
import { CaptureQuantifier, type Node, type Query } from 'web-tree-sitter';
import type { CallSite, CodeSymbol, ExportEntry, FileParseResult, ImportRef, SymbolKind } from './types.js';
import {
  CARRIAGE_RETURN,
  COLON,
  EQUALS,
  GREATER,
  HASH,
  LINE_FEED,
  OPEN_BRACE,
  SEMICOLON,
  SLASH,
  SPACE,
  STAR,
  TAB,
} from './char-codes.js';

const MAX_SIGNATURE = 300;
const MAX_DOC = 300;

/**
 * `value` as a string of its own. V8 keeps a slice (or a concatenation) of 13 characters or more
 * as a view into the string it was cut from, so a name or a signature cut from a file's text
 * would keep the whole file in memory for as long as the index lives: for a large repository,
 * all of its source (tens of MB). Slicing a fresh concatenation copies the characters instead.
 */
function detached(value: string): string {
  return value.length < 13 ? value : ` ${value}`.slice(1);
}

/**
 * Raw text read for a signature or a doc before the rest is known not to matter: collapsing
 * whitespace maps a prefix of the text to a prefix of the result, so once the prefix alone gives
 * `CAPPED_MARGIN` characters more than the cap, the capped result is that prefix's (a type alias
 * of thousands of lines, a licence header). The margin covers what the end of the text can still
 * remove (a body opener, a comment's closing marker, a line-start marker cut in two). A short
 * window first: most long JSDoc comments of declaration files give the cap within it.
 */
const RAW_WINDOWS: readonly number[] = [512, 2048];
const CAPPED_MARGIN = 8;

/** `text` capped at `max` characters, an ellipsis standing for the rest. */
function capped(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Text of `[start, end)` with whitespace collapsed, a trailing body opener removed, capped. */
export function compactSignature(text: string, start: number, end: number): string {
  for (let index = 0; index < RAW_WINDOWS.length; index++) {
    const window = RAW_WINDOWS[index] as number;
    if (end - start <= window) break;
    const head = collapsed(text, start, start + window, false, true);
    if (head.length >= MAX_SIGNATURE + CAPPED_MARGIN) return capped(head, MAX_SIGNATURE);
  }
  return capped(withoutBodyOpener(collapsed(text, start, end, false, false)), MAX_SIGNATURE);
}

/** The characters of a regular expression's `\s` (and of `trim()`). */
function isSpace(code: number): boolean {
  if (code <= SPACE) return code === SPACE || (code >= TAB && code <= CARRIAGE_RETURN);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/**
 * After the line start at `at` of a comment's body: its indentation (blank lines included) and
 * its marker, `*` (not `*\/`), `//`, `///` or `#`: what `/(^|\n)\s*(\*(?!\/)|\/\/\/?|#)?/`
 * matches there.
 */
function afterLineStart(text: string, at: number, end: number): number {
  let index = at;
  while (index < end && isSpace(text.charCodeAt(index))) index++;
  if (index >= end) return index;
  const code = text.charCodeAt(index);
  if (code === STAR) return index + 1 < end && text.charCodeAt(index + 1) === SLASH ? index : index + 1;
  if (code === HASH) return index + 1;
  if (code === SLASH && index + 1 < end && text.charCodeAt(index + 1) === SLASH)
    return index + 2 < end && text.charCodeAt(index + 2) === SLASH ? index + 3 : index + 2;
  return index;
}

/**
 * `text.slice(start, end)` with every run of whitespace made one space, trimmed: what
 * `.replace(/\s+/g, ' ').trim()` gives (with `lineStarts`, each line's comment marker counts as
 * whitespace), and with `keepTrailingSpace` what `trimStart()`
 * gives instead (a space after the last word stays). One pass that copies only the words (runs of
 * words with single spaces between them in one slice), where each regular expression and trim
 * copied the whole text: docs and signatures were a fifth of a cold index's allocations.
 */
function collapsed(text: string, start: number, end: number, lineStarts: boolean, keepTrailingSpace: boolean): string {
  let out = '';
  /** Where the current run of words starts (single spaces between them), or -1 between runs. */
  let run = -1;
  let index = lineStarts ? afterLineStart(text, start, end) : start;
  while (index < end) {
    const code = text.charCodeAt(index);
    if (!isSpace(code)) {
      if (run === -1) run = index;
      index++;
      continue;
    }
    // One space between two words stays in the run.
    if (run !== -1 && code === SPACE && index + 1 < end && !isSpace(text.charCodeAt(index + 1))) {
      index += 2;
      continue;
    }
    if (run !== -1) {
      out = out === '' ? text.slice(run, index) : `${out} ${text.slice(run, index)}`;
      run = -1;
    }
    while (index < end) {
      const next = text.charCodeAt(index);
      if (lineStarts && next === LINE_FEED) index = afterLineStart(text, index + 1, end);
      else if (isSpace(next)) index++;
      else break;
    }
  }
  if (run !== -1) return out === '' ? text.slice(run, end) : `${out} ${text.slice(run, end)}`;
  return keepTrailingSpace && out !== '' ? `${out} ` : out;
}

/**
 * `signature` (whitespace collapsed and trimmed) without a trailing `{`, `=>`, `:`, `=` or `;`:
 * what `.replace(/\s*(\{|=>|:|=|;)$/, '').trim()` gives, without a regular expression tried at
 * every position of every signature (a measurable part of extracting declaration files).
 */
function withoutBodyOpener(signature: string): string {
  const last = signature.length - 1;
  const code = signature.charCodeAt(last);
  let cut: number;
  if (code === GREATER && signature.charCodeAt(last - 1) === EQUALS) cut = last - 1;
  else if (code === OPEN_BRACE || code === COLON || code === EQUALS || code === SEMICOLON) cut = last;
  else return signature;
  return signature.slice(0, cut).trim();
}

/** A comment or docstring without its delimiters, whitespace collapsed, capped. */
export function cleanDoc(raw: string): string | undefined {
  return cleanDocAt(raw, 0, raw.length);
}

/**
 * `cleanDoc(text.slice(start, end))`: the text after the opening marker (see `afterOpener`) and
 * before the closing one (`*\/`, `"""`, `'''`), each line's marker and whitespace collapsed.
 * `test/code/index-text-cleaning.test.ts` holds it to the regular expressions it replaced.
 */
function cleanDocAt(text: string, start: number, end: number): string | undefined {
  for (let index = 0; index < RAW_WINDOWS.length; index++) {
    const window = RAW_WINDOWS[index] as number;
    if (end - start <= window) break;
    const head = collapsed(text, afterOpener(text, start, start + window), start + window, true, true);
    if (head.length >= MAX_DOC + CAPPED_MARGIN) return capped(head, MAX_DOC);
  }
  const bodyStart = afterOpener(text, start, end);
  let bodyEnd = end;
  let trimmedEnd = end;
  while (trimmedEnd > bodyStart && isSpace(text.charCodeAt(trimmedEnd - 1))) trimmedEnd--;
  if (trimmedEnd - bodyStart >= 2 && text.startsWith('*/', trimmedEnd - 2)) bodyEnd = trimmedEnd - 2;
  else if (
    trimmedEnd - bodyStart >= 3 &&
    (text.startsWith('"""', trimmedEnd - 3) || text.startsWith("'''", trimmedEnd - 3))
  )
    bodyEnd = trimmedEnd - 3;
  const doc = collapsed(text, bodyStart, bodyEnd, true, false);
  if (doc === '') return undefined;
  return capped(doc, MAX_DOC);
}

/**
 * After a comment's opening marker (`/*`, `/**`, `//`, `///`, `#`, `"""`, `'''`, after any
 * whitespace) in `[start, end)`; `start` when there is none.
 */
function afterOpener(text: string, start: number, end: number): number {
  let index = start;
  while (index < end && isSpace(text.charCodeAt(index))) index++;
  const has = (marker: string): boolean => index + marker.length <= end && text.startsWith(marker, index);
  if (has('/*')) return has('/**') ? index + 3 : index + 2;
  if (has('//')) return has('///') ? index + 3 : index + 2;
  if (has('#')) return index + 1;
  if (has('"""') || has("'''")) return index + 3;
  return start;
}

/** Text of a string literal node without quotes (template strings and escapes left as written). */
export function stringValue(node: Node): string {
  const text = node.text;
  const match = /^[a-zA-Z]*("""|'''|"|'|`)([\s\S]*)\1$/.exec(text);
  return match?.[2] ?? text;
}

interface Scope {
  start: number;
  end: number;
  name: string;
  children: Scope[];
}

/** Where a declaration is: offsets into the text (calls inside it are attributed to it) and 1-based lines. */
export interface SourceSpan {
  start: number;
  end: number;
  startLine: number;
  endLine: number;
}

interface SymbolFields {
  name: string;
  kind: SymbolKind;
  exported: boolean;
  signature: string;
  container?: string;
  doc?: string | undefined;
  test?: true;
}

/** A declaration found in a tree-sitter tree. */
export interface SymbolInput extends SymbolFields {
  node: Node;
}

/** A declaration found by an extractor that works on offsets (oxc). */
export interface SpanSymbolInput extends SymbolFields {
  span: SourceSpan;
}

/**
 * Collects what an extractor finds in one file. Call sites are attributed to the innermost
 * symbol whose span contains them (a method, else its class, else a top-level symbol), or to
 * module level.
 */
export class FileFacts {
  readonly symbols: CodeSymbol[] = [];
  readonly imports: ImportRef[] = [];
  readonly exports: ExportEntry[] = [];
  readonly cliFlags = new Set<string>();
  private readonly scopes: Scope[] = [];
  private readonly calls: CallSite[] = [];
  /** Callees recorded per caller (one set per caller name: overloads share theirs). */
  private readonly seenCalls = new Map<string | null, Set<string>>();

  /** Records a symbol found in a tree-sitter tree (see `addSymbolAt`). */
  addSymbol(input: SymbolInput): CodeSymbol {
    const { node } = input;
    const span = {
      start: node.startIndex,
      end: node.endIndex,
      startLine: node.startPosition.row + 1,
      endLine: node.endPosition.row + 1,
    };
    return this.addSymbolAt({ ...input, span });
  }

  /** Records a symbol; methods (with `container`) nest inside the last top-level scope. */
  addSymbolAt(input: SpanSymbolInput): CodeSymbol {
    const { span } = input;
    const symbol: CodeSymbol = {
      name: detached(input.name),
      kind: input.kind,
      exported: input.exported,
      startLine: span.startLine,
      endLine: span.endLine,
      signature: detached(input.signature),
    };
    if (input.container !== undefined) symbol.container = detached(input.container);
    if (input.doc !== undefined) symbol.doc = detached(input.doc);
    if (input.test === true) symbol.test = true;
    this.symbols.push(symbol);
    const qualified = symbol.container === undefined ? symbol.name : `${symbol.container}.${symbol.name}`;
    const scope: Scope = { start: span.start, end: span.end, name: qualified, children: [] };
    const parent = this.scopes.at(-1);
    if (input.container !== undefined && parent !== undefined && parent.start <= scope.start && scope.end <= parent.end)
      parent.children.push(scope);
    else this.scopes.push(scope);
    return symbol;
  }

  addImport(ref: ImportRef): void {
    const { specifier, names, namespace, line } = ref;
    const imported: ImportRef = { specifier: detached(specifier), names: names.map(detached), line };
    if (namespace !== undefined) imported.namespace = detached(namespace);
    if (ref.testOnly === true) imported.testOnly = true;
    this.imports.push(imported);
  }

  addExport(entry: ExportEntry): void {
    const exported: ExportEntry = { name: detached(entry.name), kind: entry.kind };
    if (entry.local !== undefined) exported.local = detached(entry.local);
    if (entry.source !== undefined) exported.source = detached(entry.source);
    this.exports.push(exported);
  }

  /** Records a call at `index` (a source offset) to `callee`. */
  addCall(index: number, callee: string): void {
    const caller = this.callerAt(index);
    let seen = this.seenCalls.get(caller);
    if (seen === undefined) this.seenCalls.set(caller, (seen = new Set()));
    if (seen.has(callee)) return;
    seen.add(callee);
    this.calls.push({ caller, callee: detached(callee) });
  }

  /** Adds the `-x` / `--long` flags named in a flag definition string such as `-x, --long <value>`. */
  addCliFlags(definition: string): void {
    for (const match of definition.matchAll(/(?:^|[\s,|])(--?[A-Za-z0-9][\w-]*)/g)) {
      if (match[1] !== undefined) this.cliFlags.add(detached(match[1]));
    }
  }

  /** Marks top-level symbols named `name` as exported and returns the kind of the first one. */
  markExported(name: string): SymbolKind | undefined {
    let kind: SymbolKind | undefined;
    const { symbols } = this;
    // An index, not `for...of`: run for every local export over every symbol, before TurboFan
    // compiles it (see `optimising-compiler.ts`) an iterator allocates a result per step.
    for (let index = 0; index < symbols.length; index++) {
      const symbol = symbols[index] as CodeSymbol;
      if (symbol.container === undefined && symbol.name === name) {
        symbol.exported = true;
        kind ??= symbol.kind;
      }
    }
    return kind;
  }

  finish(base: { language: FileParseResult['language']; hasErrors: boolean }): FileParseResult {
    return {
      language: base.language,
      hasErrors: base.hasErrors,
      symbols: this.symbols,
      imports: this.imports,
      exports: this.exports,
      calls: this.calls,
      cliFlags: [...this.cliFlags].sort(),
    };
  }

  private callerAt(index: number): string | null {
    const top = innermost(this.scopes, index);
    if (top === undefined) return null;
    return innermost(top.children, index)?.name ?? top.name;
  }
}

/** The scope containing `index` among non-overlapping scopes sorted by start (binary search). */
function innermost(scopes: readonly Scope[], index: number): Scope | undefined {
  let low = 0;
  let high = scopes.length - 1;
  let found: Scope | undefined;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const scope = scopes[middle];
    if (scope === undefined) break;
    if (scope.start <= index) {
      found = scope;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found !== undefined && index < found.end ? found : undefined;
}

/**
 * Runs a call query and hands each match's captures to `onMatch` by capture name. Call queries
 * use `@callee` (a plain function name) or `@object` + `@property` (a member call); languages
 * may add captures of their own (Python captures imports in the same pass).
 *
 * When every pattern has a single capture, the query runs as `captures()`, which returns the same
 * nodes at about two thirds of the cost of `matches()` (one object per capture, none per match).
 */
export function forEachCall(query: Query, root: Node, onMatch: (captures: CallCaptures) => void): void {
  if (singleCapturePatterns(query)) {
    for (const capture of query.captures(root)) onMatch({ [capture.name]: capture.node });
    return;
  }
  for (const match of query.matches(root)) {
    const captures: CallCaptures = {};
    for (const capture of match.captures) captures[capture.name] = capture.node;
    onMatch(captures);
  }
}

const singleCapture = new WeakMap<Query, boolean>();

function singleCapturePatterns(query: Query): boolean {
  let single = singleCapture.get(query);
  if (single === undefined) {
    single = query.captureQuantifiers.every(
      (quantifiers) => quantifiers.filter((quantifier) => quantifier !== CaptureQuantifier.Zero).length === 1,
    );
    singleCapture.set(query, single);
  }
  return single;
}

export type CallCaptures = Partial<Record<string, Node>>;

/** `receiver.name` when the receiver is a plain identifier (or `this`/`self`), else `.name`. */
export function memberCallee(object: Node | undefined, property: Node, plainObjectTypes: readonly string[]): string {
  const name = property.text;
  if (object !== undefined && plainObjectTypes.includes(object.type)) return `${object.text}.${name}`;
  return `.${name}`;
}

/** Raw comment text beyond this is never needed for a doc of at most `MAX_DOC` characters. */
const MAX_RAW_DOC = 8000;

/**
 * Leading comment text for a declaration when `comment` ends on the line before `node` starts
 * (or the same line). `text` is the file's source: reading it directly is much cheaper than
 * asking tree-sitter for positions and node text (every comment of a `.d.ts` file comes here).
 */
function leadingDoc(comment: Node | undefined, node: Node, text: string): string | undefined {
  if (comment === undefined) return undefined;
  return docComment(text, comment.startIndex, comment.endIndex, node.startIndex);
}

/**
 * The doc of the comment at `[start, end)` for a declaration starting at `declarationStart`, the
 * comment being the last thing before it: none when a blank line separates them.
 */
export function docComment(text: string, start: number, end: number, declarationStart: number): string | undefined {
  const firstBreak = text.indexOf('\n', end);
  if (firstBreak !== -1 && firstBreak < declarationStart) {
    const secondBreak = text.indexOf('\n', firstBreak + 1);
    if (secondBreak !== -1 && secondBreak < declarationStart) return undefined;
  }
  return cleanDocAt(text, start, Math.min(end, start + MAX_RAW_DOC));
}

/** Comment node types of the grammars whose extractors use `withLeadingDocs`. */
const COMMENT_TYPES: ReadonlySet<string> = new Set(['comment', 'line_comment', 'block_comment']);

/**
 * The nodes of `children` that are not comments, each with the doc comment right above it (see
 * `leadingDoc`): how every extractor walks a file's top level and a class body.
 */
export function* withLeadingDocs(children: readonly Node[], text: string): Generator<[Node, string | undefined]> {
  let comment: Node | undefined;
  for (const node of children) {
    if (COMMENT_TYPES.has(node.type)) {
      comment = node;
      continue;
    }
    yield [node, leadingDoc(comment, node, text)];
    comment = undefined;
  }
}
