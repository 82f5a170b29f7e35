/**
 * oxc-parser's raw transfer, as the JavaScript/TypeScript extractor uses it: `parseSync` parses
 * natively into oxc's AST buffer, and the extractor reads that buffer at the offsets of
 * `oxc-raw-layout.ts` and walks it with `oxc-raw-walk.generated.ts` (oxc's own walker, made to
 * build no node objects). No node object is built: this loads neither oxc's lazy deserialiser
 * (its node classes and their walker, about 0.5 MB of JavaScript) nor its eager one, which the
 * package would load for `parseSync(..., { experimentalLazy })`; `test/support/oxc-lazy-nodes.ts`
 * builds oxc's lazy nodes over the same buffer, for the tests that pin the layout.
 *
 * These modules are internal to the package (its `src-js`, exported by its `./*` entry) and
 * undeclared in its types, so the package is pinned to an exact version, `loadOxcRaw` takes no
 * other, and `test/code/oxc-raw-layout.test.ts` fails loudly when a field read here moves.
 * Offsets in the buffer are UTF-16 code units, as in a JavaScript string.
 */

import { createRequire } from 'node:module';
import { OXC_LAYOUT_VERSION, RawView } from './oxc-raw-layout.js';
import { WALKED_TYPE_IDS, walkProgram } from './oxc-raw-walk.generated.js';

const WALKED: ReadonlySet<number> = new Set<number>(WALKED_TYPE_IDS);

export interface RawParseResult {
  /** The raw AST buffer, with the source (see `oxc-raw-layout.ts`). */
  readonly raw: RawView;
  /** The position of the program node in the buffer, and of oxc's `RawTransferData` (program, module record...). */
  readonly programPos: number;
  readonly dataPos: number;
  /**
   * Walks the whole program with oxc's own walker made to build no node objects (see
   * `oxc-raw-walk.generated.ts`): each visitor gets the node's position in the buffer.
   */
  walkRaw(visitors: RawVisitors): void;
  /** Returns the AST buffer to oxc's pool; the result must not be read afterwards. */
  dispose(): void;
}

export interface RawParseOptions {
  lang: 'js' | 'jsx' | 'ts' | 'tsx' | 'dts';
  sourceType: 'module' | 'commonjs' | 'unambiguous';
}

export interface OxcRawApi {
  parseSync(filename: string, text: string, options: RawParseOptions): RawParseResult;
  /** Visitors for `walkRaw`, by oxc's node type name (entering the node); throws on an unknown name, or a type the raw walk skips (leaf nodes, types). */
  rawVisitors(handlers: Record<string, (pos: number) => void>): RawVisitors;
}

export type RawBuffer = Uint8Array & { readonly int32: Int32Array };

/** Opaque: oxc's visitor array (by node type id), made once and reused for every file. */
export interface RawVisitors {
  readonly __brand?: 'oxc-raw-visitors';
}

/** The pieces of oxc-parser's raw transfer this is made of. */
interface OxcRawModules {
  parseSyncRawImpl: (
    filename: string,
    text: string,
    options: RawParseOptions,
    convert: (buffer: RawBuffer, text: string, sourceStartPos: number, sourceByteLen: number) => RawParseResult,
  ) => RawParseResult;
  returnBufferToCache: (buffer: RawBuffer) => void;
  DATA_POINTER_POS_32: number;
  PROGRAM_OFFSET: number;
  NODE_TYPE_IDS_MAP: ReadonlyMap<string, number>;
  NODE_TYPES_COUNT: number;
}

async function loadRawModules(): Promise<OxcRawModules | undefined> {
  // Specifiers in variables: these files have no type declarations (the shapes are above).
  const load = async (path: string): Promise<Record<string, unknown>> =>
    (await import(`oxc-parser/src-js/${path}`)) as Record<string, unknown>;
  // First: `raw-transfer/common.js` throws when loaded where raw transfer is unsupported.
  const { rawTransferSupported } = await load('raw-transfer/supported.js');
  if (typeof rawTransferSupported !== 'function' || (rawTransferSupported as () => unknown)() !== true)
    return undefined;
  const [common, constants, typeIds] = await Promise.all([
    load('raw-transfer/common.js'),
    load('generated/constants.js'),
    load('generated/lazy/type_ids.js'),
  ]);
  const modules = {
    parseSyncRawImpl: common.parseSyncRawImpl,
    returnBufferToCache: common.returnBufferToCache,
    DATA_POINTER_POS_32: constants.DATA_POINTER_POS_32,
    PROGRAM_OFFSET: constants.PROGRAM_OFFSET,
    NODE_TYPE_IDS_MAP: typeIds.NODE_TYPE_IDS_MAP,
    NODE_TYPES_COUNT: typeIds.NODE_TYPES_COUNT,
  };
  for (const [name, value] of Object.entries(modules))
    if (value === undefined) throw new Error(`oxc-parser: ${name} not found in its raw transfer modules`);
  return modules as OxcRawModules;
}

/** `parseSync` over oxc's raw transfer; the buffer goes back to oxc's cache on `dispose`, which every caller makes. */
function rawApi(raw: OxcRawModules): OxcRawApi {
  const convert = (buffer: RawBuffer, sourceText: string, sourceStartPos: number, sourceByteLen: number) => {
    const dataPos = buffer.int32[raw.DATA_POINTER_POS_32] ?? 0;
    const programPos = dataPos + raw.PROGRAM_OFFSET;
    // The generated walk reads nothing of its `ast` but the buffer.
    const ast = { buffer };
    const result: RawParseResult = {
      raw: new RawView(buffer, sourceText, sourceStartPos, sourceText.length === sourceByteLen),
      programPos,
      dataPos,
      dispose: () => raw.returnBufferToCache(buffer),
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
    rawVisitors,
  };
}

/**
 * Loads oxc-parser's raw transfer, or undefined where it cannot run (no native binding for this
 * platform, or a 32-bit or big-endian system, where raw transfer is unsupported, or another
 * oxc-parser than the pinned one): JavaScript and TypeScript are then parsed with tree-sitter
 * like the other languages.
 */
export async function loadOxcRaw(): Promise<OxcRawApi | undefined> {
  try {
    // The raw layout is that of one version: any other (a dependency resolved otherwise than the
    // pinned one) parses with tree-sitter, slower but right.
    const manifest: unknown = createRequire(import.meta.url)('oxc-parser/package.json');
    if ((manifest as { version?: unknown } | null)?.version !== OXC_LAYOUT_VERSION) return undefined;
    const modules = await loadRawModules();
    return modules === undefined ? undefined : rawApi(modules);
  } catch {
    return undefined;
  }
}
