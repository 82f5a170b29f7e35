/**
 * The top level of a JavaScript or TypeScript file parsed by oxc (and the bodies of its classes):
 * symbols, exports, and the imports of the module record and of re-exports. It records what
 * `extract-javascript.ts`, the tree-sitter extractor kept as the fallback, records for the same
 * source; `test/code/index-oxc-differential.test.ts` lists where the two differ on purpose.
 *
 * Everything is read from oxc's raw buffer at the offsets of `oxc-raw-layout.ts`, no node object
 * built: the declarations here, the module interface (imports, export lists, CommonJS exports,
 * `export default <expression>`, `export =`) in `oxc-exports.ts`, doc comments from the text
 * (`declaration-text.ts`).
 *
 * Names, signatures and specifiers are the source text as written (quotes kept on string keys,
 * escapes left as they are), as tree-sitter gives them; oxc's offsets are UTF-16 indexes into
 * the same string.
 */
import { declarationStart, docBefore, skipSpace, textSpan } from './declaration-text.js';
import { compactSignature, type FileFacts } from './extract-shared.js';
import type { LineTable } from './line-table.js';
import { OxcExports } from './oxc-exports.js';
import {
  ARROW_BODY,
  BINDING_IDENTIFIER,
  CLASS_BODY,
  CLASS_DECORATORS,
  CLASS_ELEMENT,
  CLASS_ELEMENTS,
  CLASS_ID,
  DECLARATION_ID,
  DECLARATOR_ID,
  DECLARATOR_INIT,
  DECLARATOR_SIZE,
  DECORATOR_SIZE,
  DEFAULT_DECLARATION,
  ENUM_BODY,
  ENUM_FIELD_SIZE,
  EXPORT_ASSIGNMENT_EXPRESSION,
  EXPORT_DECLARATION,
  EXPORT_DEFAULT_DECLARATION,
  EXPRESSION,
  FUNCTION_BODY,
  FUNCTION_ID,
  IDENTIFIER_NAME,
  INTERFACE_BODY,
  MEMBER_DECORATORS,
  MEMBER_KEY,
  METHOD_COMPUTED,
  METHOD_VALUE,
  MODULE_BODY,
  MODULE_ID,
  MODULE_RECORD,
  NAMESPACE_BODY,
  NAMESPACE_BODY_NESTED,
  NAMESPACE_ID,
  NO_ENUM,
  PROGRAM_BODY,
  PROPERTY_COMPUTED,
  PROPERTY_VALUE,
  STATEMENT,
  STATIC_IMPORT_SIZE,
  STATIC_IMPORTS,
  VARIABLE_DECLARATIONS,
  VARIABLE_KIND,
  VARIABLE_KIND_CONST,
  VARIABLE_KIND_LET,
  type RawView,
} from './oxc-raw-layout.js';
import type { SymbolKind } from './types.js';

const AT = 64;

/** The statement tag a declaration of `export default` has as a statement. */
const DEFAULT_AS_STATEMENT: ReadonlyMap<number, number> = new Map([
  [DEFAULT_DECLARATION.Function, STATEMENT.Function],
  [DEFAULT_DECLARATION.Class, STATEMENT.Class],
  [DEFAULT_DECLARATION.TSInterfaceDeclaration, STATEMENT.TSInterfaceDeclaration],
]);

interface Declared {
  name: string;
  kind: SymbolKind;
}

export class OxcDeclarations {
  /**
   * The top-level statement being walked: where its doc comment must end (its start, or its
   * first decorator's in `@decorator export class`), the previous statement's end, and the doc,
   * found only when a symbol needs it (null until then).
   */
  private current: { docEnd: number; previousEnd: number; doc: string | undefined | null } | undefined;
  private readonly text: string;
  private readonly exports: OxcExports;

  constructor(
    private readonly raw: RawView,
    private readonly lines: LineTable,
    private readonly facts: FileFacts,
  ) {
    this.text = raw.text;
    this.exports = new OxcExports(raw, lines, facts);
  }

  /**
   * Walks the program's statements (the `Program` at `programPos`) and the module record's
   * imports (top-level import statements; `dataPos` is the start of oxc's `RawTransferData`).
   */
  program(programPos: number, dataPos: number): void {
    const { raw } = this;
    const body = programPos + PROGRAM_BODY;
    const first = raw.word(body);
    const count = raw.word(body + 8);
    const records = dataPos + MODULE_RECORD + STATIC_IMPORTS;
    const firstRecord = raw.word(records);
    const recordCount = raw.word(records + 8);
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
          if (recordStart === start) this.exports.importRecord(record);
        }
      } else {
        this.current = { docEnd: start, previousEnd, doc: null };
        this.statement(tag, node, start);
      }
      previousEnd = raw.end(node);
    }
    this.exports.finish();
  }

  /** The doc comment of the statement being walked, found when a symbol needs it. */
  private statementDoc(): string | undefined {
    const { current } = this;
    if (current === undefined) return undefined;
    if (current.doc === null) current.doc = docBefore(this.text, current.previousEnd, current.docEnd);
    return current.doc;
  }

  private statement(tag: number, node: number, start: number): void {
    const { raw, exports } = this;
    switch (tag) {
      case STATEMENT.ExpressionStatement:
        if (this.text.startsWith('exports.', start) || this.text.startsWith('module.exports', start))
          exports.commonJsExport(node, start);
        return;
      case STATEMENT.ExportNamedDeclaration:
        return exports.exportNames(node);
      case STATEMENT.ExportFromDeclaration:
        return exports.reexport(node);
      case STATEMENT.ExportAllDeclaration:
        return exports.reexportAll(node);
      case STATEMENT.ExportDeclaration: {
        const field = node + EXPORT_DECLARATION;
        const declarationTag = raw.bytes[field] ?? NO_ENUM;
        const declaration = raw.boxed(field);
        if (declarationTag === STATEMENT.Class) this.docBeforeDecorators(declaration, start);
        for (const { name, kind } of this.declaration(declarationTag, declaration, true))
          this.facts.addExport({ name, kind });
        return;
      }
      case STATEMENT.ExportDefaultDeclaration:
        return this.exportDefault(node, start);
      case STATEMENT.TSExportAssignment: {
        const field = node + EXPORT_ASSIGNMENT_EXPRESSION;
        return exports.exportValue(raw.bytes[field] ?? NO_ENUM, raw.boxed(field));
      }
      case STATEMENT.TSNamespaceExportDeclaration:
        return exports.namespaceExport(node);
      default:
        // The other statements (`if`, `for`, blocks...) declare nothing here.
        this.declaration(tag, node, false);
    }
  }

  /** `@decorator export class`: the class's doc comment ends before its decorators, which come before `export`. */
  private docBeforeDecorators(node: number, start: number): void {
    const { raw, current } = this;
    if (current === undefined || raw.word(node + CLASS_DECORATORS + 8) === 0) return;
    current.docEnd = Math.min(raw.start(raw.word(node + CLASS_DECORATORS)), start);
  }

  /** `export default <declaration or expression>` at `node`. */
  private exportDefault(node: number, start: number): void {
    const { raw } = this;
    const field = node + EXPORT_DEFAULT_DECLARATION;
    const tag = raw.bytes[field] ?? NO_ENUM;
    const declaration = raw.boxed(field);
    const statementTag = DEFAULT_AS_STATEMENT.get(tag);
    // A class or a function written as an expression (`export default (class {})`) has an `Expression` tag.
    if (statementTag === undefined) return this.exports.exportValue(tag, declaration);
    if (statementTag === STATEMENT.Class) this.docBeforeDecorators(declaration, start);
    const named = this.declaration(statementTag, declaration, true);
    for (const { name, kind } of named) this.facts.addExport({ name: 'default', kind, local: name });
    if (named.length === 0)
      this.facts.addExport({ name: 'default', kind: statementTag === STATEMENT.Class ? 'class' : 'function' });
  }

  /** Records the symbols of the declaration `node` (its `Statement` tag `tag`) and returns their names and kinds. */
  private declaration(tag: number, node: number, exported: boolean): Declared[] {
    const { raw, text } = this;
    switch (tag) {
      case STATEMENT.VariableDeclaration:
        return this.variables(node, exported);
      case STATEMENT.Function:
        return this.function(node, exported);
      case STATEMENT.Class:
        return this.class(node, exported);
      case STATEMENT.TSInterfaceDeclaration:
      case STATEMENT.TSTypeAliasDeclaration:
      case STATEMENT.TSEnumDeclaration: {
        const id = node + DECLARATION_ID;
        const name = text.slice(raw.start(id), raw.end(id));
        const end = raw.end(node);
        const start = declarationStart(text, raw.start(node));
        if (tag === STATEMENT.TSTypeAliasDeclaration) return this.addDeclared(name, 'type', start, end, end, exported);
        if (tag === STATEMENT.TSEnumDeclaration)
          return this.addDeclared(name, 'type', start, raw.start(node + ENUM_BODY), end, exported);
        return this.addDeclared(name, 'interface', start, raw.start(raw.word(node + INTERFACE_BODY)), end, exported);
      }
      case STATEMENT.TSNamespaceDeclaration: {
        // `namespace A.B.C {}` nests one declaration per name; its name is the whole dotted path.
        let inner = node;
        while (raw.bytes[inner + NAMESPACE_BODY] === NAMESPACE_BODY_NESTED) inner = raw.boxed(inner + NAMESPACE_BODY);
        const name = text.slice(raw.start(node + NAMESPACE_ID), raw.end(inner + NAMESPACE_ID));
        const bodyStart = raw.start(raw.boxed(inner + NAMESPACE_BODY));
        return this.addDeclared(
          name,
          'variable',
          declarationStart(text, raw.start(node)),
          bodyStart,
          raw.end(node),
          exported,
        );
      }
      case STATEMENT.TSExternalModuleDeclaration: {
        // `declare module 'x' {}`: named by its string, quotes included; `declare module 'x';` has no body.
        const id = node + MODULE_ID;
        const name = text.slice(raw.start(id), raw.end(id));
        const end = raw.end(node);
        const body = node + MODULE_BODY;
        const bodyStart = raw.word(body) === 0 && raw.word(body + 4) === 0 ? end : raw.start(raw.word(body));
        return this.addDeclared(name, 'variable', declarationStart(text, raw.start(node)), bodyStart, end, exported);
      }
      default:
        // `declare global {}`, `import x = require()`, and the statements that are no declaration.
        return [];
    }
  }

  /** A `Function` node (a declaration, `declare function`, an overload) at `node`. */
  private function(node: number, exported: boolean): Declared[] {
    const { raw } = this;
    const id = node + FUNCTION_ID;
    if (raw.word(id + IDENTIFIER_NAME) === 0 && raw.word(id + IDENTIFIER_NAME + 4) === 0) return [];
    const end = raw.end(node);
    const start = declarationStart(this.text, raw.start(node));
    return this.addDeclared(raw.identifierName(id), 'function', start, this.functionBody(node, end), end, exported);
  }

  /** Where a `Function`'s body starts; `fallback` without one. */
  private functionBody(node: number, fallback: number): number {
    const { raw } = this;
    const body = node + FUNCTION_BODY;
    if (raw.word(body) === 0 && raw.word(body + 4) === 0) return fallback;
    return raw.start(raw.word(body));
  }

  private variables(node: number, exported: boolean): Declared[] {
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
        end = this.functionBody(init, raw.end(init));
      } else {
        kind = keyword === 'const' ? 'const' : 'variable';
        end = initTag === NO_ENUM ? declaratorEnd : raw.start(init);
      }
      const signature = `${keyword} ${compactSignature(this.text, declaratorStart, end)}`;
      const span = textSpan(this.lines, declaratorStart, declaratorEnd);
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
    this.facts.addSymbolAt({ name, kind, exported, span: textSpan(this.lines, start, end), signature, doc });
    return [{ name, kind }];
  }

  /** A `Class` node (a declaration) at `node`, and its methods (and its fields holding a function). */
  private class(node: number, exported: boolean): Declared[] {
    const { raw } = this;
    const id = node + CLASS_ID;
    if (raw.word(id + IDENTIFIER_NAME) === 0 && raw.word(id + IDENTIFIER_NAME + 4) === 0) return [];
    const name = raw.identifierName(id);
    const body = raw.word(node + CLASS_BODY);
    const start = declarationStart(this.text, raw.start(node));
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
        bodyStart = this.functionBody(raw.word(member + METHOD_VALUE), memberEnd);
      else if (tag === CLASS_ELEMENT.PropertyDefinition || tag === CLASS_ELEMENT.AccessorProperty) {
        const valueTag = raw.bytes[member + PROPERTY_VALUE];
        const value = raw.boxed(member + PROPERTY_VALUE);
        if (valueTag === EXPRESSION.ArrowFunctionExpression) bodyStart = raw.start(raw.boxed(value + ARROW_BODY));
        else if (valueTag === EXPRESSION.FunctionExpression) bodyStart = this.functionBody(value, memberEnd);
      }
      if (bodyStart !== undefined)
        this.method(member, tag === CLASS_ELEMENT.MethodDefinition, bodyStart, name, exported, previousEnd);
      previousEnd = memberEnd;
    }
    return result;
  }

  /** A method of `container` (or a field holding a function), its body starting at `bodyStart`. */
  private method(
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
    // Decorators stay out of the signature and the span, as in tree-sitter's TypeScript grammar;
    // the doc comment above them is still the member's. Read only when the member starts with one.
    if (text.charCodeAt(memberStart) === AT) {
      const decorators = raw.word(member + MEMBER_DECORATORS + 8);
      if (decorators > 0) {
        const last = raw.word(member + MEMBER_DECORATORS) + (decorators - 1) * DECORATOR_SIZE;
        start = skipSpace(text, raw.end(last));
      }
    }
    const end = raw.end(member);
    const signature = compactSignature(text, start, bodyStart);
    const isPrivate = name.startsWith('#') || /^(?:\S+\s+)*private\s/.test(signature.slice(0, signature.indexOf(name)));
    this.facts.addSymbolAt({
      name,
      kind: 'method',
      container,
      exported: exported && !isPrivate,
      span: textSpan(this.lines, start, end),
      signature,
      doc: docBefore(text, previousEnd, memberStart),
    });
  }
}
