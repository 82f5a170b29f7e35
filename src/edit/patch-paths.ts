/**
 * Path rules shared by patch admission and application: which repository-relative paths a
 * patch may never touch, and which files are dependency lockfiles.
 */

/** Basenames of dependency lockfiles across the ecosystems Ratchet supports. */
const LOCKFILE_NAMES: readonly string[] = [
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lock',
  'bun.lockb',
  'deno.lock',
  'poetry.lock',
  'Pipfile.lock',
  'pdm.lock',
  'uv.lock',
  'Cargo.lock',
  'go.sum',
  'Gemfile.lock',
  'composer.lock',
  'mix.lock',
  'pubspec.lock',
  'Podfile.lock',
  'packages.lock.json',
  'gradle.lockfile',
  'flake.lock',
];

const LOCKFILES = new Set(LOCKFILE_NAMES);

/** True when the basename of `path` is a known dependency lockfile. */
export function isLockfile(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return LOCKFILES.has(base);
}

/**
 * Why `path` (as written in a patch, POSIX separators) could reach outside the work tree or
 * into git's own files, or null when it is an ordinary repository-relative path. Rejected:
 * empty paths, absolute paths (`/x`, `C:\x`, `\\server`), `~` home paths, backslashes (which
 * git on Windows treats as separators), any `..` segment, and any `.git` segment (any case).
 */
export function pathEscapeReason(path: string): string | null {
  if (path.trim() === '') return 'the path is empty';
  if (path.includes('\0')) return 'the path contains a NUL byte';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'the path is absolute';
  if (path.startsWith('~')) return 'the path points into a home directory';
  if (path.includes('\\')) return 'the path contains a backslash';
  const segments = path.split('/');
  if (segments.includes('..')) return "the path contains a '..' segment";
  if (segments.some((segment) => segment.toLowerCase() === '.git')) return "the path is inside '.git'";
  return null;
}

/** Normalises a path a model declared (`./src/x.ts`, `src\\x.ts`) to the form patches use. */
export function normaliseDeclaredPath(path: string): string {
  let result = path.trim().replaceAll('\\', '/');
  while (result.startsWith('./')) result = result.slice(2);
  return result.replace(/\/{2,}/g, '/');
}
