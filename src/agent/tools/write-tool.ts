import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { AgentTool } from './agent-tool.js';
import { ToolError } from '../tool-error.js';
import { refuseHardLinked, replaceFile } from './replace-file.js';

const writeInput = z.object({
  file_path: z.string().describe('Path of the file to write, relative to the worktree (or absolute inside it).'),
  content: z.string().describe('The complete new content of the file.'),
});

export type WriteInput = z.infer<typeof writeInput>;

function countLines(text: string): number {
  if (text === '') return 0;
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/**
 * `Write {file_path, content}`: creates or overwrites a file, creating parent directories. A file
 * with other hard links is refused, and the write replaces the file (a new one renamed into
 * place), so no other name of it ever changes.
 */
export const writeTool: AgentTool<WriteInput> = {
  name: 'Write',
  description:
    'Writes a file of the worktree, replacing its whole content (parent directories are created). ' +
    'Prefer Edit for changing part of an existing file.',
  inputSchema: writeInput,
  async execute(input, context) {
    const absolute = await context.guard.resolveWrite(input.file_path);
    const shown = context.guard.relative(absolute);
    const existing = await stat(absolute).catch(() => undefined);
    if (existing?.isDirectory()) throw new ToolError(`${shown} is a directory; give the path of a file.`);
    await refuseHardLinked(absolute, shown);
    await mkdir(path.dirname(absolute), { recursive: true });
    await replaceFile(absolute, input.content);
    const lines = countLines(input.content);
    const verb = existing === undefined ? 'Created' : 'Updated';
    return { output: `${verb} ${shown} (${lines} line${lines === 1 ? '' : 's'}).`, isError: false };
  },
};
