/**
 * oxc's lazy nodes over the raw AST buffer the index reads (`src/code/index/oxc-raw.ts`): the
 * reference the layout tests compare the raw reads with. A lazy node reads its fields from the
 * buffer with oxc's own generated getters (`src-js/generated/lazy/constructors.js`), so a field
 * the index reads at an offset of `oxc-raw-layout.ts` is checked against the getter oxc made for
 * it. The index itself builds none of these (nor loads their code).
 *
 * The lazy API is experimental and undeclared in oxc-parser's types: the shapes below are the
 * fields the tests read; `test/code/oxc-lazy-shape.test.ts` pins them.
 */
import { loadOxcRaw, type OxcRawApi, type RawParseOptions, type RawParseResult } from '../../src/code/index/oxc-raw.js';

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

/** `TSExportAssignment` (`export = x`). */
export interface LazyExportAssignment extends LazyNode {
  readonly expression: LazyNode;
}

/** `TSNamespaceExportDeclaration` (`export as namespace X`). */
export interface LazyNamespaceExport extends LazyNode {
  readonly id: LazyNode;
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

interface LazyStaticImport {
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

/** A raw parse with oxc's lazy view of it (its data object and Map of nodes made on first read). */
export interface LazyParseResult extends RawParseResult {
  readonly program: LazyNode & { readonly body: readonly LazyNode[] };
  readonly module: { readonly staticImports: readonly LazyStaticImport[] };
  readonly comments: readonly LazyComment[];
  readonly errors: readonly unknown[];
  /** Walks the whole program with a visitor, building node objects only for the visited types. */
  visit(visitor: LazyVisitor): void;
}

/** Opaque: made once from handlers by node type, reused for every file. */
interface LazyVisitor {
  readonly __brand?: 'oxc-lazy-visitor';
}

export interface OxcLazyApi extends OxcRawApi {
  parseSync(filename: string, text: string, options: RawParseOptions): LazyParseResult;
  Visitor: new (handlers: Record<string, (node: never) => void>) => LazyVisitor;
}

type LazyData = Pick<LazyParseResult, 'program' | 'module' | 'comments' | 'errors'>;

/** The index's raw API with oxc's lazy nodes over each parse, or undefined where oxc's raw transfer cannot run. */
export async function loadOxcLazy(): Promise<OxcLazyApi | undefined> {
  const rawApi = await loadOxcRaw();
  if (rawApi === undefined) return undefined;
  const load = async (path: string): Promise<Record<string, unknown>> =>
    (await import(`oxc-parser/src-js/${path}`)) as Record<string, unknown>;
  const [lazy, constructors, lazyCommon, lazyWalk, visitor] = await Promise.all([
    load('raw-transfer/lazy.js'),
    load('generated/lazy/constructors.js'),
    load('raw-transfer/lazy-common.js'),
    load('generated/lazy/walk.js'),
    load('raw-transfer/visitor.js'),
  ]);
  const RawTransferData = constructors.RawTransferData as new (pos: number, ast: object) => LazyData;
  const walkProgram = lazyWalk.walkProgram as (pos: number, ast: object, visitors: unknown) => void;
  const getVisitorsArr = visitor.getVisitorsArr as (visitor: LazyVisitor) => unknown;
  return {
    ...rawApi,
    Visitor: lazy.Visitor as OxcLazyApi['Visitor'],
    parseSync: (filename, text, options) => {
      const result = rawApi.parseSync(filename, text, options);
      const { raw } = result;
      const sourceByteLen = Buffer.byteLength(raw.text, 'utf8');
      // What oxc's `raw-transfer/lazy.js` gives its nodes.
      const ast = {
        buffer: raw.bytes,
        sourceText: raw.text,
        sourceStartPos: raw.sourceStartPos,
        sourceByteLen,
        sourceIsAscii: raw.text.length === sourceByteLen,
        nodes: new Map<number, unknown>(),
        token: lazyCommon.TOKEN,
      };
      let made: LazyData | undefined;
      const data = (): LazyData => (made ??= new RawTransferData(result.dataPos, ast));
      return {
        ...result,
        get program() {
          return data().program;
        },
        get module() {
          return data().module;
        },
        get comments() {
          return data().comments;
        },
        get errors() {
          return data().errors;
        },
        visit: (lazyVisitor: LazyVisitor) => walkProgram(result.programPos, ast, getVisitorsArr(lazyVisitor)),
      };
    },
  };
}
