/**
 * The part of `oxc-parser`'s experimental lazy API (`parseSync(..., { experimentalLazy: true })`
 * and `experimentalGetLazyVisitor()`) that the JavaScript/TypeScript extractor reads, typed here
 * because the package declares neither. Nodes are views over oxc's raw AST buffer: a property read
 * deserialises only that field, and a visitor builds node objects only for the types it visits,
 * which is what makes extraction cheaper than a full AST (see bench/index.ts). The extractor
 * reads most of what it needs from that buffer directly (`raw`, `walkRaw`, `oxc-raw-layout.ts`),
 * cheaper still: lazy nodes remain for the rarer statements (`export default`, a decorated
 * exported class, `export =`, namespaces).
 *
 * The API is experimental and its node names are oxc's own (`IdentifierReference`,
 * `StaticMemberExpression`, `ExportDeclaration`), not ESTree's, so the package is pinned to an
 * exact version and `test/code/oxc-lazy-shape.test.ts` fails loudly when a field read here
 * disappears or changes type. Offsets are UTF-16 code units, as in a JavaScript string.
 */

import { createRequire } from 'node:module';
import { OXC_LAYOUT_VERSION, RawView } from './oxc-raw-layout.js';
import { WALKED_TYPE_IDS, walkProgram } from './oxc-raw-walk.generated.js';

const WALKED: ReadonlySet<number> = new Set<number>(WALKED_TYPE_IDS);

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

export interface LazyParseResult {
  readonly program: LazyNode & { readonly body: readonly LazyNode[] };
  readonly module: { readonly staticImports: readonly LazyStaticImport[] };
  readonly comments: readonly LazyComment[];
  readonly errors: readonly unknown[];
  /** Walks the whole program with a visitor, building node objects only for the visited types. */
  visit(visitor: LazyVisitor): void;
  /** The raw AST buffer the nodes are views of, with the source (see `oxc-raw-layout.ts`). */
  readonly raw: RawView;
  /** The position of the program node in the buffer, and of oxc's `RawTransferData` (program, module record...). */
  readonly programPos: number;
  readonly dataPos: number;
  /**
   * Walks the whole program as `visit` does, with oxc's own walker made to build no node
   * objects (see `oxc-raw-walk.generated.ts`): each visitor gets the node's position in `buffer`.
   */
  walkRaw(visitors: RawVisitors): void;
  /** Returns the AST buffer to oxc's pool; the result's nodes must not be read afterwards. */
  dispose(): void;
}

/** Opaque: made once from handlers by node type, reused for every file. */
interface LazyVisitor {
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
  /** Visitors for `walkRaw`, by oxc's node type name (entering the node); throws on an unknown name, or a type the raw walk skips (leaf nodes, types). */
  rawVisitors(handlers: Record<string, (pos: number) => void>): RawVisitors;
}

export type RawBuffer = Uint8Array & { readonly int32: Int32Array };

/** Opaque: oxc's visitor array (by node type id), made once and reused for every file. */
export interface RawVisitors {
  readonly __brand?: 'oxc-raw-visitors';
}

interface OxcModule {
  parseSync?: unknown;
  rawTransferSupported?: unknown;
  experimentalGetLazyVisitor?: unknown;
}

/** The pieces of oxc-parser's raw transfer (its `src-js`, exported by its `./*` entry) the lazy API is made of. */
interface OxcRawModules {
  parseSyncRawImpl: (
    filename: string,
    text: string,
    options: LazyParseOptions,
    convert: (buffer: RawBuffer, text: string, sourceStartPos: number, sourceByteLen: number) => LazyParseResult,
  ) => LazyParseResult;
  returnBufferToCache: (buffer: RawBuffer) => void;
  RawTransferData: new (
    pos: number,
    ast: object,
  ) => Pick<LazyParseResult, 'program' | 'module' | 'comments' | 'errors'>;
  TOKEN: object;
  DATA_POINTER_POS_32: number;
  PROGRAM_OFFSET: number;
  NODE_TYPE_IDS_MAP: ReadonlyMap<string, number>;
  NODE_TYPES_COUNT: number;
  walkProgram: (pos: number, ast: object, visitors: unknown) => void;
  getVisitorsArr: (visitor: LazyVisitor) => unknown;
}

async function loadRawModules(): Promise<OxcRawModules> {
  // Specifiers in variables: these files have no type declarations (the shapes are above).
  const load = async (path: string): Promise<Record<string, unknown>> =>
    (await import(`oxc-parser/src-js/${path}`)) as Record<string, unknown>;
  const [common, constructors, lazyCommon, constants, typeIds, lazyWalk, visitor] = await Promise.all([
    load('raw-transfer/common.js'),
    load('generated/lazy/constructors.js'),
    load('raw-transfer/lazy-common.js'),
    load('generated/constants.js'),
    load('generated/lazy/type_ids.js'),
    load('generated/lazy/walk.js'),
    load('raw-transfer/visitor.js'),
  ]);
  const modules = {
    parseSyncRawImpl: common.parseSyncRawImpl,
    returnBufferToCache: common.returnBufferToCache,
    RawTransferData: constructors.RawTransferData,
    TOKEN: lazyCommon.TOKEN,
    DATA_POINTER_POS_32: constants.DATA_POINTER_POS_32,
    PROGRAM_OFFSET: constants.PROGRAM_OFFSET,
    NODE_TYPE_IDS_MAP: typeIds.NODE_TYPE_IDS_MAP,
    NODE_TYPES_COUNT: typeIds.NODE_TYPES_COUNT,
    walkProgram: lazyWalk.walkProgram,
    getVisitorsArr: visitor.getVisitorsArr,
  };
  for (const [name, value] of Object.entries(modules))
    if (value === undefined) throw new Error(`oxc-parser: ${name} not found in its raw transfer modules`);
  return modules as OxcRawModules;
}

/**
 * `parseSync` as oxc's lazy API makes it (`raw-transfer/lazy.js`'s `construct`), plus the buffer
 * and `walkRaw`. The buffer goes back to oxc's cache on `dispose`, which every caller makes.
 */
function rawApi(raw: OxcRawModules, Visitor: OxcLazyApi['Visitor']): OxcLazyApi {
  const convert = (buffer: RawBuffer, sourceText: string, sourceStartPos: number, sourceByteLen: number) => {
    const ast = {
      buffer,
      sourceText,
      sourceStartPos,
      sourceByteLen,
      sourceIsAscii: sourceText.length === sourceByteLen,
      nodes: new Map<number, unknown>(),
      token: raw.TOKEN,
    };
    const rawDataPos = buffer.int32[raw.DATA_POINTER_POS_32] ?? 0;
    // oxc's own view of the data, with its Map of nodes, only for a file that needs a lazy node.
    let made: Pick<LazyParseResult, 'program' | 'module' | 'comments' | 'errors'> | undefined;
    const data = () => (made ??= new raw.RawTransferData(rawDataPos, ast));
    const programPos = rawDataPos + raw.PROGRAM_OFFSET;
    const result: LazyParseResult = {
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
      raw: new RawView(buffer, sourceText, sourceStartPos, sourceText.length === sourceByteLen),
      programPos,
      dataPos: rawDataPos,
      dispose: () => raw.returnBufferToCache(buffer),
      visit: (visitor) => raw.walkProgram(programPos, ast, raw.getVisitorsArr(visitor)),
      walkRaw: (visitors) => walkProgram(programPos, ast, visitors),
    };
    return result;
  };
  const rawVisitors = (handlers: Record<string, (pos: number) => void>): RawVisitors => {
    const visitors: unknown[] = new Array<unknown>(raw.NODE_TYPES_COUNT).fill(null);
    for (const [name, handler] of Object.entries(handlers)) {
      const id = raw.NODE_TYPE_IDS_MAP.get(name);
      if (id === undefined) throw new Error(`Unknown node type '${name}'`);
      // The raw walk skips leaf nodes (identifiers, literals...: their parent reads them) and types.
      if (!WALKED.has(id)) throw new Error(`'${name}' is not walked by the raw walk (a leaf node, or a type)`);
      visitors[id] = { enter: handler, exit: null };
    }
    return visitors as RawVisitors;
  };
  return {
    parseSync: (filename, text, options) => raw.parseSyncRawImpl(filename, text, options, convert),
    Visitor,
    rawVisitors,
  };
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
    // The raw layout is that of one version: any other (a dependency resolved otherwise than the
    // pinned one) parses with tree-sitter, slower but right.
    const manifest: unknown = createRequire(import.meta.url)('oxc-parser/package.json');
    if ((manifest as { version?: unknown } | null)?.version !== OXC_LAYOUT_VERSION) return undefined;
    return rawApi(await loadRawModules(), Visitor as OxcLazyApi['Visitor']);
  } catch {
    return undefined;
  }
}
