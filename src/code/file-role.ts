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

const SCAFFOLDING_PATH = new RegExp(
  [
    /(?:^|\/)docs?\/(?:[^/]+\/)*conf\.py$/.source,
    /(?:^|\/)examples?\//.source,
    /(?:^|\/)(?:setup|noxfile|fabfile)\.py$/.source,
    /(?:^|\/)[^/]+\.config\.[cm]?[jt]s$/.source,
    /(?:^|\/)\.[^/]+rc\.[cm]?js$/.source,
    /(?:^|\/)(?:Gruntfile|gulpfile)\.[cm]?[jt]s$/.source,
  ].join('|'),
);

/** The role a path alone decides (stubs, declaration files, tool configuration), if any. */
function roleByPath(path: string): 'contract' | 'scaffolding' | undefined {
  if (CONTRACT_PATH.test(path)) return 'contract';
  if (SCAFFOLDING_PATH.test(path)) return 'scaffolding';
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
