import { lstat, realpath } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import type { PathPolicy } from '../core/agent.js';
import { ToolError } from './tool-error.js';

/**
 * Confines every path a tool touches to one worktree and to the stage's globs. All methods
 * throw `ToolError` (turned into an error tool result) with a message telling the model what
 * is allowed instead.
 */
export interface FileGuard {
  /** Real absolute path of the worktree (symlinks such as a symlinked tmp dir resolved). */
  readonly root: string;
  /** Resolves a path to read: inside the worktree, outside `.git`, matching `policy.read`. */
  resolveRead(path: string): Promise<string>;
  /** Resolves a path to write: inside the worktree, outside `.git`, matching `policy.write`
   * and not `policy.denyWrite`. The file and its parent directories need not exist yet. */
  resolveWrite(path: string): Promise<string>;
  /** Resolves a directory (or file) to search from, for Glob and Grep: only the worktree and
   * `.git` rules apply, since results are filtered one by one with `allowsRead`. */
  resolveSearchRoot(path: string | undefined): Promise<string>;
  /** Whether a worktree-relative POSIX path may be read under the stage's globs. */
  allowsRead(relativePath: string): boolean;
  /** The worktree-relative POSIX path of an absolute path (`.` for the worktree itself). */
  relative(absolutePath: string): string;
}

interface Confined {
  /** Absolute path with every existing symlink resolved. */
  absolute: string;
  /** Worktree-relative POSIX path of `absolute` ('' for the worktree itself). */
  relative: string;
  /** Worktree-relative POSIX path as written, before resolving symlinks. */
  lexicalRelative: string;
}

type Matcher = (relativePath: string) => boolean;

function toPosix(relativePath: string): string {
  return relativePath.split(path.sep).join('/');
}

/** The path of `target` relative to `base`, or undefined when it is not inside `base`. */
function insideRelative(base: string, target: string): string | undefined {
  const relative = path.relative(base, target);
  if (relative === '') return '';
  if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) return undefined;
  return relative;
}

function isGitPath(relativePath: string): boolean {
  return relativePath.split('/').some((segment) => segment.toLowerCase() === '.git');
}

function compile(globs: readonly string[]): Matcher {
  if (globs.length === 0) return () => false;
  return picomatch([...globs], { dot: true });
}

function errorCode(error: unknown): string | undefined {
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') return error.code;
  return undefined;
}

function describeGlobs(globs: readonly string[]): string {
  return globs.length === 0 ? '(none)' : globs.join(', ');
}

/**
 * Resolves `target` through its nearest existing ancestor: the existing part is resolved with
 * `realpath` (following every symlink in it), the missing tail is appended as written. A
 * dangling symlink is refused, because writing through it would create its target wherever
 * it points.
 */
async function resolveExisting(target: string, shown: string): Promise<string> {
  const missing: string[] = [];
  let current = target;
  for (;;) {
    try {
      const real = await realpath(current);
      return path.join(real, ...missing.reverse());
    } catch (error) {
      const code = errorCode(error);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') {
        const reason = error instanceof Error ? error.message : String(error);
        throw new ToolError(`Cannot resolve '${shown}': ${reason}`, { cause: error });
      }
      const stat = await lstat(current).catch(() => undefined);
      if (stat?.isSymbolicLink()) {
        throw new ToolError(
          `Access denied: '${shown}' goes through a symbolic link whose target does not exist. ` +
            'Use a path to a regular file or directory inside the worktree.',
        );
      }
      const parent = path.dirname(current);
      if (parent === current) return target;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

/**
 * Whether a stage may write a worktree-relative path (POSIX separators): `write` matches it and
 * no `denyWrite` glob does; `.git` is never writable. The guard's rule, for checking what a
 * stage changed by other means (its shell, or a runtime that does not use the guard).
 */
export function createWriteMatcher(policy: PathPolicy): (relativePath: string) => boolean {
  const canWrite = compile(policy.write);
  const denied = compile(policy.denyWrite);
  return (relativePath) =>
    !isGitPath(relativePath) && canWrite(relativePath) && (policy.denyWrite.length === 0 || !denied(relativePath));
}

/**
 * Creates the file guard of one stage. Relative paths resolve against `worktree`; absolute
 * paths are accepted only inside it (spelled with or without its symlinks resolved). A path
 * is refused when it leaves the worktree lexically (`..`, another absolute path) or through a
 * symlink at any component (compared by realpath, including the nearest existing ancestor of
 * a file not created yet), when it lies inside `.git`, or when the stage's globs (picomatch,
 * `dot: true`, on the worktree-relative path) do not allow the access.
 */
export function createFileGuard(worktree: string, policy: PathPolicy): FileGuard {
  const lexicalRoot = path.resolve(worktree);
  let root: string;
  try {
    root = realpathSync(lexicalRoot);
  } catch {
    root = lexicalRoot;
  }
  const canRead = compile(policy.read);
  const canWrite = compile(policy.write);
  const denyMatchers = policy.denyWrite.map((glob) => ({ glob, matches: compile([glob]) }));

  const outside = (shown: string): ToolError =>
    new ToolError(
      `Access denied: '${shown}' is outside the worktree. Only paths inside the worktree ` +
        `(${lexicalRoot}) can be used; give a path relative to it, such as 'src/index.ts'.`,
    );

  async function confine(input: string): Promise<Confined> {
    if (input.trim() === '') throw new ToolError('The path is empty: give a file path relative to the worktree.');
    if (input.includes('\0')) throw new ToolError('The path contains a NUL character.');
    const lexical = path.isAbsolute(input) ? path.normalize(input) : path.resolve(lexicalRoot, input);
    const lexicalRelative = insideRelative(lexicalRoot, lexical) ?? insideRelative(root, lexical);
    if (lexicalRelative === undefined) throw outside(input);
    const absolute = await resolveExisting(lexical, input);
    const realRelative = insideRelative(root, absolute);
    if (realRelative === undefined) {
      throw new ToolError(
        `Access denied: '${input}' goes through a symbolic link that points outside the worktree. ` +
          'Only files whose real location is inside the worktree can be used.',
      );
    }
    const confined = { absolute, relative: toPosix(realRelative), lexicalRelative: toPosix(lexicalRelative) };
    if (isGitPath(confined.relative) || isGitPath(confined.lexicalRelative)) {
      throw new ToolError(
        `Access denied: '${input}' is inside .git. Git metadata cannot be read or changed with ` +
          'these tools; work on the files of the worktree instead.',
      );
    }
    return confined;
  }

  return {
    root,

    async resolveRead(input) {
      const target = await confine(input);
      // The worktree itself is a directory: let the tool say so rather than a glob mismatch.
      if (target.relative === '' || canRead(target.relative)) return target.absolute;
      throw new ToolError(
        `Reading '${target.relative}' is not allowed in this stage. Readable paths: ${describeGlobs(policy.read)}.`,
      );
    },

    async resolveWrite(input) {
      const target = await confine(input);
      if (target.relative === '') {
        throw new ToolError(`'${input}' is the worktree directory itself; give the path of a file inside it.`);
      }
      const names = [...new Set([target.relative, target.lexicalRelative])];
      const denied = denyMatchers.filter(({ matches }) => names.some((name) => matches(name))).map(({ glob }) => glob);
      if (denied.length > 0) {
        throw new ToolError(
          `Writing '${target.relative}' is not allowed in this stage: it is protected by ${denied.join(', ')}. ` +
            `Writable paths: ${describeGlobs(policy.write)}, except ${describeGlobs(policy.denyWrite)}.`,
        );
      }
      if (!canWrite(target.relative)) {
        const except = policy.denyWrite.length > 0 ? `, except ${describeGlobs(policy.denyWrite)}` : '';
        throw new ToolError(
          `Writing '${target.relative}' is not allowed in this stage. Writable paths: ${describeGlobs(policy.write)}${except}.`,
        );
      }
      return target.absolute;
    },

    async resolveSearchRoot(input) {
      if (input === undefined || input === '') return root;
      return (await confine(input)).absolute;
    },

    allowsRead(relativePath) {
      return !isGitPath(relativePath) && canRead(relativePath);
    },

    relative(absolutePath) {
      const relative = insideRelative(root, absolutePath) ?? insideRelative(lexicalRoot, absolutePath);
      if (relative === undefined) return absolutePath;
      return relative === '' ? '.' : toPosix(relative);
    },
  };
}
