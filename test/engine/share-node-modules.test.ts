/**
 * A workspace's node_modules (npm, yarn or pnpm workspaces: remark's packages/*) links the
 * workspace's own packages. Shared into a run's worktree, those links must lead to the
 * worktree's copies (the run's code), everything else to the checkout's installed packages.
 */
import { lstatSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shareNodeModules } from '../../src/engine/share-node-modules.js';

let root: string;
let checkout: string;
let worktree: string;

async function write(base: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(base, path)), { recursive: true });
    await writeFile(join(base, path), text);
  }
}

async function link(base: string, links: Record<string, string>): Promise<void> {
  for (const [path, target] of Object.entries(links)) {
    await mkdir(dirname(join(base, path)), { recursive: true });
    await symlink(target, join(base, path));
  }
}

const PACKAGES = { 'packages/words/index.js': 'export {};\n', 'packages/core/cli.js': '#!/usr/bin/env node\n' };

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-share-')));
  checkout = join(root, 'checkout');
  worktree = join(root, 'worktree');
  await write(checkout, { ...PACKAGES, 'node_modules/dep/index.js': 'export {};\n', 'node_modules/dep/bin.js': '' });
  await write(worktree, PACKAGES);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('shareNodeModules', () => {
  it('links a workspace package to the worktree copy, other packages and programs to the checkout', async () => {
    await link(checkout, {
      'node_modules/words': '../packages/words',
      'node_modules/@scope/core': '../../packages/core',
      'node_modules/.bin/core': '../@scope/core/cli.js',
      'node_modules/.bin/dep': '../dep/bin.js',
    });
    await write(checkout, { 'node_modules/@scope/other/index.js': '' });
    const to = join(worktree, 'node_modules');
    await shareNodeModules(join(checkout, 'node_modules'), to, checkout, worktree);

    expect(lstatSync(to).isDirectory()).toBe(true);
    expect(realpathSync(join(to, 'words'))).toBe(join(worktree, 'packages/words'));
    expect(realpathSync(join(to, '@scope/core'))).toBe(join(worktree, 'packages/core'));
    expect(realpathSync(join(to, '@scope/other'))).toBe(join(checkout, 'node_modules/@scope/other'));
    expect(realpathSync(join(to, 'dep'))).toBe(join(checkout, 'node_modules/dep'));
    expect(realpathSync(join(to, '.bin/core'))).toBe(join(worktree, 'packages/core/cli.js'));
    expect(realpathSync(join(to, '.bin/dep'))).toBe(join(checkout, 'node_modules/dep/bin.js'));
  });

  it('links the whole folder when no entry is a workspace package', async () => {
    await link(checkout, { 'node_modules/.bin/dep': '../dep/bin.js' });
    const to = join(worktree, 'node_modules');
    await shareNodeModules(join(checkout, 'node_modules'), to, checkout, worktree);
    expect(lstatSync(to).isSymbolicLink()).toBe(true);
    expect(realpathSync(to)).toBe(join(checkout, 'node_modules'));
  });
});
