/**
 * Contract of the code index (seed 002, section 10): what `buildIndex` returns, what the cache
 * stores per file and what the index artifacts are made of. Plain data only, so an index can be
 * serialised as JSON, sent to a worker thread and compared in tests.
 */
import type { LanguageId } from '../tree-sitter.js';

/**
 * Version of the per-file parse results and of the cache's layout. Bump it whenever extraction
 * changes what it records or the cache is stored otherwise: a cache written with another version
 * is discarded and every file is parsed again. 5: the cache's results in 64 shards, not 256.
 */
export const INDEX_VERSION = 5;

export type SymbolKind = 'function' | 'class' | 'method' | 'interface' | 'type' | 'variable' | 'const';

/** A declaration: top-level functions, classes, types and variables, and the methods of classes. */
export interface CodeSymbol {
  name: string;
  kind: SymbolKind;
  /** The class, struct, trait or impl target holding a method; absent for top-level symbols. */
  container?: string;
  /** Part of the module's public API (exported, `pub`, `public`, capitalised Go name, Python public name). */
  exported: boolean;
  /** 1-based first and last line, inclusive. */
  startLine: number;
  endLine: number;
  /** The declaration without its body, whitespace collapsed, at most 300 characters. */
  signature: string;
  /** Leading doc comment or docstring, at most 300 characters, when there is one. */
  doc?: string;
  /**
   * A test the test harness calls by its attribute (Rust `#[test]`, `#[tokio::test]`,
   * `#[rstest]`, ...): never dead code, however unreferenced. Set only when true.
   */
  test?: true;
}

/** An import as written in the file. */
export interface ImportRef {
  /** Module specifier as written: `./a.js`, `node:fs`, `os.path`, `..pkg.mod`, `github.com/x/y/z`. */
  specifier: string;
  /** Imported bindings: `default`, `*`, or names (Python `from m import a, b`). Empty for side effects. */
  names: string[];
  /** Local name of a namespace import (`import * as ns`, `import m as ns`, Go package alias), when any. */
  namespace?: string;
  /** 1-based line. */
  line: number;
  /**
   * Compiled only for tests: Rust `#[cfg(test)] mod name;` (or `cfg(all(test, ...))`). The module
   * it names is a test module. Set only when true.
   */
  testOnly?: true;
}

/** An import with the repository files it refers to (none for packages outside the repository). */
export interface ResolvedImport extends ImportRef {
  /** Repository-relative paths; a Go package or a Java wildcard import can name several files. */
  resolved: string[];
}

/** One name in the module's public API. */
export interface ExportEntry {
  /** Exported name; `default` for default exports, `*` for `export * from`. */
  name: string;
  /** Kind of the exported symbol; `reexport` for names re-exported from another module. */
  kind: SymbolKind | 'reexport';
  /** Local name when it differs from `name` (`export { a as b }`, `export default foo`). */
  local?: string;
  /** Module specifier of a re-export. */
  source?: string;
}

/** A call from a symbol (or module level) to a callee name, deduplicated per file. */
export interface CallSite {
  /** Qualified caller (`name` or `Container.name`); null for module-level code. */
  caller: string | null;
  /**
   * Callee as written: `name`, `receiver.name` (receiver an identifier, `this` or `self`), or
   * `.name` for a method called on any other expression (`make().name()`).
   */
  callee: string;
}

/** What parsing one file yields; cached per content hash. */
export interface FileParseResult {
  language: LanguageId;
  /** The file does not parse cleanly; what could be extracted is still recorded. */
  hasErrors: boolean;
  symbols: CodeSymbol[];
  imports: ImportRef[];
  exports: ExportEntry[];
  calls: CallSite[];
  /** Command-line flags defined by string literal (commander `.option('--x')`, argparse `add_argument('--x')`). */
  cliFlags: string[];
}

/** One file of the tree. Files in unsupported languages (or too large) carry no parse results. */
export interface IndexedFile {
  /** Repository-relative, `/`-separated. */
  path: string;
  /** sha256 of the content, hex. */
  hash: string;
  size: number;
  /** Modification time when indexed (ms since the epoch); lets the next build skip rehashing. */
  mtimeMs: number;
  lines: number;
  /** null when the language is not supported or the file was too large to parse. */
  language: LanguageId | null;
  /**
   * By naming convention or location (`*.test.ts`, `test_*.py`, `*_test.go`, `tests/`,
   * `conftest.py`, ...), or a Rust module its parent declares under `#[cfg(test)]`.
   */
  isTest: boolean;
  hasErrors: boolean;
  symbols: CodeSymbol[];
  imports: ResolvedImport[];
  exports: ExportEntry[];
  calls: CallSite[];
  cliFlags: string[];
}

/**
 * One row of the risk register (non-test source files in supported languages, tool configuration
 * such as `vite.config.ts`, examples, benchmarks and files declaring nothing left out: see `isRankedCode`).
 */
export interface RiskEntry {
  path: string;
  /** Non-test repository files importing this file (tests count as coverage instead). */
  fanIn: number;
  /** Repository files this file imports. */
  fanOut: number;
  /** Commits touching the file among the last `churnCommits` (0 without git). */
  churn: number;
  lines: number;
  /**
   * Test files covering it by naming convention or by importing it; for Rust, also the test
   * modules it declares (`#[cfg(test)] mod tests;`) and itself when it holds `#[test]` functions.
   */
  tests: string[];
  /** 0-100, see `riskScore`. */
  score: number;
}

interface IndexStats {
  /** Files parsed in this build (new or changed content). */
  parsed: number;
  /** Files whose parse results came from the cache. */
  reused: number;
  /** Files in the cache that no longer exist. */
  removed: number;
  /** Wall time of `buildIndex`. */
  durationMs: number;
  /** Worker threads used for parsing (0: parsed in the calling thread). */
  workers: number;
}

/** The code index of a repository. */
export interface CodeIndex {
  version: number;
  /** Absolute path of the indexed directory. */
  root: string;
  /** ISO 8601 time the build finished. */
  builtAt: string;
  /** When the build started to stat the tree (ms since the epoch); the next build's racy-mtime reference. */
  scannedAt: number;
  /** Whether file listing honoured `.gitignore` and churn came from git history. */
  git: boolean;
  /** Number of commits churn was counted over (0 without git). */
  churnCommits: number;
  /** HEAD when churn was counted (null without git or commits); churn is reused while it stays. */
  gitHead: string | null;
  /** Every listed file, sorted by path. */
  files: IndexedFile[];
  /** File -> repository files it imports (sorted; only files with at least one edge). */
  dependencies: Record<string, string[]>;
  /** File -> repository files importing it (the reverse of `dependencies`). */
  dependents: Record<string, string[]>;
  /** Sorted by score, highest first. */
  risk: RiskEntry[];
  stats: IndexStats;
}

/** Caller symbol id (`path#name` or `path#Container.name`, `path#<module>` for top-level code) -> callee ids. */
export type CallGraph = Record<string, string[]>;
