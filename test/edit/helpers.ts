import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { TempRepo } from '../support/temp-repo.js';

/** A change to make in the work tree: new text, `null` to delete, bytes, a rename or a mode. */
export type Change = string | null | Buffer | { renameTo: string } | { mode: number };

/**
 * Makes `changes` in `repo`, returns `git diff --cached --binary -M` of them (real git output),
 * then resets the work tree to HEAD so the diff applies to it again.
 */
export async function realDiff(
  repo: TempRepo,
  changes: Record<string, Change>,
  extraArgs: string[] = [],
): Promise<string> {
  for (const [path, change] of Object.entries(changes)) {
    const file = join(repo.dir, path);
    if (change === null) {
      await rm(file);
    } else if (typeof change === 'string' || Buffer.isBuffer(change)) {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, change);
    } else if ('renameTo' in change) {
      await mkdir(dirname(join(repo.dir, change.renameTo)), { recursive: true });
      repo.run('mv', path, change.renameTo);
    } else {
      await chmod(file, change.mode);
    }
  }
  repo.run('add', '-A');
  const diff = repo.run('diff', '--cached', '--binary', '-M', ...extraArgs);
  repo.run('reset', '--hard', '--quiet');
  repo.run('clean', '-fdq');
  return `${diff}\n`;
}

/** `count` numbered lines, `prefix1\n` ... */
export function numberedLines(count: number, prefix = 'line'): string {
  return Array.from({ length: count }, (_, i) => `${prefix}${i + 1}\n`).join('');
}
