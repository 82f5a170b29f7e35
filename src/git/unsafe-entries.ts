/**
 * Finds what a run may never commit or bring into the user's branch (`UnsafeEntry`): symbolic
 * links that lead outside the repository, nested repositories and gitlinks. Links are resolved
 * for real, link by link, the way the kernel would, but only ever reading inside the root: a
 * chain such as `a -> d/x/..` with `d/x -> ..` leaves the repository although each target,
 * read alone, stays inside it.
 */
import { lstat, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { UnsafeEntry } from '../core/unsafe-entry.js';
import type { Git } from './git.js';
import type { GitStatus } from './types.js';

/** As the kernel's limit (Linux follows at most 40 links in one lookup). */
const MAX_LINKS = 40;

const GITLINK = 0o160000;

/** The target of the link at a root-relative path, or null when there is no link there (or nothing). */
export type LinkReader = (path: string) => Promise<string | null>;

/**
 * Why `path` (root-relative, `/`-separated; the last component included) resolves outside the
 * root, or null when it stays inside. Every component is looked up with `readLink`, relative to
 * what the components before it resolved to, so a link's target is never followed through the
 * host's file system: an absolute target is outside (once merged it names a place on the user's
 * machine, wherever it points today), as is a `..` above the root, a `.git` component (git's own
 * files) or a chain longer than `MAX_LINKS`. Components that do not exist resolve lexically.
 */
export async function linkEscape(path: string, readLink: LinkReader): Promise<string | null> {
  const resolved: string[] = [];
  let pending = components(path);
  let links = 0;
  while (pending.length > 0) {
    const [part = '', ...rest] = pending;
    pending = rest;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (resolved.length === 0) return 'climbs above the repository root';
      resolved.pop();
      continue;
    }
    if (part.toLowerCase() === '.git') return "leads into '.git'";
    resolved.push(part);
    const target = await readLink(resolved.join('/'));
    if (target === null) continue;
    if (++links > MAX_LINKS) return 'is a loop of symbolic links';
    if (isAbsoluteTarget(target)) return `points to the absolute path ${target}`;
    resolved.pop();
    pending = [...components(target), ...pending];
  }
  return null;
}

function components(path: string): string[] {
  // A backslash is a separator once checked out on Windows.
  return path.split(/[\\/]/);
}

function isAbsoluteTarget(target: string): boolean {
  return target.startsWith('/') || target.startsWith('\\') || /^[A-Za-z]:/.test(target) || target.startsWith('~');
}

/** Reads links of the work tree at `root`, never following one (`lstat`). */
export function diskLinkReader(root: string): LinkReader {
  return async (path) => {
    const full = join(root, path);
    const stats = await lstat(full).catch(() => null);
    return stats?.isSymbolicLink() ? readlink(full) : null;
  };
}

/** Reads links of a committed tree (`Git.symlinksAt`). */
export function treeLinkReader(links: ReadonlyMap<string, string>): LinkReader {
  return (path) => Promise.resolve(links.get(path) ?? null);
}

/**
 * The unsafe entries among `paths` (changed paths of the work tree at `root`, as `git status`
 * lists them; a nested repository shows as `dir/`), looking at each path and the directories on
 * its way: links whose resolution leaves the work tree (`linkEscape`), and directories holding a
 * `.git` (a repository, or a `gitdir:` file pointing at one). Gitlinks in the index are for
 * `unsafeStaged`. Reads nothing outside `root`.
 */
async function unsafeWorkTreeEntries(root: string, paths: readonly string[]): Promise<UnsafeEntry[]> {
  const readLink = diskLinkReader(root);
  // Per directory prefix already looked at: whether the lookup may go below it. Never below a
  // link (the kernel would follow it) or a nested repository.
  const descend = new Map<string, boolean>();
  const found: UnsafeEntry[] = [];
  const visit = async (prefix: string): Promise<boolean> => {
    const stats = await lstat(join(root, prefix)).catch(() => null);
    if (stats === null) return false;
    if (stats.isSymbolicLink()) {
      const escape = await linkEscape(prefix, readLink);
      if (escape !== null) found.push({ kind: 'link-outside', path: prefix, detail: escape });
      return false;
    }
    if (!stats.isDirectory()) return false;
    if ((await lstat(join(root, prefix, '.git')).catch(() => null)) !== null) {
      found.push({ kind: 'nested-repository', path: prefix, detail: `${prefix}/.git exists` });
      return false;
    }
    return true;
  };
  for (const path of paths) {
    const parts = path.split('/').filter((part) => part !== '' && part !== '.');
    for (let depth = 1; depth <= parts.length; depth++) {
      const prefix = parts.slice(0, depth).join('/');
      let goOn = descend.get(prefix);
      if (goOn === undefined) {
        goOn = await visit(prefix);
        descend.set(prefix, goOn);
      }
      if (!goOn) break;
    }
  }
  return found;
}

/**
 * The unsafe entries of `git`'s work tree among `paths` (default: its uncommitted changes, as
 * `git status` lists them), and the gitlinks its index holds that HEAD does not. Without `paths`
 * one `git status` answers both (its entries carry their index modes): this check runs before
 * every checkpoint, and each git process costs the coordinator milliseconds.
 */
export async function unsafeUncommitted(
  git: Git,
  paths?: readonly string[],
  /** The work tree's `git.status({ modes: true })`, when the caller read it with nothing changed since. */
  status?: GitStatus,
): Promise<UnsafeEntry[]> {
  if (paths !== undefined) {
    const [inTree, staged] = await Promise.all([unsafeWorkTreeEntries(git.dir, paths), unsafeStaged(git, 'HEAD')]);
    return [...inTree, ...staged];
  }
  const { files } = status ?? (await git.status({ modes: true }));
  const staged = files
    .filter((file) => file.index !== ' ' && file.index !== '?' && file.indexMode === GITLINK)
    .map((file): UnsafeEntry => ({
      kind: 'gitlink',
      path: file.path,
      detail: `staged as commit ${(file.indexObject ?? '').slice(0, 12)}`,
    }));
  return [
    ...(await unsafeWorkTreeEntries(
      git.dir,
      files.map((file) => file.path),
    )),
    ...staged,
  ];
}

/** Gitlinks the index holds that `commit` does not have (added, or pointing at another commit). */
async function unsafeStaged(git: Git, commit: string): Promise<UnsafeEntry[]> {
  return (await git.stagedChanges(commit))
    .filter((entry) => entry.newMode === GITLINK)
    .map((entry) => ({
      kind: 'gitlink',
      path: entry.path,
      detail: `staged as commit ${entry.newObject.slice(0, 12)}`,
    }));
}

/**
 * What merging `tip` into a branch at `base` would bring in that is unsafe: gitlinks added or
 * changed, paths through a `.git` directory, and symbolic links of `tip` whose resolution in
 * `tip`'s own tree leaves it (absolute targets included) — except a link the base already had,
 * with the same target, that already led outside there (the user's own).
 */
export async function unsafeChanges(git: Git, base: string, tip: string): Promise<UnsafeEntry[]> {
  const found: UnsafeEntry[] = [];
  for (const entry of await git.treeChanges(base, tip)) {
    if (entry.newMode === 0) continue;
    if (entry.path.split('/').some((part) => part.toLowerCase() === '.git')) {
      found.push({ kind: 'nested-repository', path: entry.path, detail: "a path inside a '.git' directory" });
    } else if (entry.newMode === GITLINK) {
      found.push({ kind: 'gitlink', path: entry.path, detail: `commit ${entry.newObject.slice(0, 12)}` });
    }
  }
  const tipLinks = await git.symlinksAt(tip);
  let baseLinks: Map<string, string> | undefined;
  for (const [path, target] of tipLinks) {
    const escape = await linkEscape(path, treeLinkReader(tipLinks));
    if (escape === null) continue;
    baseLinks ??= await git.symlinksAt(base);
    const before = baseLinks.get(path);
    if (before === target && (await linkEscape(path, treeLinkReader(baseLinks))) !== null) continue;
    found.push({ kind: 'link-outside', path, detail: `-> ${target}: ${escape}` });
  }
  return found;
}
