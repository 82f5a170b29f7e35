/**
 * Resolves import specifiers to repository files, best effort and without reading any file:
 *
 * - TypeScript / JavaScript: relative specifiers, with extension and `index` resolution and the
 *   `.js` -> `.ts` mapping of NodeNext projects; bare specifiers naming a package of the
 *   repository (`workspace-packages.ts`) to its entry's source, a built target (`dist/x.js`)
 *   mapped back to `src/x.ts`. Other bare specifiers (dependencies, path aliases) stay
 *   unresolved.
 * - Python: relative imports (`from .mod import x`, `from . import sub`) and absolute dotted
 *   modules under the repository root, the importing file's directory, or any directory holding
 *   a top-level package; `from pkg import sub` also resolves submodule `pkg/sub.py`.
 * - Go: packages inside a module of the repository (`go.mod` module path + directory): every
 *   non-test `.go` file of the package directory.
 * - Java: `a.b.C` to `.../a/b/C.java`, `a.b.*` to the package directory's files.
 * - Rust: `mod name;` to `name.rs` / `name/mod.rs`; `crate::`, `self::`, `super::` paths to the
 *   longest matching module file.
 */
import { join } from 'node:path/posix';
import type { LanguageId } from '../tree-sitter.js';
import type { ImportRef } from './types.js';
import { packageTargets, splitBareSpecifier, type WorkspacePackage } from './workspace-packages.js';

/** What the repository's manifests say about its modules and packages. */
export interface Manifests {
  goModules: readonly GoModule[];
  packages: readonly WorkspacePackage[];
}

export const NO_MANIFESTS: Manifests = { goModules: [], packages: [] };

/** Built output directories (with an optional module-format level) whose files come from `src/`. */
const BUILT_TARGET = /^(?:dist|lib|build|out)\/(?:(?:esm|cjs|es|mjs|types|src)\/)?(.*?)(?:\.d)?(?:\.[cm]?[jt]sx?)?$/;

export interface GoModule {
  /** Directory of `go.mod`, repository-relative (`''` for the root). */
  dir: string;
  /** The `module` path declared in it. */
  module: string;
}

const JS_EXTENSIONS = ['.ts', '.tsx', '.d.ts', '.js', '.jsx', '.mjs', '.cjs', '.mts', '.cts', '.json'];
const JS_SOURCE_FOR_OUTPUT: Readonly<Record<string, string[]>> = {
  '.js': ['.ts', '.tsx'],
  '.jsx': ['.tsx'],
  '.mjs': ['.mts'],
  '.cjs': ['.cts'],
};

export class ImportResolver {
  private readonly files: ReadonlySet<string>;
  /** Made on first use (Go and Java imports only). */
  private directories: Map<string, string[]> | undefined;
  private names: Map<string, string[]> | undefined;
  private readonly pythonRoots: string[];
  /**
   * JavaScript resolutions by importing directory, then specifier: files of one directory import
   * the same siblings (half of the relative imports of `node_modules` repeat one), and each miss
   * costs up to twenty lookups of strings made for them. Two levels, no key made per import: the
   * directory string is made once per importing file (`lastFrom`), and a string's hash is
   * computed once, so a lookup hashes nothing new.
   */
  private readonly javascriptResolved = new Map<string, Map<string, readonly string[]>>();
  private lastFrom: string | undefined;
  private lastDirectory: Map<string, readonly string[]> | undefined;
  private lastDirectoryPath = '';
  private readonly goModules: readonly GoModule[];
  private readonly packages: ReadonlyMap<string, WorkspacePackage>;
  /** Bare specifiers' resolutions (the same from every file). */
  private readonly bareResolved = new Map<string, readonly string[]>();

  constructor(
    private readonly paths: readonly string[],
    manifests: Manifests,
  ) {
    this.goModules = manifests.goModules;
    this.packages = new Map(manifests.packages.map((pkg) => [pkg.name, pkg]));
    this.files = new Set(paths);
    const roots = new Set<string>(['', 'src', 'lib']);
    for (const path of paths) {
      if (!path.endsWith('/__init__.py')) continue;
      const packageDir = dirOf(path);
      const parent = dirOf(packageDir);
      if (!this.files.has(join(parent, '__init__.py'))) roots.add(parent);
    }
    this.pythonRoots = [...roots];
  }

  private get byDirectory(): Map<string, string[]> {
    if (this.directories === undefined) {
      this.directories = new Map();
      for (const path of this.paths) push(this.directories, dirOf(path), path);
    }
    return this.directories;
  }

  private get byName(): Map<string, string[]> {
    if (this.names === undefined) {
      this.names = new Map();
      for (const path of this.paths) push(this.names, path.slice(path.lastIndexOf('/') + 1), path);
    }
    return this.names;
  }

  /** Repository files `ref` (imported by `from`, a file in `language`) refers to. */
  resolve(from: string, language: LanguageId, ref: ImportRef): string[] {
    switch (language) {
      case 'typescript':
      case 'tsx':
      case 'javascript':
        return this.javascript(from, ref.specifier);
      case 'python':
        return this.python(from, ref);
      case 'go':
        return this.go(ref.specifier);
      case 'java':
        return this.java(ref.specifier);
      case 'rust':
        return this.rust(from, ref.specifier);
    }
  }

  private javascript(from: string, specifier: string): string[] {
    if (!specifier.startsWith('./') && !specifier.startsWith('../') && specifier !== '.' && specifier !== '..')
      return this.bare(specifier);
    let byDirectory = this.lastDirectory;
    if (from !== this.lastFrom || byDirectory === undefined) {
      this.lastDirectoryPath = dirOf(from);
      byDirectory = this.javascriptResolved.get(this.lastDirectoryPath);
      if (byDirectory === undefined)
        this.javascriptResolved.set(this.lastDirectoryPath, (byDirectory = new Map<string, readonly string[]>()));
      this.lastFrom = from;
      this.lastDirectory = byDirectory;
    }
    let resolved = byDirectory.get(specifier);
    if (resolved === undefined) {
      resolved = this.javascriptUncached(this.lastDirectoryPath, specifier);
      byDirectory.set(specifier, resolved);
    }
    return resolved.slice();
  }

  private javascriptUncached(directory: string, specifier: string): string[] {
    // `join` normalises (`..`, `.`, repeated slashes).
    const query = /[?#]/.exec(specifier)?.index;
    const base = join(directory, query === undefined ? specifier : specifier.slice(0, query));
    if (this.files.has(base)) return [base];
    const extension = /\.[cm]?jsx?$/.exec(base)?.[0];
    if (extension !== undefined) {
      const stemmed = base.slice(0, -extension.length);
      for (const source of JS_SOURCE_FOR_OUTPUT[extension] ?? [])
        if (this.files.has(stemmed + source)) return [stemmed + source];
      if (this.files.has(`${stemmed}.d.ts`)) return [`${stemmed}.d.ts`];
    }
    for (const ext of JS_EXTENSIONS) if (this.files.has(base + ext)) return [base + ext];
    for (const ext of JS_EXTENSIONS) if (this.files.has(`${base}/index${ext}`)) return [`${base}/index${ext}`];
    return [];
  }

  private bare(specifier: string): string[] {
    if (this.packages.size === 0) return [];
    let resolved = this.bareResolved.get(specifier);
    if (resolved === undefined) {
      resolved = this.bareUncached(specifier);
      this.bareResolved.set(specifier, resolved);
    }
    return resolved.slice();
  }

  private bareUncached(specifier: string): string[] {
    const split = splitBareSpecifier(specifier.replace(/[?#].*$/, ''));
    const pkg = split === undefined ? undefined : this.packages.get(split[0]);
    if (split === undefined || pkg === undefined) return [];
    const targets = packageTargets(pkg, split[1]);
    if (split[1] === '.' && pkg.exports === null) targets.push('./src/index');
    for (const target of targets) {
      const relative = target.startsWith('./') ? target.slice(2) : target;
      const found = this.javascriptUncached(pkg.dir, `./${relative}`);
      if (found.length > 0) return found;
      const built = BUILT_TARGET.exec(relative);
      if (built?.[1] !== undefined) {
        const source = this.javascriptUncached(pkg.dir, `./src/${built[1]}`);
        if (source.length > 0) return source;
      }
    }
    return [];
  }

  private python(from: string, ref: ImportRef): string[] {
    const specifier = ref.specifier;
    const dots = /^\.*/.exec(specifier)?.[0].length ?? 0;
    const modulePath = specifier.slice(dots).split('.').filter(Boolean).join('/');
    let bases: string[];
    if (dots > 0) {
      let directory = dirOf(from);
      for (let level = 1; level < dots; level++) directory = dirOf(directory);
      bases = [directory];
    } else bases = [...this.pythonRoots, dirOf(from)];
    for (const base of bases) {
      const module = modulePath === '' ? base : join(base, modulePath);
      const moduleFile = this.first([`${module}.py`, `${module}.pyi`, join(module, '__init__.py')]);
      const submodules = ref.names.flatMap((name) =>
        name === '*' ? [] : this.first([join(module, `${name}.py`), join(module, name, '__init__.py')]),
      );
      // `from . import a, b` naming only submodules depends on them, not on the package's `__init__`.
      if (submodules.length > 0 && submodules.length === ref.names.length) return unique(submodules);
      if (moduleFile.length > 0 || submodules.length > 0) return unique([...moduleFile, ...submodules]);
    }
    return [];
  }

  private go(specifier: string): string[] {
    let best: GoModule | undefined;
    for (const module of this.goModules) {
      if (specifier !== module.module && !specifier.startsWith(`${module.module}/`)) continue;
      if (best === undefined || module.module.length > best.module.length) best = module;
    }
    if (best === undefined) return [];
    const directory = join(best.dir, specifier.slice(best.module.length).replace(/^\//, ''));
    return this.packageFiles(directory === '.' ? '' : directory, '.go').filter((path) => !path.endsWith('_test.go'));
  }

  private java(specifier: string): string[] {
    const parts = specifier.split('.');
    if (parts.at(-1) === '*') {
      const suffix = parts.slice(0, -1).join('/');
      for (const [directory, files] of this.byDirectory) {
        if (directory === suffix || directory.endsWith(`/${suffix}`))
          return files.filter((path) => path.endsWith('.java'));
      }
      return [];
    }
    // `a.b.C` or, for static imports, `a.b.C.member`.
    for (let length = parts.length; length >= 2; length--) {
      const suffix = `${parts.slice(0, length).join('/')}.java`;
      const name = `${parts[length - 1] ?? ''}.java`;
      const match = (this.byName.get(name) ?? []).filter((path) => path === suffix || path.endsWith(`/${suffix}`));
      if (match.length > 0) return match.slice(0, 1);
    }
    return [];
  }

  private rust(from: string, specifier: string): string[] {
    const directory = dirOf(from);
    const fileName = from.slice(from.lastIndexOf('/') + 1);
    const moduleDir = ['lib.rs', 'main.rs', 'mod.rs'].includes(fileName)
      ? directory
      : join(directory, fileName.slice(0, -3));
    if (specifier.startsWith('mod ')) {
      const name = specifier.slice(4);
      return this.first([join(moduleDir, `${name}.rs`), join(moduleDir, name, 'mod.rs')]);
    }
    const parts = specifier.split('::');
    let base: string;
    if (parts[0] === 'crate') base = this.crateRoot(from);
    else if (parts[0] === 'self') base = moduleDir;
    else if (parts[0] === 'super') base = dirOf(moduleDir);
    else return [];
    const rest = parts.slice(1).filter((part) => part !== 'super' && part !== 'self');
    for (let length = rest.length; length >= 1; length--) {
      const module = join(base, ...rest.slice(0, length));
      const found = this.first([`${module}.rs`, join(module, 'mod.rs')]);
      if (found.length > 0) return found;
    }
    return [];
  }

  /** `src` of the nearest enclosing crate (the directory of `lib.rs` / `main.rs`). */
  private crateRoot(from: string): string {
    let directory = dirOf(from);
    for (;;) {
      if (this.files.has(join(directory, 'lib.rs')) || this.files.has(join(directory, 'main.rs'))) return directory;
      if (directory === '') return dirOf(from);
      directory = dirOf(directory);
    }
  }

  private packageFiles(directory: string, extension: string): string[] {
    return (this.byDirectory.get(directory) ?? []).filter((path) => path.endsWith(extension));
  }

  private first(candidates: readonly string[]): string[] {
    for (const candidate of candidates) {
      const path = candidate.startsWith('./') ? candidate.slice(2) : candidate;
      if (this.files.has(path)) return [path];
    }
    return [];
  }
}

/** Directory of a repository-relative path, `''` at the root. */
function dirOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? '' : path.slice(0, slash);
}

function push(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** The `module` path of a `go.mod` file's text. */
export function goModulePath(goMod: string): string | undefined {
  return /^\s*module\s+("?)([^\s"]+)\1/m.exec(goMod)?.[2];
}
