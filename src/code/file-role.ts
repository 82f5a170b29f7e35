/**
 * What an indexed source file is for, as the refactor planner sees it: code to refactor and to
 * test, a test, a contract, or scaffolding.
 *
 * - A contract declares types and nothing runs: a Python stub (`more.pyi` mirroring `more.py`),
 *   a declaration file (`.d.ts`, `.d.mts`, `.d.cts`), or a TypeScript module of types only
 *   (`type`, `interface`, `const enum`, `declare ...`: defu's `src/types.ts`). There is nothing to
 *   test in it, and splitting it apart from the code it describes helps nobody.
 * - Scaffolding documents the project or configures its tools rather than being its code:
 *   Sphinx's `docs/conf.py`, `examples/`, `setup.py`, `noxfile.py`, `vite.config.ts`,
 *   `.eslintrc.js`. (pytest's `conftest.py` is test infrastructure: a test, see `isTestPath`.)
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { IndexedFile } from './index/types.js';

export type FileRole = 'code' | 'test' | 'contract' | 'scaffolding';

const CONTRACT_PATH = /\.(?:pyi|d\.[cm]?ts)$/;

/**
 * Tool configuration by its well-known names: the `<tool>.config.*` convention (vite, vitest, jest,
 * eslint, rollup, tsup, webpack, playwright, tailwind, next, nuxt, astro, unbuild's
 * `build.config.ts`), with a usual variant or environment before the extension (`vitest.config.e2e.ts`; a
 * name of one's own there, `app.config.helpers.ts`, is code),
 * the older `<tool>.conf.js` (karma, protractor), rc files (`.eslintrc.cjs`, `.mocharc.js`),
 * vitest workspaces, task runners (Gruntfile, gulpfile, Jakefile), a config in a tool's hidden
 * folder (`.vitepress/config.ts`, `.storybook/main.ts`), and Python's packaging, session and Sphinx
 * files (`setup.py`, `noxfile.py`, `fabfile.py`, `docs/conf.py`).
 */
const CONFIGURATION_PATH = new RegExp(
  [
    /(?:^|\/)docs?\/(?:[^/]+\/)*conf\.py$/.source,
    /(?:^|\/)(?:setup|noxfile|fabfile)\.py$/.source,
    /(?:^|\/)[^/]+\.(?:config|conf)(?:\.(?:e2e|unit|integration|browser|node|dev|prod|test|base|common|shared|local|ci))?\.[cm]?[jt]s$/
      .source,
    /(?:^|\/)\.[^/]+rc\.[cm]?[jt]s$/.source,
    /(?:^|\/)vitest\.workspace\.[cm]?[jt]s$/.source,
    /(?:^|\/)(?:[Gg]runtfile|[Gg]ulpfile|[Jj]akefile)\.[cm]?[jt]s$/.source,
    /(?:^|\/)\.(?:vitepress|vuepress|storybook|docusaurus)\/[^/]+\.[cm]?[jt]sx?$/.source,
  ].join('|'),
);

/** Examples of use: documentation, not the project's code. */
const EXAMPLE_PATH = /(?:^|\/)examples?\//;

/**
 * Benchmarks: `benchmarks/`, `bench/`, `bench_omd.py` (boltons's `misc/`), `parse_bench.py`,
 * vitest's `parse.bench.ts`. They measure the code; they are not part of it.
 */
const BENCHMARK_PATH = /(?:^|\/)(?:benchmarks?|bench)\/|(?:^|\/)bench_[^/]+\.py$|_bench\.py$|\.bench\.[cm]?[jt]sx?$/;

/**
 * Whether a path alone makes a file scaffolding rather than the project's code: a tool's
 * configuration (see `CONFIGURATION_PATH`), an example or a benchmark. Nothing a user refactors
 * or tests first, so the risk register leaves it out.
 */
export function isScaffoldingPath(path: string): boolean {
  return CONFIGURATION_PATH.test(path) || EXAMPLE_PATH.test(path) || BENCHMARK_PATH.test(path);
}

/**
 * Whether the risk register ranks an indexed (non-test) file: the project's code, not scaffolding
 * by its path, and declaring, importing, exporting or calling something. A file that does none of
 * that (Go's `doc.go`, only a package comment; an empty `__init__.py`) has nothing to change:
 * golang-lru's `doc.go` ranked among its riskiest files, its fan-in that of its whole package.
 */
export function isRankedCode(file: Pick<IndexedFile, 'path' | 'symbols' | 'imports' | 'exports' | 'calls'>): boolean {
  if (isScaffoldingPath(file.path)) return false;
  return file.symbols.length > 0 || file.imports.length > 0 || file.exports.length > 0 || file.calls.length > 0;
}

/** The role a path alone decides (stubs, declaration files, tool configuration), if any. */
function roleByPath(path: string): 'contract' | 'scaffolding' | undefined {
  if (CONTRACT_PATH.test(path)) return 'contract';
  if (isScaffoldingPath(path)) return 'scaffolding';
  return undefined;
}

type RoleFacts = Pick<IndexedFile, 'path' | 'language' | 'isTest' | 'symbols' | 'exports' | 'calls'>;

/**
 * The role of an indexed file. The source text (from `root`) is read only for a TypeScript
 * module that could be types-only but declares a function, class or value: is it `declare`d?
 */
export async function fileRole(file: RoleFacts, root: string): Promise<FileRole> {
  if (file.isTest) return 'test';
  const byPath = roleByPath(file.path);
  if (byPath !== undefined) return byPath;
  if (!mayBeTypesOnly(file)) return 'code';
  const values = file.symbols.filter((symbol) => symbol.container === undefined && !isTypeSymbol(symbol));
  if (values.length === 0) return 'contract';
  let text: string;
  try {
    text = await readFile(join(root, file.path), 'utf8');
  } catch {
    return 'code';
  }
  return isTypesOnlyText(values, text) ? 'contract' : 'code';
}

/** A TypeScript module with declarations, no calls, and no export of anything but its own. */
function mayBeTypesOnly(file: RoleFacts): boolean {
  return (
    (file.language === 'typescript' || file.language === 'tsx') &&
    file.symbols.length > 0 &&
    file.calls.length === 0 &&
    file.exports.every((entry) => entry.kind !== 'reexport')
  );
}

/** A type alias, an interface or a `const enum` (erased); a plain `enum` is an object at run time. */
function isTypeSymbol(symbol: IndexedFile['symbols'][number]): boolean {
  return (
    symbol.kind === 'interface' ||
    (symbol.kind === 'type' && !/^(?:export\s+)?(?:declare\s+)?enum\b/.test(symbol.signature))
  );
}

const AMBIENT = /^\s*(?:export\s+)?(?:default\s+)?declare\s/;

/**
 * Whether every value-like declaration is ambient (`declare function f(): void;`, `export declare
 * const x: number;`): the line it starts on says so.
 */
function isTypesOnlyText(values: readonly Pick<IndexedFile['symbols'][number], 'startLine'>[], text: string): boolean {
  const lines = text.split('\n');
  return values.every((symbol) => AMBIENT.test(lines[symbol.startLine - 1] ?? ''));
}
