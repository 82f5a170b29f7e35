/**
 * The JavaScript packages a repository holds (the `package.json` files with a `name`: a
 * monorepo's workspace packages, whatever tool manages them: npm, yarn, pnpm, bun, lerna, nx), so
 * a bare import of one (`import { parse } from 'remark-parse'`, `'@scope/pkg/sub'`) resolves to its
 * source in the repository rather than staying unresolved as a dependency would. Without that,
 * a monorepo's packages look unrelated to each other: no import edges between them, no
 * dependents for the risk ranking, and no neighbours in a plan's context.
 *
 * A package's entry points come from its `exports` (subpaths and `*` patterns; conditions tried in
 * the order a source-reading tool would: `source`, `development`, `import`, `module`, `node`,
 * `default`, `require`, `types`), else `source`, `module`, `main`, `types` and `index`. Targets
 * usually name built output (`./dist/index.js`); the resolver maps them back to sources.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

export interface WorkspacePackage {
  /** Directory of its `package.json`, repository-relative (`''` for the root). */
  dir: string;
  name: string;
  /** `exports` as subpath (`.`, `./x`, `./x/*`) -> targets in preference order; null without `exports`. */
  exports: ReadonlyMap<string, readonly string[]> | null;
  /** The root entry's targets without `exports` (`source`, `module`, `main`, `types`). */
  main: readonly string[];
}

const ManifestSchema = z.looseObject({
  name: z.string().min(1).optional(),
  exports: z.unknown().optional(),
  source: z.string().optional(),
  module: z.string().optional(),
  main: z.string().optional(),
  types: z.string().optional(),
  typings: z.string().optional(),
});

const CONDITIONS = ['source', 'development', 'import', 'module', 'node', 'default', 'require', 'types'];

export function isPackageJson(path: string): boolean {
  return path === 'package.json' || path.endsWith('/package.json');
}

/**
 * The named packages among `paths` (read from `root`). A name two `package.json` files share (a
 * test fixture copying a real package, say) is left out: which one an import means is unknown.
 */
export async function readWorkspacePackages(root: string, paths: readonly string[]): Promise<WorkspacePackage[]> {
  const manifests = paths.filter(isPackageJson);
  // Read at once (a monorepo has hundreds), judged in path order.
  const texts = await Promise.all(manifests.map((path) => readFile(join(root, path), 'utf8').catch(() => '')));
  const byName = new Map<string, WorkspacePackage | null>();
  for (const [position, path] of manifests.entries()) {
    const text = texts[position] ?? '';
    let manifest: z.infer<typeof ManifestSchema>;
    try {
      const parsed = ManifestSchema.safeParse(JSON.parse(text));
      if (!parsed.success) continue;
      manifest = parsed.data;
    } catch {
      continue; // Not JSON (a template, a fixture of a broken file): not a package.
    }
    if (manifest.name === undefined) continue;
    const dir = path === 'package.json' ? '' : path.slice(0, -'/package.json'.length);
    byName.set(manifest.name, byName.has(manifest.name) ? null : toPackage(dir, manifest.name, manifest));
  }
  return [...byName.values()].filter((pkg) => pkg !== null);
}

function toPackage(dir: string, name: string, manifest: z.infer<typeof ManifestSchema>): WorkspacePackage {
  const main = [manifest.source, manifest.module, manifest.main, manifest.types, manifest.typings].filter(
    (target): target is string => target !== undefined,
  );
  return { dir, name, exports: manifest.exports === undefined ? null : exportsMap(manifest.exports), main };
}

/** `exports` as a subpath map: a string or conditions alone stand for `.`. */
function exportsMap(exports: unknown): Map<string, string[]> {
  const map = new Map<string, string[]>();
  if (typeof exports === 'object' && exports !== null && !Array.isArray(exports)) {
    const entries = Object.entries(exports);
    if (entries.some(([key]) => key.startsWith('.'))) {
      for (const [subpath, value] of entries) if (subpath.startsWith('.')) map.set(subpath, targetsOf(value));
      return map;
    }
  }
  map.set('.', targetsOf(exports));
  return map;
}

/** The target strings of an `exports` value, preferred conditions first. */
function targetsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(targetsOf);
  if (typeof value !== 'object' || value === null) return [];
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  const ordered = [
    ...CONDITIONS.filter((key) => keys.includes(key)),
    ...keys.filter((key) => !CONDITIONS.includes(key)),
  ];
  return ordered.flatMap((key) => targetsOf(record[key]));
}

/**
 * Targets (relative to the package's directory) for `subpath` (`.` or `./x/y`) of `pkg`: from
 * `exports` (exact subpaths, then `*` patterns, the longest prefix first), else the subpath itself
 * (a package without `exports` opens every file), and for `.` its main fields and `index`.
 */
export function packageTargets(pkg: WorkspacePackage, subpath: string): string[] {
  if (pkg.exports !== null) {
    const exact = pkg.exports.get(subpath);
    if (exact !== undefined) return [...exact];
    let best: { prefix: string; suffix: string; targets: readonly string[] } | undefined;
    for (const [pattern, targets] of pkg.exports) {
      const star = pattern.indexOf('*');
      if (star === -1) continue;
      const prefix = pattern.slice(0, star);
      const suffix = pattern.slice(star + 1);
      if (!subpath.startsWith(prefix) || !subpath.endsWith(suffix) || subpath.length < prefix.length + suffix.length)
        continue;
      if (best === undefined || prefix.length > best.prefix.length) best = { prefix, suffix, targets };
    }
    if (best === undefined) return [];
    const matched = subpath.slice(best.prefix.length, subpath.length - best.suffix.length);
    return best.targets.map((target) => target.replaceAll('*', matched));
  }
  return subpath === '.' ? [...pkg.main, './index'] : [subpath];
}

/** `@scope/name/sub/path` -> [`@scope/name`, `./sub/path`]; `name` -> [`name`, `.`]. */
export function splitBareSpecifier(specifier: string): [string, string] | undefined {
  const parts = specifier.split('/');
  const length = specifier.startsWith('@') ? 2 : 1;
  if (parts.length < length || parts.slice(0, length).some((part) => part === '')) return undefined;
  const rest = parts.slice(length).join('/');
  return [parts.slice(0, length).join('/'), rest === '' ? '.' : `./${rest}`];
}
