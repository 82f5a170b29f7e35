/**
 * The top level of a JavaScript or TypeScript file parsed by oxc (and the bodies of its classes):
 * symbols, exports, and the imports of the module record and of re-exports. It records what
 * `extract-javascript.ts`, the tree-sitter extractor kept as the fallback, records for the same
 * source; `test/code/index-oxc-differential.test.ts` lists where the two differ on purpose.
 *
 * Names, signatures and specifiers are the source text as written (quotes kept on string keys,
 * escapes left as they are), as tree-sitter gives them; oxc's offsets are UTF-16 indexes into
 * the same string.
 *
 * Longer than 500 lines for now: it reads declarations two ways that share one file's state (its
 * doc-comment cursor, local exports, the class being read). Most statements come from oxc's raw
 * buffer (the `raw*` methods); `export default`, decorated exported classes, `export =`,
 * namespaces and `declare` blocks still go through lazy nodes. Once those are read raw too, the
 * lazy half (`statement`, `declaration`, `variables`, `classMembers`, `method`) goes, and the
 * file is back under the limit.
 */
import { compactSignature, docComment, type FileFacts, type SourceSpan } from './extract-shared.js';
import type { LineTable } from './line-table.js';
import type {
  LazyArrowFunction,
  LazyClass,
  LazyClassElement,
  LazyExportAssignment,
  LazyExportDeclaration,
  LazyFunction,
  LazyIdentifier,
  LazyNamedBlock,
  LazyNamespaceExport,
  LazyNode,
  LazyParseResult,
  LazyVariableDeclaration,
} from './oxc-lazy.js';
import {
  ARROW_BODY,
  ASSIGN,
  CLASS_BODY,
  CLASS_DECORATORS,
  CLASS_ELEMENT,
  CLASS_ELEMENTS,
  CLASS_ID,
  DECORATOR_SIZE,
  MEMBER_DECORATORS,
  MEMBER_KEY,
  METHOD_COMPUTED,
  METHOD_VALUE,
  PROPERTY_COMPUTED,
  PROPERTY_VALUE,
  ASSIGNMENT_LEFT,
  ASSIGNMENT_OPERATOR,
  ASSIGNMENT_RIGHT,
  BINDING_IDENTIFIER,
  DECLARATION_ID,
  DECLARATOR_ID,
  DECLARATOR_INIT,
  DECLARATOR_SIZE,
  ENUM_BODY,
  INTERFACE_BODY,
  ENTRY_IMPORT_NAME,
  ENTRY_LOCAL_NAME,
  ENUM_FIELD_SIZE,
  EXPORT_ALL_EXPORTED,
  EXPORT_ALL_SOURCE,
  EXPORT_DECLARATION,
  EXPORT_FROM_SOURCE,
  EXPORT_SPECIFIER_SIZE,
  EXPORT_SPECIFIERS,
  EXPRESSION,
  FUNCTION_BODY,
  FUNCTION_ID,
  IDENTIFIER_NAME,
  IMPORT_ENTRIES,
  IMPORT_ENTRY_SIZE,
  IMPORT_MODULE_REQUEST,
  IMPORT_NAME_NAMED,
  IMPORT_NAME_NAMESPACE,
  MODULE_RECORD,
  NAME_SPAN_VALUE,
  NO_ENUM,
  PROGRAM_BODY,
  SPECIFIER_EXPORTED,
  SPECIFIER_LOCAL,
  STATEMENT,
  STATEMENT_EXPRESSION,
  STATIC_IMPORT_SIZE,
  STATIC_IMPORTS,
  VARIABLE_DECLARATIONS,
  VARIABLE_KIND,
  VARIABLE_KIND_CONST,
  VARIABLE_KIND_LET,
  type RawView,
} from './oxc-raw-layout.js';
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
  /**
   * The top-level statement being walked, its lazy node when it was built; its doc comment is
   * found only when a symbol needs it.
   */
  private current:
    { start: number; node: LazyNode | undefined; previousEnd: number; doc: string | undefined | null } | undefined;
  private readonly text: string;

  constructor(
    private readonly raw: RawView,
    private readonly lines: LineTable,
    private readonly facts: FileFacts,
  ) {
    this.text = raw.text;
  }

  /**
   * Walks the program's statements and the module record's imports (top-level import statements)
   * in the raw buffer. The common statements (variables, functions, `export` of either, and every
   * expression statement that is no CommonJS export) are read there without building a node; the
   * others through oxc's lazy nodes.
   */
  program(result: LazyParseResult): void {
    const { raw } = this;
    const body = result.programPos + PROGRAM_BODY;
    const first = raw.word(body);
    const count = raw.word(body + 8);
    const records = result.dataPos + MODULE_RECORD + STATIC_IMPORTS;
    const firstRecord = raw.word(records);
    const recordCount = raw.word(records + 8);
    let lazyBody: readonly LazyNode[] | undefined;
    let previousEnd = 0;
    let nextImport = 0;
    for (let index = 0; index < count; index++) {
      const field = first + index * ENUM_FIELD_SIZE;
      const tag = raw.bytes[field] ?? NO_ENUM;
      const node = raw.boxed(field);
      const start = raw.start(node);
      if (tag === STATEMENT.ImportDeclaration) {
        // The record of this statement (records are in source order, like the statements).
        for (; nextImport < recordCount; nextImport++) {
          const record = firstRecord + nextImport * STATIC_IMPORT_SIZE;
          const recordStart = raw.start(record);
          if (recordStart > start) break;
          if (recordStart === start) this.importRecord(record);
        }
      } else {
        const current = { start, node: undefined as LazyNode | undefined, previousEnd, doc: null };
        this.current = current;
        if (!this.rawStatement(tag, node, start)) {
          lazyBody ??= result.program.body;
          const lazy = lazyBody[index];
          if (lazy !== undefined) {
            current.node = lazy;
            this.statement(lazy);
          }
        }
      }
      previousEnd = raw.end(node);
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
    if (current.doc === null) {
      const end = current.node === undefined ? current.start : this.leadingStart(current.node);
      current.doc = this.docBefore(current.previousEnd, end);
    }
    return current.doc;
  }

  /** A statement read from the buffer; false when it needs its lazy node. */
  private rawStatement(tag: number, node: number, start: number): boolean {
    switch (tag) {
      case STATEMENT.ExpressionStatement:
        if (this.text.startsWith('exports.', start) || this.text.startsWith('module.exports', start))
          this.commonJsExport(node, start);
        return true;
      case STATEMENT.ExportNamedDeclaration:
        this.exportNames(node);
        return true;
      case STATEMENT.ExportFromDeclaration:
        this.reexport(node);
        return true;
      case STATEMENT.ExportAllDeclaration:
        this.reexportAll(node);
        return true;
      case STATEMENT.ExportDeclaration: {
        const field = node + EXPORT_DECLARATION;
        const declared = this.rawDeclaration(this.raw.bytes[field] ?? NO_ENUM, this.raw.boxed(field), true);
        if (declared === undefined) return false;
        for (const { name, kind } of declared) this.facts.addExport({ name, kind });
        return true;
      }
      default:
        // The other statements before the declarations' tags (`if`, `for`, blocks...) declare nothing here.
        return tag < STATEMENT.VariableDeclaration || this.rawDeclaration(tag, node, false) !== undefined;
    }
  }

  /** A declaration read from the buffer, with what it declares; undefined when it needs its lazy node. */
  private rawDeclaration(tag: number, node: number, exported: boolean): Declared[] | undefined {
    const { raw } = this;
    switch (tag) {
      case STATEMENT.VariableDeclaration:
        return this.rawVariables(node, exported);
      case STATEMENT.Function:
        return this.rawFunction(node, exported);
      case STATEMENT.Class:
        // `@decorator export class`: its doc comment ends before the decorators, which its lazy node gives.
        if (exported && raw.word(node + CLASS_DECORATORS + 8) > 0) return undefined;
        return this.rawClass(node, exported);
      case STATEMENT.TSInterfaceDeclaration:
      case STATEMENT.TSTypeAliasDeclaration:
      case STATEMENT.TSEnumDeclaration: {
        const id = node + DECLARATION_ID;
        const name = this.text.slice(raw.start(id), raw.end(id));
        const end = raw.end(node);
        const start = this.declarationStart(raw.start(node));
        if (tag === STATEMENT.TSTypeAliasDeclaration) return this.addDeclared(name, 'type', start, end, end, exported);
        if (tag === STATEMENT.TSEnumDeclaration)
          return this.addDeclared(name, 'type', start, raw.start(node + ENUM_BODY), end, exported);
        return this.addDeclared(name, 'interface', start, raw.start(raw.word(node + INTERFACE_BODY)), end, exported);
      }
      default:
        return undefined;
    }
  }

  /** A `Function` node (a declaration, `declare function`, an overload) at `node`. */
  private rawFunction(node: number, exported: boolean): Declared[] {
    const { raw } = this;
    const id = node + FUNCTION_ID;
    if (raw.word(id + IDENTIFIER_NAME) === 0 && raw.word(id + IDENTIFIER_NAME + 4) === 0) return [];
    const end = raw.end(node);
    const start = this.declarationStart(raw.start(node));
    return this.addDeclared(raw.identifierName(id), 'function', start, this.rawFunctionBody(node, end), end, exported);
  }

  /** Where a `Function`'s body starts; `fallback` without one. */
  private rawFunctionBody(node: number, fallback: number): number {
    const { raw } = this;
    const body = node + FUNCTION_BODY;
    if (raw.word(body) === 0 && raw.word(body + 4) === 0) return fallback;
    return raw.start(raw.word(body));
  }

  private rawVariables(node: number, exported: boolean): Declared[] {
    const { raw } = this;
    const kindTag = raw.bytes[node + VARIABLE_KIND];
    const keyword = kindTag === VARIABLE_KIND_CONST ? 'const' : kindTag === VARIABLE_KIND_LET ? 'let' : 'var';
    const declarations = node + VARIABLE_DECLARATIONS;
    const first = raw.word(declarations);
    const count = raw.word(declarations + 8);
    const result: Declared[] = [];
    for (let index = 0; index < count; index++) {
      const declarator = first + index * DECLARATOR_SIZE;
      if (raw.bytes[declarator + DECLARATOR_ID] !== BINDING_IDENTIFIER) continue;
      const name = raw.identifierName(raw.boxed(declarator + DECLARATOR_ID));
      const initTag = raw.bytes[declarator + DECLARATOR_INIT];
      const init = raw.boxed(declarator + DECLARATOR_INIT);
      const declaratorStart = raw.start(declarator);
      const declaratorEnd = raw.end(declarator);
      let end: number;
      let kind: SymbolKind;
      if (initTag === EXPRESSION.ArrowFunctionExpression) {
        kind = 'function';
        end = raw.start(raw.boxed(init + ARROW_BODY));
      } else if (initTag === EXPRESSION.FunctionExpression) {
        kind = 'function';
        end = this.rawFunctionBody(init, raw.end(init));
      } else {
        kind = keyword === 'const' ? 'const' : 'variable';
        end = initTag === NO_ENUM ? declaratorEnd : raw.start(init);
      }
      const signature = `${keyword} ${compactSignature(this.text, declaratorStart, end)}`;
      const span = this.span(declaratorStart, declaratorEnd);
      this.facts.addSymbolAt({ name, kind, exported, span, signature, doc: this.statementDoc() });
      result.push({ name, kind });
    }
    return result;
  }

  private addDeclared(
    name: string,
    kind: SymbolKind,
    start: number,
    bodyStart: number,
    end: number,
    exported: boolean,
  ): Declared[] {
    const signature = compactSignature(this.text, start, bodyStart);
    const doc = this.statementDoc();
    this.facts.addSymbolAt({ name, kind, exported, span: this.span(start, end), signature, doc });
    return [{ name, kind }];
  }

  private statement(node: LazyNode): void {
    switch (node.type) {
      case 'ExportDeclaration':
        for (const { name, kind } of this.declaration((node as LazyExportDeclaration).declaration, true))
          this.facts.addExport({ name, kind });
        return;
      case 'ExportDefaultDeclaration':
        return this.exportDefault((node as LazyExportDeclaration).declaration);
      case 'TSExportAssignment':
        return this.exportValue((node as LazyExportAssignment).expression);
      case 'TSNamespaceExportDeclaration':
        // `export as namespace X`: recorded as tree-sitter's extractor records it, a default export of X.
        this.localExports.push({ name: 'default', local: this.textOf((node as LazyNamespaceExport).id) });
        return;
      default:
        this.declaration(node, false);
    }
  }

  /** A `StaticImport` of the module record at `record`. */
  private importRecord(record: number): void {
    const { raw } = this;
    const names: string[] = [];
    let namespace: string | undefined;
    const entries = record + IMPORT_ENTRIES;
    const first = raw.word(entries);
    const count = raw.word(entries + 8);
    for (let index = 0; index < count; index++) {
      const entry = first + index * IMPORT_ENTRY_SIZE;
      const importName = entry + ENTRY_IMPORT_NAME;
      const tag = raw.bytes[importName];
      if (tag === IMPORT_NAME_NAMESPACE) {
        names.push('*');
        namespace = raw.str(entry + ENTRY_LOCAL_NAME + NAME_SPAN_VALUE);
      } else names.push(tag === IMPORT_NAME_NAMED ? raw.str(importName + 8 + NAME_SPAN_VALUE) : 'default');
    }
    const moduleRequest = record + IMPORT_MODULE_REQUEST;
    this.facts.addImport({
      specifier: this.text.slice(raw.start(moduleRequest) + 1, raw.end(moduleRequest) - 1),
      names,
      line: this.lines.line(raw.start(record)),
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

  /** `export { a as b }` (no source): resolved once every declaration is known. */
  private exportNames(node: number): void {
    this.specifiers(node, (local, name) => this.localExports.push({ name, local }));
  }

  /** `export { a as b } from 'x'`. */
  private reexport(node: number): void {
    const { raw } = this;
    const specifier = this.text.slice(raw.start(node + EXPORT_FROM_SOURCE) + 1, raw.end(node + EXPORT_FROM_SOURCE) - 1);
    const names: string[] = [];
    this.specifiers(node, (local, name) => {
      names.push(local);
      this.facts.addExport(
        name === local
          ? { name, kind: 'reexport', source: specifier }
          : { name, kind: 'reexport', local, source: specifier },
      );
    });
    this.facts.addImport({ specifier, names, line: this.lines.line(raw.start(node)) });
  }

  /** The specifiers of an `export { ... }` at `node`, as written: the local name and the exported one. */
  private specifiers(node: number, each: (local: string, name: string) => void): void {
    const { raw, text } = this;
    const specifiers = node + EXPORT_SPECIFIERS;
    const first = raw.word(specifiers);
    const count = raw.word(specifiers + 8);
    for (let index = 0; index < count; index++) {
      const specifier = first + index * EXPORT_SPECIFIER_SIZE;
      const local = specifier + SPECIFIER_LOCAL + 8;
      const exported = specifier + SPECIFIER_EXPORTED + 8;
      each(text.slice(raw.start(local), raw.end(local)), text.slice(raw.start(exported), raw.end(exported)));
    }
  }

  /** `export * from 'x'`, `export * as name from 'x'`. */
  private reexportAll(node: number): void {
    const { raw, text } = this;
    const specifier = text.slice(raw.start(node + EXPORT_ALL_SOURCE) + 1, raw.end(node + EXPORT_ALL_SOURCE) - 1);
    const exported = node + EXPORT_ALL_EXPORTED;
    const name = raw.bytes[exported] === NO_ENUM ? '*' : text.slice(raw.start(exported + 8), raw.end(exported + 8));
    this.facts.addExport({ name, kind: 'reexport', source: specifier });
    this.facts.addImport({ specifier, names: ['*'], line: this.lines.line(raw.start(node)) });
  }

  /** `exports.name = ...`, `module.exports.name = ...`, `module.exports = ...`: an expression statement at `node`. */
  private commonJsExport(node: number, start: number): void {
    const { raw, text } = this;
    if (raw.bytes[node + STATEMENT_EXPRESSION] !== EXPRESSION.AssignmentExpression) return;
    const assignment = raw.boxed(node + STATEMENT_EXPRESSION);
    if (raw.bytes[assignment + ASSIGNMENT_OPERATOR] !== ASSIGN) return;
    const left = raw.boxed(assignment + ASSIGNMENT_LEFT);
    const match = /^(?:module\.)?exports(?:\.([\w$]+))?$/.exec(text.slice(raw.start(left), raw.end(left)));
    if (match === null) return;
    const name = match[1] ?? 'default';
    const rightTag = raw.bytes[assignment + ASSIGNMENT_RIGHT];
    const isFunction = rightTag === EXPRESSION.ArrowFunctionExpression || rightTag === EXPRESSION.FunctionExpression;
    const kind: SymbolKind = isFunction ? 'function' : 'variable';
    const signature = compactSignature(text, start, raw.start(raw.boxed(assignment + ASSIGNMENT_RIGHT)));
    this.facts.addSymbolAt({ name, kind, exported: true, span: this.span(start, raw.end(node)), signature });
    this.facts.addExport({ name, kind });
  }

  /** Records the symbols a declaration introduces and returns their names and kinds. */
  private declaration(node: LazyNode, exported: boolean): Declared[] {
    const add = (name: string, kind: SymbolKind, start: number, bodyStart: number): Declared[] =>
      this.addDeclared(name, kind, start, bodyStart, node.end, exported);
    switch (node.type) {
      case 'FunctionDeclaration':
      case 'TSDeclareFunction': {
        const { id, body } = node as LazyFunction;
        return id === null ? [] : add(id.name, 'function', this.declarationStart(node.start), body?.start ?? node.end);
      }
      case 'ClassDeclaration': {
        const { id, body } = node as LazyClass;
        if (id === null) return [];
        const result = add(id.name, 'class', this.declarationStart(node.start), body.start);
        this.classMembers(node as LazyClass, id.name, exported);
        return result;
      }
      case 'TSInterfaceDeclaration':
      case 'TSEnumDeclaration': {
        const { id, body } = node as LazyNamedBlock;
        const kind = node.type === 'TSEnumDeclaration' ? 'type' : 'interface';
        return add(this.textOf(id), kind, this.declarationStart(node.start), body?.start ?? node.end);
      }
      case 'TSTypeAliasDeclaration':
        return add(this.textOf((node as LazyNamedBlock).id), 'type', this.declarationStart(node.start), node.end);
      case 'TSNamespaceDeclaration': {
        // `namespace A.B.C {}` nests one declaration per name; its name is the whole dotted path.
        let inner = node as LazyNamedBlock;
        while (inner.body?.type === 'TSNamespaceDeclaration') inner = inner.body as LazyNamedBlock;
        const { id } = node as LazyNamedBlock;
        const name = this.text.slice(id.start, inner.id.end);
        return add(name, 'variable', this.declarationStart(node.start), inner.body?.start ?? node.end);
      }
      case 'TSExternalModuleDeclaration': {
        const { id, body } = node as LazyNamedBlock;
        return add(this.textOf(id), 'variable', this.declarationStart(node.start), body?.start ?? node.end);
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
    this.addMethod(
      name,
      member.start,
      start,
      member.end,
      this.bodyStart(value, member.end),
      container,
      exported,
      previousEnd,
    );
  }

  /** A method of `container` spanning `[start, end)` (after its decorators, from `memberStart`). */
  private addMethod(
    name: string,
    memberStart: number,
    start: number,
    end: number,
    bodyStart: number,
    container: string,
    exported: boolean,
    previousEnd: number,
  ): void {
    const signature = compactSignature(this.text, start, bodyStart);
    const isPrivate = name.startsWith('#') || /^(?:\S+\s+)*private\s/.test(signature.slice(0, signature.indexOf(name)));
    this.facts.addSymbolAt({
      name,
      kind: 'method',
      container,
      exported: exported && !isPrivate,
      span: this.span(start, end),
      signature,
      doc: this.docBefore(previousEnd, memberStart),
    });
  }

  /** A `Class` node (a declaration) at `node`, and its methods. */
  private rawClass(node: number, exported: boolean): Declared[] {
    const { raw } = this;
    const id = node + CLASS_ID;
    if (raw.word(id + IDENTIFIER_NAME) === 0 && raw.word(id + IDENTIFIER_NAME + 4) === 0) return [];
    const name = raw.identifierName(id);
    const body = raw.word(node + CLASS_BODY);
    const start = this.declarationStart(raw.start(node));
    const result = this.addDeclared(name, 'class', start, raw.start(body), raw.end(node), exported);
    let previousEnd = raw.start(body) + 1;
    const first = raw.word(body + CLASS_ELEMENTS);
    const count = raw.word(body + CLASS_ELEMENTS + 8);
    for (let index = 0; index < count; index++) {
      const field = first + index * ENUM_FIELD_SIZE;
      const tag = raw.bytes[field];
      const member = raw.boxed(field);
      const memberEnd = raw.end(member);
      let bodyStart: number | undefined;
      if (tag === CLASS_ELEMENT.MethodDefinition)
        bodyStart = this.rawFunctionBody(raw.word(member + METHOD_VALUE), memberEnd);
      else if (tag === CLASS_ELEMENT.PropertyDefinition || tag === CLASS_ELEMENT.AccessorProperty) {
        const valueTag = raw.bytes[member + PROPERTY_VALUE];
        const value = raw.boxed(member + PROPERTY_VALUE);
        if (valueTag === EXPRESSION.ArrowFunctionExpression) bodyStart = raw.start(raw.boxed(value + ARROW_BODY));
        else if (valueTag === EXPRESSION.FunctionExpression) bodyStart = this.rawFunctionBody(value, memberEnd);
      }
      if (bodyStart !== undefined)
        this.rawMethod(member, tag === CLASS_ELEMENT.MethodDefinition, bodyStart, name, exported, previousEnd);
      previousEnd = memberEnd;
    }
    return result;
  }

  private rawMethod(
    member: number,
    isMethod: boolean,
    bodyStart: number,
    container: string,
    exported: boolean,
    previousEnd: number,
  ): void {
    const { raw, text } = this;
    const key = raw.boxed(member + MEMBER_KEY);
    const keyStart = raw.start(key);
    const keyEnd = raw.end(key);
    const computed = raw.bytes[member + (isMethod ? METHOD_COMPUTED : PROPERTY_COMPUTED)] === 1;
    const name = computed
      ? text.slice(text.lastIndexOf('[', keyStart), text.indexOf(']', keyEnd) + 1)
      : text.slice(keyStart, keyEnd);
    const memberStart = raw.start(member);
    let start = memberStart;
    // As in `method`: the span and the signature start after the decorators.
    if (text.charCodeAt(memberStart) === AT) {
      const decorators = raw.word(member + MEMBER_DECORATORS + 8);
      if (decorators > 0) {
        const last = raw.word(member + MEMBER_DECORATORS) + (decorators - 1) * DECORATOR_SIZE;
        start = this.skipSpace(raw.end(last));
      }
    }
    this.addMethod(name, memberStart, start, raw.end(member), bodyStart, container, exported, previousEnd);
  }

  /** Where a function's body starts (an arrow's expression body included); `fallback` without a body. */
  private bodyStart(value: LazyNode, fallback = value.end): number {
    const body =
      value.type === 'ArrowFunctionExpression' ? (value as LazyArrowFunction).body : (value as LazyFunction).body;
    return body?.start ?? fallback;
  }

  /** After a leading `declare` (tree-sitter's ambient declarations start their inner node after it). */
  private declarationStart(start: number): number {
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
}
