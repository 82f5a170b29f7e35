/**
 * Tree-sitter loader shared by every code analysis (size checks now; symbols, import graphs and
 * repo maps later). Grammars come from the grammar packages' own `.wasm` files, resolved through
 * Node's module resolution so the same code works from `src/` (tsx, vitest) and `dist/`.
 *
 * The wasm runtime is initialised once, lazily, and each `Language` is loaded once and cached:
 * both are immutable and expensive, unlike parsers and trees, which callers own and free.
 */
import { createRequire } from 'node:module';
import { Language, Parser, type Tree } from 'web-tree-sitter';

/** Languages Ratchet can parse. `tsx` is TypeScript with JSX (a separate grammar). */
export type LanguageId = 'typescript' | 'tsx' | 'javascript' | 'python' | 'go' | 'java' | 'rust';

const EXTENSIONS: Readonly<Record<string, LanguageId>> = {
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'tsx',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascript',
  '.py': 'python',
  '.pyi': 'python',
  '.go': 'go',
  '.java': 'java',
  '.rs': 'rust',
};

/** `<package>/<file>.wasm` of each grammar, as the grammar packages ship them. */
const GRAMMAR_WASM: Readonly<Record<LanguageId, string>> = {
  typescript: 'tree-sitter-typescript/tree-sitter-typescript.wasm',
  tsx: 'tree-sitter-typescript/tree-sitter-tsx.wasm',
  javascript: 'tree-sitter-javascript/tree-sitter-javascript.wasm',
  python: 'tree-sitter-python/tree-sitter-python.wasm',
  go: 'tree-sitter-go/tree-sitter-go.wasm',
  java: 'tree-sitter-java/tree-sitter-java.wasm',
  rust: 'tree-sitter-rust/tree-sitter-rust.wasm',
};

const require = createRequire(import.meta.url);
let initialised: Promise<void> | undefined;
const languages = new Map<LanguageId, Promise<Language>>();

const BY_EXTENSION: ReadonlyMap<string, LanguageId> = new Map(Object.entries(EXTENSIONS));

/**
 * The language of a file (a `/`-separated path) by its extension (`.d.ts` included), or undefined
 * when unsupported: `extname`'s extension (none for a name starting with its only dot) looked up
 * in a Map. Asked several times per file by a build; a property lookup by a string just made
 * first looks the string up in V8's table of names, twice the cost of the whole Map lookup.
 */
export function languageIdForFile(path: string): LanguageId | undefined {
  const dot = path.lastIndexOf('.');
  if (dot <= path.lastIndexOf('/') + 1) return undefined;
  const extension = path.slice(dot);
  return BY_EXTENSION.get(extension) ?? BY_EXTENSION.get(extension.toLowerCase());
}

/** Absolute path of a grammar's `.wasm` file. */
function grammarWasmPath(id: LanguageId): string {
  return require.resolve(GRAMMAR_WASM[id]);
}

/** Initialises the tree-sitter runtime once; later calls share the first initialisation. */
export function initTreeSitter(): Promise<void> {
  initialised ??= Parser.init().catch((error: unknown) => {
    initialised = undefined;
    throw error;
  });
  return initialised;
}

/** Loads (once) and returns a grammar. */
export async function loadLanguage(id: LanguageId): Promise<Language> {
  let language = languages.get(id);
  if (language === undefined) {
    language = initTreeSitter().then(() => Language.load(grammarWasmPath(id)));
    languages.set(id, language);
    language.catch(() => languages.delete(id));
  }
  return language;
}

/**
 * A parsed file. The tree lives in wasm memory: free it with `using` (or `[Symbol.dispose]()`)
 * when done; nodes must not be used after that.
 */
export interface ParsedFile extends Disposable {
  language: LanguageId;
  tree: Tree;
  /** True when the tree has ERROR or MISSING nodes (the text does not parse cleanly). */
  hasErrors: boolean;
}

/** Parses `text` as the language of `path`; undefined when the language is not supported. */
export async function parseFile(path: string, text: string): Promise<ParsedFile | undefined> {
  const id = languageIdForFile(path);
  if (id === undefined) return undefined;
  const language = await loadLanguage(id);
  const parser = new Parser();
  try {
    parser.setLanguage(language);
    const tree = parser.parse(text);
    if (tree === null) return undefined;
    return {
      language: id,
      tree,
      hasErrors: tree.rootNode.hasError,
      [Symbol.dispose]: () => tree.delete(),
    };
  } finally {
    parser.delete();
  }
}
