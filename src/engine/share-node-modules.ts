import type { Dirent } from 'node:fs';
import { mkdir, readdir, readlink, realpath, symlink } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';

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
  const root = await realpath(checkout);
  const folder = await realpath(from);
  /** The worktree's copy of a workspace package an entry links to; undefined for any other entry. */
  const inWorktree = async (entry: string): Promise<string | undefined> => {
    const target = await realpath(entry).catch(() => undefined);
    if (target === undefined || within(target, folder) || !within(target, root)) return undefined;
    return join(worktree, relative(root, target));
  };
  const entries = await readdir(from, { withFileTypes: true });
  const plan: Array<{ entry: Dirent; workspace: Map<string, string> }> = [];
  for (const entry of entries) {
    const names = entry.name.startsWith('@') && entry.isDirectory() ? await readdir(join(from, entry.name)) : [''];
    const workspace = new Map<string, string>();
    for (const name of names) {
      const copy = await inWorktree(join(from, entry.name, name));
      if (copy !== undefined) workspace.set(name, copy);
    }
    plan.push({ entry, workspace });
  }
  if (plan.every(({ workspace }) => workspace.size === 0)) {
    await symlink(from, to, 'dir');
    return;
  }
  await mkdir(to);
  for (const { entry, workspace } of plan) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.name === '.bin' && entry.isDirectory()) await mirrorBin(source, target);
    else if (workspace.has('')) await symlink(workspace.get('') ?? source, target, 'dir');
    else if (workspace.size > 0) {
      // A scope holding workspace packages (`@scope/core -> ../../packages/core`): entry by entry.
      await mkdir(target);
      for (const name of await readdir(source))
        await symlink(workspace.get(name) ?? join(source, name), join(target, name), 'dir');
    } else await symlink(source, target, entry.isDirectory() ? 'dir' : 'file');
  }
}

/**
 * `.bin` with each program linked as npm links it (`../remark-cli/cli.js`), now relative to the
 * worktree's `node_modules`: a workspace package's program is the worktree's. A program that is
 * no link (a shim file) is linked where it is.
 */
async function mirrorBin(from: string, to: string): Promise<void> {
  await mkdir(to);
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const link = entry.isSymbolicLink() ? await readlink(source) : undefined;
    await symlink(link !== undefined && !isAbsolute(link) ? link : source, join(to, entry.name));
  }
}

function within(path: string, dir: string): boolean {
  const inside = relative(dir, path);
  return inside === '' || (!inside.startsWith('..') && !isAbsolute(inside));
}
