import type { Dirent } from 'node:fs';
import { lstat, mkdir, readdir, readlink, realpath, symlink } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';

/**
 * What a run's worktree gets for the checkout's `node_modules`: one link to it, or a folder of
 * links (see `shareNodeModules`). In a folder, each entry is a link (`target`, `dir` for its
 * type) or a folder of links itself (a scope, `.bin`), never anything else.
 */
export type NodeModulesShare = { kind: 'link'; target: string } | { kind: 'folder'; entries: Map<string, ShareEntry> };

type ShareEntry = { kind: 'link'; target: string; dir: boolean } | { kind: 'folder'; links: Map<string, string> };

/**
 * Shares a checkout's `node_modules` into a run's worktree. Usually one link to the folder. In a
 * workspace (npm, yarn or pnpm workspaces: remark's `packages/*`), `node_modules` also links the
 * workspace's own packages (`remark -> ../packages/remark`): through a link to the checkout's
 * folder those resolve to the checkout's packages, so the tests would import the user's files
 * instead of the run's (or nothing, in the sandbox, which hides the checkout). Then the worktree
 * gets a folder of links instead: a workspace package to the worktree's copy of it, everything
 * else to the checkout's entry (read-only in the sandbox, as the whole folder is), and `.bin`
 * rebuilt with the same relative targets, so a workspace package's program runs the run's code.
 *
 * `from` is the checkout's `node_modules`, `to` where the worktree's goes, `checkout` and
 * `worktree` the roots they belong to.
 */
export async function shareNodeModules(from: string, to: string, checkout: string, worktree: string): Promise<void> {
  await makeShare(await planNodeModules(from, checkout, worktree), to);
}

/** What `shareNodeModules` makes of `from` (the checkout's `node_modules`) for `worktree`. */
export async function planNodeModules(from: string, checkout: string, worktree: string): Promise<NodeModulesShare> {
  const root = await realpath(checkout);
  const folder = await realpath(from);
  /** The worktree's copy of a workspace package an entry links to; undefined for any other entry. */
  const inWorktree = async (entry: string): Promise<string | undefined> => {
    const target = await realpath(entry).catch(() => undefined);
    if (target === undefined || within(target, folder) || !within(target, root)) return undefined;
    return join(worktree, relative(root, target));
  };
  const plan: Array<{ entry: Dirent; names: string[]; workspace: Map<string, string> }> = [];
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const names = entry.name.startsWith('@') && entry.isDirectory() ? await readdir(join(from, entry.name)) : [''];
    const workspace = new Map<string, string>();
    for (const name of names) {
      const copy = await inWorktree(join(from, entry.name, name));
      if (copy !== undefined) workspace.set(name, copy);
    }
    plan.push({ entry, names, workspace });
  }
  if (plan.every(({ workspace }) => workspace.size === 0)) return { kind: 'link', target: from };
  const entries = new Map<string, ShareEntry>();
  for (const { entry, names, workspace } of plan) {
    const source = join(from, entry.name);
    if (entry.name === '.bin' && entry.isDirectory())
      entries.set(entry.name, { kind: 'folder', links: await binLinks(source) });
    else if (workspace.has(''))
      entries.set(entry.name, { kind: 'link', target: workspace.get('') ?? source, dir: true });
    else if (workspace.size > 0) {
      // A scope holding workspace packages (`@scope/core -> ../../packages/core`): entry by entry.
      const links = new Map(names.map((name) => [name, workspace.get(name) ?? join(source, name)]));
      entries.set(entry.name, { kind: 'folder', links });
    } else entries.set(entry.name, { kind: 'link', target: source, dir: entry.isDirectory() });
  }
  return { kind: 'folder', entries };
}

/** Makes `share` at `to`, where nothing is. */
export async function makeShare(share: NodeModulesShare, to: string): Promise<void> {
  if (share.kind === 'link') {
    await symlink(share.target, to, 'dir');
    return;
  }
  await mkdir(to);
  for (const [name, entry] of share.entries) {
    const target = join(to, name);
    if (entry.kind === 'link') await symlink(entry.target, target, entry.dir ? 'dir' : 'file');
    else {
      await mkdir(target);
      for (const [inner, link] of entry.links) await symlink(link, join(target, inner));
    }
  }
}

/**
 * Whether `to` is exactly `share`: the same link, or a real folder with the same entries, each
 * the same link or folder of links, and nothing else. Reads links (lstat, readlink), never follows one.
 */
export async function matchesShare(share: NodeModulesShare, to: string): Promise<boolean> {
  if (share.kind === 'link') return isLink(to, share.target);
  if (!(await isFolderOf(to, [...share.entries.keys()], isToolCache))) return false;
  for (const [name, entry] of share.entries) {
    const path = join(to, name);
    if (entry.kind === 'link') {
      if (!(await isLink(path, entry.target))) return false;
    } else {
      if (!(await isFolderOf(path, [...entry.links.keys()]))) return false;
      for (const [inner, link] of entry.links) if (!(await isLink(join(path, inner), link))) return false;
    }
  }
  return true;
}

/** Whether `path` is a symbolic link to exactly `target`. */
async function isLink(path: string, target: string): Promise<boolean> {
  const found = await readlink(path).catch(() => undefined);
  return found === target;
}

/**
 * What a tool run outside the sandbox may add to a workspace's folder of links (`--no-sandbox`;
 * inside it the folder is read-only): a dot-named cache such as vitest's `.vite` or `.cache`. No
 * package is named with a leading dot, so module resolution never reaches one; `.bin` (programs
 * on PATH) is never such an entry.
 */
function isToolCache(name: string): boolean {
  return name.startsWith('.') && name !== '.bin';
}

/** Whether `path` is a directory holding exactly `names`, besides entries `extra` allows. */
async function isFolderOf(
  path: string,
  names: readonly string[],
  extra: (name: string) => boolean = () => false,
): Promise<boolean> {
  const stats = await lstat(path).catch(() => undefined);
  if (stats?.isDirectory() !== true) return false;
  const expected = new Set(names);
  const found = (await readdir(path)).filter((name) => expected.has(name) || !extra(name));
  return found.length === names.length && names.every((name) => found.includes(name));
}

/**
 * `.bin` with each program linked as npm links it (`../remark-cli/cli.js`), now relative to the
 * worktree's `node_modules`: a workspace package's program is the worktree's. A program that is
 * no link (a shim file) is linked where it is.
 */
async function binLinks(from: string): Promise<Map<string, string>> {
  const links = new Map<string, string>();
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const link = entry.isSymbolicLink() ? await readlink(source) : undefined;
    links.set(entry.name, link !== undefined && !isAbsolute(link) ? link : source);
  }
  return links;
}

function within(path: string, dir: string): boolean {
  const inside = relative(dir, path);
  return inside === '' || (!inside.startsWith('..') && !isAbsolute(inside));
}
