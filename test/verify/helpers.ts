import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

/** The repository root (for the project's own node_modules). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const FIXTURES = path.join(REPO_ROOT, 'test/verify/fixtures');

const created: string[] = [];
afterAll(async () => {
  await Promise.all(created.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Creates a temporary project from `files` (path -> content); removed after the test file. */
export async function makeProject(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'ratchet-verify-'));
  created.push(root);
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), content);
  }
  return root;
}

/** Links packages from the repository's node_modules into a temporary project. */
export async function linkPackages(root: string, names: string[]): Promise<void> {
  await mkdir(path.join(root, 'node_modules'), { recursive: true });
  for (const name of names) {
    // A scoped package (`@types/node`) needs its scope directory.
    await mkdir(path.dirname(path.join(root, 'node_modules', name)), { recursive: true });
    await symlink(path.join(REPO_ROOT, 'node_modules', name), path.join(root, 'node_modules', name));
  }
}
