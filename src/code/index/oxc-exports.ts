/**
 * The module interface of a JavaScript or TypeScript file parsed by oxc, read from its raw
 * buffer: the imports of the module record and of re-exports, export lists, `export *`,
 * CommonJS exports, `export default <expression>`, `export =` and `export as namespace`.
 * `oxc-declarations.ts` walks the statements and hands these here; what a declaration exports
 * it records itself.
 *
 * Names and specifiers are the source text as written (quotes kept on string keys, escapes left
 * as they are), as tree-sitter's extractor gives them.
 */
import { textSpan } from './declaration-text.js';
import { compactSignature, type FileFacts } from './extract-shared.js';
import type { LineTable } from './line-table.js';
import {
  ASSIGN,
  ASSIGNMENT_LEFT,
  ASSIGNMENT_OPERATOR,
  ASSIGNMENT_RIGHT,
  ENTRY_IMPORT_NAME,
  ENTRY_LOCAL_NAME,
  EXPORT_ALL_EXPORTED,
  EXPORT_ALL_SOURCE,
  EXPORT_FROM_SOURCE,
  EXPORT_SPECIFIER_SIZE,
  EXPORT_SPECIFIERS,
  EXPRESSION,
  IMPORT_ENTRIES,
  IMPORT_ENTRY_SIZE,
  IMPORT_MODULE_REQUEST,
  IMPORT_NAME_NAMED,
  IMPORT_NAME_NAMESPACE,
  NAME_SPAN_VALUE,
  NAMESPACE_EXPORT_ID,
  NO_ENUM,
  SPECIFIER_EXPORTED,
  SPECIFIER_LOCAL,
  STATEMENT_EXPRESSION,
  type RawView,
} from './oxc-raw-layout.js';
import type { SymbolKind } from './types.js';

export class OxcExports {
  /** `export { a as b }` without a source, `export default a`: resolved once every declaration is known. */
  private readonly localExports: { name: string; local: string }[] = [];
  private readonly text: string;

  constructor(
    private readonly raw: RawView,
    private readonly lines: LineTable,
    private readonly facts: FileFacts,
  ) {
    this.text = raw.text;
  }

  /** Records the local exports, now that the file's declarations (and their kinds) are known. */
  finish(): void {
    for (const { name, local } of this.localExports) {
      const kind = this.facts.markExported(local) ?? 'variable';
      this.facts.addExport(local === name ? { name, kind } : { name, kind, local });
    }
  }

  /** A `StaticImport` of the module record at `record`. */
  importRecord(record: number): void {
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

  /**
   * `export default <expression>` and `export = <expression>`: the expression's tag (an
   * `Expression` one) and its node.
   */
  exportValue(tag: number, value: number): void {
    if (tag === EXPRESSION.IdentifierReference) {
      this.localExports.push({ name: 'default', local: this.raw.identifierName(value) });
      return;
    }
    const kind: SymbolKind =
      tag === EXPRESSION.ArrowFunctionExpression || tag === EXPRESSION.FunctionExpression
        ? 'function'
        : tag === EXPRESSION.Class
          ? 'class'
          : 'variable';
    this.facts.addExport({ name: 'default', kind });
  }

  /** `export as namespace X`: recorded as tree-sitter's extractor records it, a default export of X. */
  namespaceExport(node: number): void {
    const { raw } = this;
    const id = node + NAMESPACE_EXPORT_ID;
    this.localExports.push({ name: 'default', local: this.text.slice(raw.start(id), raw.end(id)) });
  }

  /** `export { a as b }` (no source): resolved once every declaration is known. */
  exportNames(node: number): void {
    this.specifiers(node, (local, name) => this.localExports.push({ name, local }));
  }

  /** `export { a as b } from 'x'`. */
  reexport(node: number): void {
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
  reexportAll(node: number): void {
    const { raw, text } = this;
    const specifier = text.slice(raw.start(node + EXPORT_ALL_SOURCE) + 1, raw.end(node + EXPORT_ALL_SOURCE) - 1);
    const exported = node + EXPORT_ALL_EXPORTED;
    const name = raw.bytes[exported] === NO_ENUM ? '*' : text.slice(raw.start(exported + 8), raw.end(exported + 8));
    this.facts.addExport({ name, kind: 'reexport', source: specifier });
    this.facts.addImport({ specifier, names: ['*'], line: this.lines.line(raw.start(node)) });
  }

  /** `exports.name = ...`, `module.exports.name = ...`, `module.exports = ...`: an expression statement at `node`. */
  commonJsExport(node: number, start: number): void {
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
    const span = textSpan(this.lines, start, raw.end(node));
    this.facts.addSymbolAt({ name, kind, exported: true, span, signature });
    this.facts.addExport({ name, kind });
  }
}
