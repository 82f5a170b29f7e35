import { randomBytes } from 'node:crypto';
import { chmod, lstat, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from '../tool-error.js';

/**
 * Refuses a file with more than one hard link: the same file is also somewhere else (planted by a
 * command: `ln ~/project/.env notes.txt`), and changing it would change that other name too.
 */
export async function refuseHardLinked(absolute: string, shown: string): Promise<void> {
  const info = await lstat(absolute).catch(() => undefined);
  if (info?.isFile() && info.nlink > 1) {
    throw new ToolError(
      `Access denied: ${shown} has ${info.nlink} hard links, so it is also a file elsewhere that this change would ` +
        'alter. Delete it (rm) and write a new file instead.',
    );
  }
}

/**
 * Writes `content` to `absolute` through a temporary file in the same directory and a rename:
 * the rename gives the name a new file, so another hard link to the old one (made after any
 * check) keeps its content, and a crash never leaves half a file. The file's permissions are
 * kept (an executable script stays executable).
 */
export async function replaceFile(absolute: string, content: string): Promise<void> {
  const existing = await lstat(absolute).catch(() => undefined);
  const temporary = path.join(
    path.dirname(absolute),
    `.${path.basename(absolute)}.ratchet-${randomBytes(6).toString('hex')}.tmp`,
  );
  try {
    await writeFile(temporary, content, { encoding: 'utf8', flag: 'wx' });
    if (existing?.isFile()) await chmod(temporary, existing.mode & 0o7777);
    await rename(temporary, absolute);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
