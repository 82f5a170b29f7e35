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
  for (const window of RAW_WINDOWS) {
    if (end - start <= window) break;
    const head = text
      .slice(start, start + window)
      .replace(/\s+/g, ' ')
      .trimStart();
    if (head.length >= MAX_SIGNATURE + CAPPED_MARGIN) return capped(head, MAX_SIGNATURE);
  }
  const signature = text.slice(start, end).replace(/\s+/g, ' ').trim();
  return capped(withoutBodyOpener(signature), MAX_SIGNATURE);
}

const OPEN_BRACE = 123;
const COLON = 58;
const EQUALS = 61;
const SEMICOLON = 59;
const GREATER = 62;

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

const DOC_OPEN = /^\s*(\/\*\*?|\/\/\/?|#|"""|''')/;
/** Each line's indentation and comment marker (`*`, `//`, `///`, `#`). */
const DOC_LINE_START = /(^|\n)\s*(\*(?!\/)|\/\/\/?|#)?/g;

/** A comment or docstring without its delimiters, whitespace collapsed, capped. */
export function cleanDoc(raw: string): string | undefined {
  for (const window of RAW_WINDOWS) {
    if (raw.length <= window) break;
    const head = cleanBody(raw.slice(0, window).replace(DOC_OPEN, '')).trimStart();
    if (head.length >= MAX_DOC + CAPPED_MARGIN) return capped(head, MAX_DOC);
  }
  let body = raw.replace(DOC_OPEN, '');
  const trimmed = body.trimEnd();
  if (trimmed.endsWith('*/')) body = trimmed.slice(0, -2);
  else if (trimmed.endsWith('"""') || trimmed.endsWith("'''")) body = trimmed.slice(0, -3);
  const doc = cleanBody(body).trim();
  if (doc === '') return undefined;
  return capped(doc, MAX_DOC);
}

/** One pass over a comment's body: line starts become spaces, then whitespace collapses. */
function cleanBody(body: string): string {
  return body.replace(DOC_LINE_START, ' ').replace(/\s+/g, ' ');
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
  return cleanDoc(text.slice(start, Math.min(end, start + MAX_RAW_DOC)));
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
