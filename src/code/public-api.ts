/**
 * Public API snapshots (seed 002, section 9.3): what each module exports, with kinds and
 * signatures, plus the command-line flags the code defines — so a refactor batch that removes or
 * changes any of them can be failed unless API changes are allowed.
 *
 * - TypeScript / JavaScript: the module's exports (`export`, re-exports resolved to their
 *   declarations where the target is in the repository, CommonJS `exports.x`).
 * - Python: `__all__` when it is a literal list, else the public top-level names.
 * - Go, Java, Rust: exported (capitalised, `public`, `pub`) top-level declarations.
 * - Public methods of exported classes count as `Class.method`.
 * - CLI flags: commander `.option('--x')` / `.requiredOption(...)` and argparse
 *   `add_argument('--x')` string literals, repository-wide (moving a flag's definition to another
 *   file is not a change).
 *
 * Test files are not part of the API.
 */
import type { LanguageId } from './tree-sitter.js';
import type { CodeIndex, CodeSymbol, IndexedFile, SymbolKind } from './index/types.js';

const PUBLIC_API_SNAPSHOT_VERSION = 1;

interface ApiEntry {
  kind: SymbolKind | 'reexport';
  /** The declaration's signature; overloads are joined with ` ; `. */
  signature: string;
}

interface ModuleApi {
  language: LanguageId;
  /** Exported name (`Class.method` for methods) -> entry, sorted by name. */
  exports: Record<string, ApiEntry>;
}

export interface PublicApiSnapshot {
  version: number;
  /** Repository-relative module path -> its API, sorted by path; modules without exports are left out. */
  modules: Record<string, ModuleApi>;
  /** Command-line flags defined anywhere outside tests, sorted. */
  cliFlags: string[];
}

/** Differences between two snapshots, as `path#name` and `cli <flag>` keys, each list sorted. */
export interface ApiComparison {
  /** In the old snapshot only: breaking. */
  removed: string[];
  /** Kind or signature differs: breaking. */
  changed: string[];
  /** In the new snapshot only: compatible. */
  added: string[];
}

/** The public API of an index, or of a list of indexed files. */
export function snapshotPublicApi(source: CodeIndex | readonly IndexedFile[]): PublicApiSnapshot {
  const files = isIndex(source) ? source.files : source;
  const byPath = new Map(files.map((file) => [file.path, file]));
  const modules: Record<string, ModuleApi> = {};
  const flags = new Set<string>();
  for (const file of [...files].sort((a, b) => compare(a.path, b.path))) {
    if (file.isTest || file.language === null) continue;
    for (const flag of file.cliFlags) flags.add(flag);
    const exports = moduleExports(file, byPath);
    if (Object.keys(exports).length > 0) modules[file.path] = { language: file.language, exports };
  }
  return { version: PUBLIC_API_SNAPSHOT_VERSION, modules, cliFlags: [...flags].sort(compare) };
}

/** What changed from `before` to `after`; `removed` and `changed` are breaking. */
export function compareApi(before: PublicApiSnapshot, after: PublicApiSnapshot): ApiComparison {
  const old = flatten(before);
  const now = flatten(after);
  const removed: string[] = [];
  const changed: string[] = [];
  const added: string[] = [];
  for (const [key, value] of old) {
    const current = now.get(key);
    if (current === undefined) removed.push(key);
    else if (current !== value) changed.push(key);
  }
  for (const key of now.keys()) if (!old.has(key)) added.push(key);
  return { removed: removed.sort(compare), changed: changed.sort(compare), added: added.sort(compare) };
}

function isIndex(source: CodeIndex | readonly IndexedFile[]): source is CodeIndex {
  return !Array.isArray(source);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function flatten(snapshot: PublicApiSnapshot): Map<string, string> {
  const entries = new Map<string, string>();
  for (const [path, module] of Object.entries(snapshot.modules)) {
    for (const [name, entry] of Object.entries(module.exports))
      entries.set(`${path}#${name}`, `${entry.kind} ${entry.signature}`);
  }
  for (const flag of snapshot.cliFlags) entries.set(`cli ${flag}`, flag);
  return entries;
}

function moduleExports(file: IndexedFile, byPath: ReadonlyMap<string, IndexedFile>): Record<string, ApiEntry> {
  const entries = new Map<string, ApiEntry>();
  for (const entry of file.exports) {
    const local = entry.local ?? entry.name;
    if (entry.kind === 'reexport') {
      if (entry.name === '*') {
        entries.set(`* from ${entry.source ?? ''}`, {
          kind: 'reexport',
          signature: `export * from '${entry.source ?? ''}'`,
        });
        continue;
      }
      const declared = reexported(file, entry.source, local, byPath, 0);
      entries.set(
        entry.name,
        declared ?? {
          kind: 'reexport',
          signature: `export { ${local === entry.name ? local : `${local} as ${entry.name}`} } from '${entry.source ?? ''}'`,
        },
      );
      continue;
    }
    const declared = declaration(file, local);
    entries.set(
      entry.name,
      declared === undefined ? { kind: entry.kind, signature: local } : { ...declared, kind: entry.kind },
    );
    if (entry.kind === 'class' || entry.kind === 'interface') {
      for (const method of file.symbols) {
        if (method.container === local && method.exported)
          entries.set(`${entry.name}.${method.name}`, { kind: method.kind, signature: method.signature });
      }
    }
  }
  return Object.fromEntries([...entries].sort(([a], [b]) => compare(a, b)));
}

/** Follows a re-export (through barrel files, a few levels deep) to the declaration it names. */
function reexported(
  file: IndexedFile,
  source: string | undefined,
  name: string,
  byPath: ReadonlyMap<string, IndexedFile>,
  depth: number,
): ApiEntry | undefined {
  const targetPath = file.imports.find((ref) => ref.specifier === source)?.resolved[0];
  const target = targetPath === undefined ? undefined : byPath.get(targetPath);
  if (target === undefined || depth > 4) return undefined;
  const entry = target.exports.find((candidate) => candidate.name === name);
  const local = entry?.local ?? name;
  if (entry?.kind === 'reexport') return reexported(target, entry.source, local, byPath, depth + 1);
  const declared = declaration(target, local);
  return declared !== undefined && entry !== undefined ? { ...declared, kind: entry.kind } : declared;
}

/** Kind and signature of the top-level declaration(s) named `name` in `file`. */
function declaration(file: IndexedFile | undefined, name: string): ApiEntry | undefined {
  const symbols: CodeSymbol[] =
    file?.symbols.filter((symbol) => symbol.container === undefined && symbol.name === name) ?? [];
  const first = symbols[0];
  if (first === undefined) return undefined;
  return { kind: first.kind, signature: symbols.map((symbol) => symbol.signature).join(' ; ') };
}
