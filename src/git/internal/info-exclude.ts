import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { RatchetError } from '../../core/errors.js';

/** Appends each pattern not already a line of `file` (creating it and its directory). */
export async function appendMissingLines(file: string, patterns: readonly string[]): Promise<void> {
  let existing = '';
  try {
    existing = await readFile(file, 'utf8');
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'ENOENT')) throw fsError(error, file);
  }
  const present = new Set(existing.split(/\r?\n/).map((line) => line.trim()));
  const missing = [...new Set(patterns.map((pattern) => pattern.trim()))].filter(
    (pattern) => pattern !== '' && !present.has(pattern),
  );
  if (missing.length === 0) return;
  const separator = existing === '' || existing.endsWith('\n') ? '' : '\n';
  try {
    await mkdir(dirname(file), { recursive: true });
    await appendFile(file, `${separator}${missing.join('\n')}\n`);
  } catch (error) {
    throw fsError(error, file);
  }
}

function fsError(error: unknown, file: string): RatchetError {
  const message = error instanceof Error ? error.message : String(error);
  return new RatchetError('git', `Cannot update ${file}: ${message}`, {
    cause: error,
    details: { file },
  });
}
