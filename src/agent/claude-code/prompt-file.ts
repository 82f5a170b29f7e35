import { createHash, randomUUID } from 'node:crypto';
import { access, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StageName } from '../../core/stages.js';
import { RatchetError } from '../../core/errors.js';

/** Hex characters of the SHA-256 kept in prompt file names. */
const HASH_LENGTH = 12;

/** `<stage>-<sha256 prefix>.txt`: the name changes exactly when the prompt does. */
export function promptFileName(stage: StageName, systemPrompt: string): string {
  const hash = createHash('sha256').update(systemPrompt).digest('hex').slice(0, HASH_LENGTH);
  return `${stage.toLowerCase()}-${hash}.txt`;
}

/**
 * Writes a stage's system prompt to a content-addressed (hence versioned) file for
 * `--system-prompt-file` and returns its path. An existing file is kept: same name, same
 * content. The write goes through a temporary file and a rename so that a crash never leaves
 * a truncated prompt under the final name.
 */
export async function writePromptFile(promptDir: string, stage: StageName, systemPrompt: string): Promise<string> {
  const file = join(promptDir, promptFileName(stage, systemPrompt));
  try {
    await access(file);
    return file;
  } catch {
    // Not written yet.
  }
  // Unique per writer, so concurrent stages writing the same prompt never share a temporary file.
  const temporary = `${file}.${randomUUID()}.tmp`;
  try {
    await mkdir(promptDir, { recursive: true });
    await writeFile(temporary, systemPrompt);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new RatchetError('config', `Cannot write the system prompt file ${file}`, {
      cause: error,
      details: { promptDir },
    });
  }
  return file;
}
