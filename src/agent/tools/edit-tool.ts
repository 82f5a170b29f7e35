import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { AgentTool } from './agent-tool.js';
import { ToolError } from '../tool-error.js';
import { refuseHardLinked, replaceFile } from './replace-file.js';

const editInput = z.object({
  file_path: z.string().describe('Path of the file to edit, relative to the worktree (or absolute inside it).'),
  old_string: z
    .string()
    .describe(
      'The exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is true.',
    ),
  new_string: z.string().describe('The text to put in its place (must differ from old_string).'),
  replace_all: z.boolean().optional().describe('Replace every occurrence of old_string (default false).'),
});

export type EditInput = z.infer<typeof editInput>;

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

function countOccurrences(content: string, search: string): number {
  return content.split(search).length - 1;
}

/**
 * `Edit {file_path, old_string, new_string, replace_all?}`: exact string replacement.
 * `old_string` must match exactly once (or at least once with `replace_all`); the counts are
 * reported when it does not. An empty `old_string` creates a file that does not exist yet. As
 * with Write, a file with other hard links is refused and the new content replaces the file.
 */
export const editTool: AgentTool<EditInput> = {
  name: 'Edit',
  description:
    'Replaces exact text in a file of the worktree. old_string must match the file exactly ' +
    '(whitespace included) and occur once; add surrounding lines to make it unique, or set ' +
    'replace_all to change every occurrence. Read the file first to copy the text exactly.',
  inputSchema: editInput,
  async execute(input, context) {
    if (input.old_string === input.new_string) {
      throw new ToolError('old_string and new_string are identical, so the edit would change nothing.');
    }
    const absolute = await context.guard.resolveWrite(input.file_path);
    const shown = context.guard.relative(absolute);
    await refuseHardLinked(absolute, shown);
    let content: string;
    try {
      content = await readFile(absolute, 'utf8');
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
      if (input.old_string !== '') {
        throw new ToolError(`File does not exist: ${shown}. Use Write to create it, or Glob to find the right path.`);
      }
      await mkdir(path.dirname(absolute), { recursive: true });
      await replaceFile(absolute, input.new_string);
      return { output: `Created ${shown}.`, isError: false };
    }
    if (input.old_string === '') {
      throw new ToolError(`old_string is empty but ${shown} already exists; give the exact text to replace.`);
    }
    const count = countOccurrences(content, input.old_string);
    if (count === 0) {
      throw new ToolError(
        `old_string was not found in ${shown} (0 matches). It must match the file exactly, including ` +
          'whitespace and indentation; Read the file and copy the text.',
      );
    }
    if (count > 1 && input.replace_all !== true) {
      throw new ToolError(
        `old_string occurs ${count} times in ${shown}; it must occur exactly once. Include more ` +
          'surrounding lines to make it unique, or set replace_all to true to replace all of them.',
      );
    }
    // Index-based splicing: String.replace would interpret `$&` and friends in new_string.
    const updated =
      input.replace_all === true
        ? content.split(input.old_string).join(input.new_string)
        : spliceOnce(content, input.old_string, input.new_string);
    await replaceFile(absolute, updated);
    const what = count === 1 ? '1 occurrence' : `${count} occurrences`;
    return { output: `Edited ${shown}: replaced ${what}.`, isError: false };
  },
};

function spliceOnce(content: string, search: string, replacement: string): string {
  const index = content.indexOf(search);
  return content.slice(0, index) + replacement + content.slice(index + search.length);
}
