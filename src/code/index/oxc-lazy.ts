/**
 * The part of `oxc-parser`'s experimental lazy API (`parseSync(..., { experimentalLazy: true })`
 * and `experimentalGetLazyVisitor()`) that the JavaScript/TypeScript extractor reads, typed here
 * because the package declares neither. Nodes are views over oxc's raw AST buffer: a property read
 * deserialises only that field, and a visitor builds node objects only for the types it visits,
 * which is what makes extraction cheaper than a full AST (see bench/index.ts).
 *
 * The API is experimental and its node names are oxc's own (`IdentifierReference`,
 * `StaticMemberExpression`, `ExportDeclaration`), not ESTree's, so the package is pinned to an
 * exact version and `test/code/oxc-lazy-shape.test.ts` fails loudly when a field read here
 * disappears or changes type. Offsets are UTF-16 code units, as in a JavaScript string.
 */

export interface LazyNode {
  readonly type: string;
  readonly start: number;
  readonly end: number;
}

/** `IdentifierReference`, `BindingIdentifier`, `IdentifierName`, `PrivateIdentifier`. */
export interface LazyIdentifier extends LazyNode {
  readonly name: string;
}

/** `Function`: its `type` is `FunctionDeclaration`, `FunctionExpression`, `TSDeclareFunction` or `TSEmptyBodyFunctionExpression`. */
export interface LazyFunction extends LazyNode {
  readonly id: LazyIdentifier | null;
  readonly body: LazyNode | null;
}

/** `ArrowFunctionExpression`: `body` is the expression itself for an expression body. */
export interface LazyArrowFunction extends LazyNode {
  readonly body: LazyNode;
}

/** `Class`: its `type` is `ClassDeclaration` or `ClassExpression`. */
export interface LazyClass extends LazyNode {
  readonly id: LazyIdentifier | null;
  /** Decorators written before `export` come before the export statement's start. */
  readonly decorators: readonly LazyNode[];
  readonly body: LazyNode & { readonly body: readonly LazyClassElement[] };
}

/** `MethodDefinition`, `TSAbstractMethodDefinition`, `PropertyDefinition`, `AccessorProperty`, ... */
export interface LazyClassElement extends LazyNode {
  readonly key: LazyNode;
  readonly computed: boolean;
  readonly value: LazyNode | null;
  readonly decorators: readonly LazyNode[];
}

/** A declaration with a name and a body: interfaces, enums, namespaces, `declare module 'x'`. */
export interface LazyNamedBlock extends LazyNode {
  readonly id: LazyNode;
  readonly body: LazyNode | null;
}

export interface LazyVariableDeclaration extends LazyNode {
  readonly kind: string;
  readonly declarations: readonly LazyVariableDeclarator[];
}

export interface LazyVariableDeclarator extends LazyNode {
  readonly id: LazyNode;
  readonly init: LazyNode | null;
}

/** `ExportDeclaration` (`export <declaration>`), `ExportDefaultDeclaration`. */
export interface LazyExportDeclaration extends LazyNode {
  readonly declaration: LazyNode;
}

/** `ExportNamedDeclaration` (`export { a as b }`) and `ExportFromDeclaration` (`export { a } from 'x'`). */
export interface LazyExportSpecifiers extends LazyNode {
  readonly specifiers: readonly (LazyNode & { readonly local: LazyNode; readonly exported: LazyNode })[];
  readonly source?: LazyNode;
}

/** `ExportAllDeclaration`: `export * from 'x'`, `export * as ns from 'x'`. */
export interface LazyExportAll extends LazyNode {
  readonly exported: LazyNode | null;
  readonly source: LazyNode;
}

/** `TSExportAssignment` (`export = x`). */
export interface LazyExportAssignment extends LazyNode {
  readonly expression: LazyNode;
}

/** `TSNamespaceExportDeclaration` (`export as namespace X`). */
export interface LazyNamespaceExport extends LazyNode {
  readonly id: LazyNode;
}

export interface LazyExpressionStatement extends LazyNode {
  readonly expression: LazyNode;
}

export interface LazyAssignment extends LazyNode {
  readonly operator: string;
  readonly left: LazyNode;
  readonly right: LazyNode;
}

export interface LazyCall extends LazyNode {
  readonly callee: LazyNode;
  readonly arguments: readonly LazyNode[];
}

/** `StaticMemberExpression` (an `IdentifierName` property) and `PrivateFieldExpression` (a `PrivateIdentifier`, `#` included). */
export interface LazyMember extends LazyNode {
  readonly object: LazyNode;
  readonly property: LazyNode;
}

export interface LazyTaggedTemplate extends LazyNode {
  readonly tag: LazyNode;
}

export interface LazyImportExpression extends LazyNode {
  readonly source: LazyNode;
}

/** A name with its span in the module record; `value` is the name as declared. */
interface LazyNameSpan {
  readonly value: string;
  readonly start: number;
  readonly end: number;
}

/** One binding of an import statement, from the module record. */
interface LazyImportEntry {
  /** A named import: a name span; `import * as ns`: `'namespaceObject'`; a default import: a span without `value`. */
  readonly importName: LazyNameSpan | 'namespaceObject' | { readonly start: number; readonly end: number };
  readonly localName: LazyNameSpan;
}

export interface LazyStaticImport {
  readonly start: number;
  readonly end: number;
  /** The specifier; its span includes the quotes. */
  readonly moduleRequest: LazyNameSpan;
  readonly entries: readonly LazyImportEntry[];
}

interface LazyComment {
  readonly start: number;
  readonly end: number;
}

export interface LazyParseResult {
  readonly program: LazyNode & { readonly body: readonly LazyNode[] };
  readonly module: { readonly staticImports: readonly LazyStaticImport[] };
  readonly comments: readonly LazyComment[];
  readonly errors: readonly unknown[];
  /** Walks the whole program with a visitor, building node objects only for the visited types. */
  visit(visitor: LazyVisitor): void;
  /** Returns the AST buffer to oxc's pool; the result's nodes must not be read afterwards. */
  dispose(): void;
}

/** Opaque: made once from handlers by node type, reused for every file. */
export interface LazyVisitor {
  readonly __brand?: 'oxc-lazy-visitor';
}

export interface LazyParseOptions {
  experimentalLazy: true;
  lang: 'js' | 'jsx' | 'ts' | 'tsx' | 'dts';
  sourceType: 'module' | 'commonjs' | 'unambiguous';
}

export interface OxcLazyApi {
  parseSync(filename: string, text: string, options: LazyParseOptions): LazyParseResult;
  Visitor: new (handlers: Record<string, (node: never) => void>) => LazyVisitor;
}

interface OxcModule {
  parseSync?: unknown;
  rawTransferSupported?: unknown;
  experimentalGetLazyVisitor?: unknown;
}

/**
 * Loads oxc-parser's lazy API, or undefined where it cannot run (no native binding for this
 * platform, or a 32-bit or big-endian system, where raw transfer is unsupported): JavaScript and
 * TypeScript are then parsed with tree-sitter like the other languages.
 */
export async function loadOxcLazy(): Promise<OxcLazyApi | undefined> {
  try {
    const oxc = (await import('oxc-parser')) as OxcModule;
    const { parseSync, rawTransferSupported, experimentalGetLazyVisitor } = oxc;
    if (typeof parseSync !== 'function' || typeof experimentalGetLazyVisitor !== 'function') return undefined;
    if (typeof rawTransferSupported !== 'function' || (rawTransferSupported as () => unknown)() !== true)
      return undefined;
    const Visitor = (experimentalGetLazyVisitor as () => unknown)();
    if (typeof Visitor !== 'function') return undefined;
    return { parseSync, Visitor } as OxcLazyApi;
  } catch {
    return undefined;
  }
}
