/**
 * The file tree to index: `git ls-files` in a git repository (so `.gitignore` applies), else a
 * glob of everything; in both cases minus the `excludes` globs, `.git/` and the cache directory.
 */
import { lstatSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import picomatch from 'picomatch';
import { pathUnderRoot } from './path-under-root.js';

export interface ListedFile {
  path: string;
  size: number;
  mtimeMs: number;
}

export interface ListFilesOptions {
  root: string;
  excludes: readonly string[];
  useGit: boolean;
  /** Absolute cache directory; excluded when it lies under `root`. */
  cacheDir: string;
  signal?: AbortSignal;
}

/**
 * Directories of tool caches and installed packages, left out of a tree that is not in git: one
 * pattern (`**\/{node_modules,.venv,...}/**`), as tinyglobby tries every ignore pattern on every
 * path and directory it meets, and each try allocates picomatch's result object (nine patterns
 * were 10 MB of a cold index's allocations on the bench corpus).
 */
const GENERATED_DIRECTORIES = `**/{${[
  'node_modules',
  '.venv',
  'venv',
  '__pycache__',
  '.pytest_cache',
  '.mypy_cache',
  '.ruff_cache',
  '.tox',
  '.nox',
].join(',')}}/**`;

/** Excludes as given, plus `.git/` and the cache directory when it lies under `root`. */
function allExcludes(options: Pick<ListFilesOptions, 'root' | 'excludes' | 'cacheDir'>): string[] {
  const excludes = ['**/.git/**', ...options.excludes];
  const cacheRelative = relative(options.root, options.cacheDir).split(sep).join('/');
  if (cacheRelative !== '' && !cacheRelative.startsWith('..')) excludes.push(`${cacheRelative}/**`);
  return excludes;
}

/**
 * Regular files under `root`, sorted by path, with their size and modification time. Symbolic
 * links are left out (lstat): one pointing outside the repository would otherwise put that
 * file's content in the index and in the model's context; one pointing inside duplicates its
 * target, which is indexed by its own path.
 */
export async function listFiles(options: ListFilesOptions): Promise<ListedFile[]> {
  const excludes = allExcludes(options);
  let paths: string[];
  // Each way loads its own modules only (git's wrapper and process runner, or tinyglobby): about
  // 10 ms of a fresh process's start each, which the other way never uses.
  if (options.useGit) {
    const isExcluded = picomatch(excludes, { dot: true });
    const { gitListFiles } = await import('./git-files.js');
    paths = (await gitListFiles(options.root, options.signal)).filter((path) => !isExcluded(path));
  } else {
    const { glob } = await import('tinyglobby');
    paths = await glob('**/*', {
      cwd: options.root,
      // No .gitignore to say so: the caches and installed packages tools leave in a project.
      ignore: [...excludes, GENERATED_DIRECTORIES],
      dot: true,
      onlyFiles: true,
      followSymbolicLinks: false,
      expandDirectories: false,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  }
  paths.sort();
  const files: ListedFile[] = [];
  // Synchronous stats: thousands of tiny syscalls are several times faster without promises.
  for (const path of paths) {
    const stats = lstatSync(pathUnderRoot(options.root, path), { throwIfNoEntry: false });
    if (stats?.isFile()) files.push({ path, size: stats.size, mtimeMs: stats.mtimeMs });
  }
  return files;
}

/**
 * The previous listing with `changedPaths` (added, modified or deleted) stat'ed again, without
 * walking the tree. Changed paths matching the excludes are left out; `.gitignore` is not
 * consulted, so callers pass only paths they know belong to the tree (e.g. from `git diff`).
 */
export function applyChangedPaths(
  previous: readonly ListedFile[],
  changedPaths: readonly string[],
  options: Pick<ListFilesOptions, 'root' | 'excludes' | 'cacheDir'>,
): ListedFile[] {
  const isExcluded = picomatch(allExcludes(options), { dot: true });
  const restat = new Map<string, ListedFile | null>();
  for (const raw of changedPaths) {
    const path = raw.split(sep).join('/').replace(/^\.\//, '');
    if (path === '' || isExcluded(path)) continue;
    const stats = lstatSync(join(options.root, path), { throwIfNoEntry: false });
    restat.set(path, stats?.isFile() ? { path, size: stats.size, mtimeMs: stats.mtimeMs } : null);
  }
  const files: ListedFile[] = [];
  for (const file of previous) {
    const changed = restat.get(file.path);
    if (changed === undefined) files.push(file);
    else {
      if (changed !== null) files.push(changed);
      restat.delete(file.path);
    }
  }
  const added = [...restat.values()].filter((file): file is ListedFile => file !== null);
  if (added.length === 0) return files;
  return [...files, ...added].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
