/**
 * The top level of a JavaScript or TypeScript file parsed by oxc (and the bodies of its classes):
 * symbols, exports, and the imports of the module record and of re-exports. It records what
 * `extract-javascript.ts`, the tree-sitter extractor kept as the fallback, records for the same
 * source; `test/code/index-oxc-differential.test.ts` lists where the two differ on purpose.
 *
 * Names, signatures and specifiers are the source text as written (quotes kept on string keys,
 * escapes left as they are), as tree-sitter gives them; oxc's offsets are UTF-16 indexes into
 * the same string.
 */
import { compactSignature, docComment, type FileFacts, type SourceSpan } from './extract-shared.js';
import type { LineTable } from './line-table.js';
import type {
  LazyArrowFunction,
  LazyAssignment,
  LazyClass,
  LazyClassElement,
  LazyExportAll,
  LazyExportAssignment,
  LazyExportDeclaration,
  LazyExportSpecifiers,
  LazyExpressionStatement,
  LazyFunction,
  LazyIdentifier,
  LazyNamedBlock,
  LazyNamespaceExport,
  LazyNode,
  LazyStaticImport,
  LazyVariableDeclaration,
} from './oxc-lazy.js';
import type { SymbolKind } from './types.js';

/** Values that make a variable, a field or a CommonJS export a function. */
const FUNCTION_VALUES: ReadonlySet<string> = new Set(['ArrowFunctionExpression', 'FunctionExpression']);

const AT = 64;
const SLASH = 47;
const STAR = 42;
const LINE_FEED = 10;
const CARRIAGE_RETURN = 13;
const LINE_SEPARATOR = 0x2028;
const PARAGRAPH_SEPARATOR = 0x2029;

/** Where the line holding `from` ends (its line terminator), or `limit`. */
function lineEnd(text: string, from: number, limit: number): number {
  for (let at = from; at < limit; at++) {
    const code = text.charCodeAt(at);
    if (code === LINE_FEED || code === CARRIAGE_RETURN || code === LINE_SEPARATOR || code === PARAGRAPH_SEPARATOR)
      return at;
  }
  return limit;
}
const LOWER_D = 100;

/** What `export default` declares rather than evaluates. */
const DEFAULT_DECLARATIONS: ReadonlySet<string> = new Set([
  'FunctionDeclaration',
  'TSDeclareFunction',
  'ClassDeclaration',
  'TSInterfaceDeclaration',
]);

interface Declared {
  name: string;
  kind: SymbolKind;
}

export class OxcDeclarations {
  /** `export { a as b }` without a source: resolved once every declaration is known. */
  private readonly localExports: { name: string; local: string }[] = [];
  /** The top-level statement being walked; its doc comment is found only when a symbol needs it. */
  private current: { node: LazyNode; previousEnd: number; doc: string | undefined | null } | undefined;

  constructor(
    private readonly text: string,
    private readonly lines: LineTable,
    private readonly facts: FileFacts,
  ) {}

  /** Walks the program's statements; `imports` is the module record's (top-level import statements). */
  program(body: readonly LazyNode[], imports: readonly LazyStaticImport[]): void {
    let previousEnd = 0;
    let nextImport = 0;
    for (const node of body) {
      const { start } = node;
      if (node.type === 'ImportDeclaration') {
        // The record of this statement (records are in source order, like the statements).
        for (let record = imports[nextImport]; record !== undefined && record.start <= start;) {
          if (record.start === start) this.importRecord(record);
          record = imports[++nextImport];
        }
      } else {
        this.current = { node, previousEnd, doc: null };
        this.statement(node);
      }
      previousEnd = node.end;
    }
    for (const { name, local } of this.localExports) {
      const kind = this.facts.markExported(local) ?? 'variable';
      this.facts.addExport(local === name ? { name, kind } : { name, kind, local });
    }
  }

  /** Where a statement's doc comment must end: before the decorators of `@decorator export class`. */
  private leadingStart(node: LazyNode): number {
    if (node.type !== 'ExportDeclaration' && node.type !== 'ExportDefaultDeclaration') return node.start;
    const { declaration } = node as LazyExportDeclaration;
    if (declaration.type !== 'ClassDeclaration') return node.start;
    const first = (declaration as LazyClass).decorators[0];
    return first === undefined ? node.start : Math.min(first.start, node.start);
  }

  /** The doc comment of the statement being walked, found when a symbol needs it. */
  private statementDoc(): string | undefined {
    const { current } = this;
    if (current === undefined) return undefined;
    if (current.doc === null) current.doc = this.docBefore(current.previousEnd, this.leadingStart(current.node));
    return current.doc;
  }

  private statement(node: LazyNode): void {
    switch (node.type) {
      case 'ExportDeclaration':
        for (const { name, kind } of this.declaration((node as LazyExportDeclaration).declaration, true))
          this.facts.addExport({ name, kind });
        return;
      case 'ExportDefaultDeclaration':
        return this.exportDefault((node as LazyExportDeclaration).declaration);
      case 'ExportNamedDeclaration':
        for (const specifier of (node as LazyExportSpecifiers).specifiers)
          this.localExports.push({ name: this.textOf(specifier.exported), local: this.textOf(specifier.local) });
        return;
      case 'ExportFromDeclaration':
        return this.reexport(node as LazyExportSpecifiers);
      case 'ExportAllDeclaration':
        return this.reexportAll(node as LazyExportAll);
      case 'TSExportAssignment':
        return this.exportValue((node as LazyExportAssignment).expression);
      case 'TSNamespaceExportDeclaration':
        // `export as namespace X`: recorded as tree-sitter's extractor records it, a default export of X.
        this.localExports.push({ name: 'default', local: this.textOf((node as LazyNamespaceExport).id) });
        return;
      case 'ExpressionStatement':
        return this.commonJsExport(node as LazyExpressionStatement);
      default:
        this.declaration(node, false);
    }
  }

  private importRecord(record: LazyStaticImport): void {
    const names: string[] = [];
    let namespace: string | undefined;
    for (const entry of record.entries) {
      const imported = entry.importName;
      if (typeof imported === 'string') {
        names.push('*');
        namespace = entry.localName.value;
      } else names.push('value' in imported ? imported.value : 'default');
    }
    const { moduleRequest } = record;
    this.facts.addImport({
      specifier: this.text.slice(moduleRequest.start + 1, moduleRequest.end - 1),
      names,
      line: this.lines.line(record.start),
      ...(namespace === undefined ? {} : { namespace }),
    });
  }

  /** `export default <declaration or expression>`. */
  private exportDefault(declaration: LazyNode): void {
    const { type } = declaration;
    if (!DEFAULT_DECLARATIONS.has(type)) return this.exportValue(declaration);
    const named = this.declaration(declaration, true);
    for (const { name, kind } of named) this.facts.addExport({ name: 'default', kind, local: name });
    if (named.length === 0)
      this.facts.addExport({ name: 'default', kind: type === 'ClassDeclaration' ? 'class' : 'function' });
  }

  /** `export default <expression>` and `export = <expression>`. */
  private exportValue(value: LazyNode): void {
    if (value.type === 'IdentifierReference') {
      this.localExports.push({ name: 'default', local: (value as LazyIdentifier).name });
      return;
    }
    const kind: SymbolKind = FUNCTION_VALUES.has(value.type)
      ? 'function'
      : value.type === 'ClassExpression'
        ? 'class'
        : 'variable';
    this.facts.addExport({ name: 'default', kind });
  }

  private reexport(node: LazyExportSpecifiers): void {
    const specifier = this.stringValue(node.source);
    const names: string[] = [];
    for (const part of node.specifiers) {
      const local = this.textOf(part.local);
      const name = this.textOf(part.exported);
      names.push(local);
      this.facts.addExport(
        name === local
          ? { name, kind: 'reexport', source: specifier }
          : { name, kind: 'reexport', local, source: specifier },
      );
    }
    this.facts.addImport({ specifier, names, line: this.lines.line(node.start) });
  }

  private reexportAll(node: LazyExportAll): void {
    const specifier = this.stringValue(node.source);
    const name = node.exported === null ? '*' : this.textOf(node.exported);
    this.facts.addExport({ name, kind: 'reexport', source: specifier });
    this.facts.addImport({ specifier, names: ['*'], line: this.lines.line(node.start) });
  }

  /** `exports.name = ...`, `module.exports.name = ...`, `module.exports = ...`. */
  private commonJsExport(node: LazyExpressionStatement): void {
    const { start } = node;
    const { text } = this;
    if (!text.startsWith('exports.', start) && !text.startsWith('module.exports', start)) return;
    const assignment = node.expression;
    if (assignment.type !== 'AssignmentExpression') return;
    const { operator, left, right } = assignment as LazyAssignment;
    if (operator !== '=') return;
    const match = /^(?:module\.)?exports(?:\.([\w$]+))?$/.exec(this.textOf(left));
    if (match === null) return;
    const name = match[1] ?? 'default';
    const kind: SymbolKind = FUNCTION_VALUES.has(right.type) ? 'function' : 'variable';
    const signature = compactSignature(text, start, right.start);
    this.facts.addSymbolAt({ name, kind, exported: true, span: this.span(start, node.end), signature });
    this.facts.addExport({ name, kind });
  }

  /** Records the symbols a declaration introduces and returns their names and kinds. */
  private declaration(node: LazyNode, exported: boolean): Declared[] {
    const add = (name: string, kind: SymbolKind, start: number, bodyStart: number): Declared[] => {
      const signature = compactSignature(this.text, start, bodyStart);
      const doc = this.statementDoc();
      this.facts.addSymbolAt({ name, kind, exported, span: this.span(start, node.end), signature, doc });
      return [{ name, kind }];
    };
    switch (node.type) {
      case 'FunctionDeclaration':
      case 'TSDeclareFunction': {
        const { id, body } = node as LazyFunction;
        return id === null ? [] : add(id.name, 'function', this.declarationStart(node), body?.start ?? node.end);
      }
      case 'ClassDeclaration': {
        const { id, body } = node as LazyClass;
        if (id === null) return [];
        const result = add(id.name, 'class', this.declarationStart(node), body.start);
        this.classMembers(node as LazyClass, id.name, exported);
        return result;
      }
      case 'TSInterfaceDeclaration':
      case 'TSEnumDeclaration': {
        const { id, body } = node as LazyNamedBlock;
        const kind = node.type === 'TSEnumDeclaration' ? 'type' : 'interface';
        return add(this.textOf(id), kind, this.declarationStart(node), body?.start ?? node.end);
      }
      case 'TSTypeAliasDeclaration':
        return add(this.textOf((node as LazyNamedBlock).id), 'type', this.declarationStart(node), node.end);
      case 'TSNamespaceDeclaration': {
        // `namespace A.B.C {}` nests one declaration per name; its name is the whole dotted path.
        let inner = node as LazyNamedBlock;
        while (inner.body?.type === 'TSNamespaceDeclaration') inner = inner.body as LazyNamedBlock;
        const { id } = node as LazyNamedBlock;
        const name = this.text.slice(id.start, inner.id.end);
        return add(name, 'variable', this.declarationStart(node), inner.body?.start ?? node.end);
      }
      case 'TSExternalModuleDeclaration': {
        const { id, body } = node as LazyNamedBlock;
        return add(this.textOf(id), 'variable', this.declarationStart(node), body?.start ?? node.end);
      }
      case 'VariableDeclaration':
        return this.variables(node as LazyVariableDeclaration, exported);
      default:
        return [];
    }
  }

  private variables(node: LazyVariableDeclaration, exported: boolean): Declared[] {
    const keyword = node.kind === 'const' ? 'const' : node.kind === 'let' ? 'let' : 'var';
    const result: Declared[] = [];
    for (const declarator of node.declarations) {
      const { id, init } = declarator;
      if (id.type !== 'BindingIdentifier') continue;
      const { name } = id as LazyIdentifier;
      const isFunction = init !== null && FUNCTION_VALUES.has(init.type);
      const kind: SymbolKind = isFunction ? 'function' : keyword === 'const' ? 'const' : 'variable';
      const end = isFunction ? this.bodyStart(init) : (init?.start ?? declarator.end);
      const signature = `${keyword} ${compactSignature(this.text, declarator.start, end)}`;
      const span = this.span(declarator.start, declarator.end);
      this.facts.addSymbolAt({ name, kind, exported, span, signature, doc: this.statementDoc() });
      result.push({ name, kind });
    }
    return result;
  }

  private classMembers(node: LazyClass, container: string, exported: boolean): void {
    const { body } = node;
    let previousEnd = body.start + 1;
    for (const member of body.body) {
      const value = this.memberFunction(member);
      if (value !== undefined) this.method(member, value, container, exported, previousEnd);
      previousEnd = member.end;
    }
  }

  /** The function a class member defines: a method's, or a field's arrow or function value; else undefined. */
  private memberFunction(member: LazyClassElement): LazyNode | undefined {
    switch (member.type) {
      case 'MethodDefinition':
      case 'TSAbstractMethodDefinition':
        return member.value ?? undefined;
      case 'PropertyDefinition':
      case 'AccessorProperty': {
        const { value } = member;
        return value !== null && FUNCTION_VALUES.has(value.type) ? value : undefined;
      }
      default:
        return undefined;
    }
  }

  private method(
    member: LazyClassElement,
    value: LazyNode,
    container: string,
    exported: boolean,
    previousEnd: number,
  ): void {
    const { key } = member;
    const { text } = this;
    const name = member.computed
      ? text.slice(text.lastIndexOf('[', key.start), text.indexOf(']', key.end) + 1)
      : this.textOf(key);
    // Decorators stay out of the signature and the span, as in tree-sitter's TypeScript grammar;
    // the doc comment above them is still the member's.
    // A member's span starts at its first decorator: read them only when there is one.
    const decorators = text.charCodeAt(member.start) === AT ? member.decorators : [];
    const last = decorators.length > 0 ? decorators[decorators.length - 1] : undefined;
    const start = last === undefined ? member.start : this.skipSpace(last.end);
    const signature = compactSignature(text, start, this.bodyStart(value, member.end));
    const isPrivate = name.startsWith('#') || /^(?:\S+\s+)*private\s/.test(signature.slice(0, signature.indexOf(name)));
    this.facts.addSymbolAt({
      name,
      kind: 'method',
      container,
      exported: exported && !isPrivate,
      span: this.span(start, member.end),
      signature,
      doc: this.docBefore(previousEnd, member.start),
    });
  }

  /** Where a function's body starts (an arrow's expression body included); `fallback` without a body. */
  private bodyStart(value: LazyNode, fallback = value.end): number {
    const body =
      value.type === 'ArrowFunctionExpression' ? (value as LazyArrowFunction).body : (value as LazyFunction).body;
    return body?.start ?? fallback;
  }

  /** After a leading `declare` (tree-sitter's ambient declarations start their inner node after it). */
  private declarationStart(node: LazyNode): number {
    const { start } = node;
    if (this.text.charCodeAt(start) !== LOWER_D || !this.text.startsWith('declare', start)) return start;
    if (!/\s/.test(this.text.charAt(start + 7))) return start;
    return this.skipSpace(start + 7);
  }

  private skipSpace(index: number): number {
    const { text } = this;
    let at = index;
    while (at < text.length && /\s/.test(text.charAt(at))) at++;
    return at;
  }

  /**
   * The doc of the comment right before `start`, when it comes after `previousEnd` (the end of
   * the previous statement or member): the last comment between them. Between two statements
   * (or two class members) there is only whitespace, comments and `;`, so the text itself is
   * scanned: cheaper than oxc's list of comments, whose every element becomes an object (a
   * declaration file has hundreds), and the same comments (a hashbang is not one, as in oxc).
   */
  private docBefore(previousEnd: number, start: number): string | undefined {
    const { text } = this;
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

  private span(start: number, end: number): SourceSpan {
    return { start, end, startLine: this.lines.line(start), endLine: this.lines.line(end) };
  }

  private textOf(node: LazyNode): string {
    return this.text.slice(node.start, node.end);
  }

  /** A string literal's text without its quotes. */
  private stringValue(node: LazyNode | undefined): string {
    return node === undefined ? '' : this.text.slice(node.start + 1, node.end - 1);
  }
}
