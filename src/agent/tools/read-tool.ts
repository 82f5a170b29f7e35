import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import type { AgentTool } from './agent-tool.js';
import { ToolError } from '../tool-error.js';

const DEFAULT_LIMIT = 2000;
const MAX_LINE_LENGTH = 2000;

const readInput = z.object({
  file_path: z.string().describe('Path of the file to read, relative to the worktree (or absolute inside it).'),
  offset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('1-based line number to start reading from. Only give it when the file is too long to read at once.'),
  limit: z.number().int().min(1).optional().describe(`Number of lines to read (default ${DEFAULT_LIMIT}).`),
});

export type ReadInput = z.infer<typeof readInput>;

function numbered(lineNumber: number, text: string): string {
  return `${String(lineNumber).padStart(6, ' ')}\t${text}`;
}

/**
 * `Read {file_path, offset?, limit?}`: the file's lines numbered like `cat -n` (1-based), at
 * most `limit` of them (default 2000) from `offset`, each cut at 2000 characters. Empty files,
 * directories, binary files and offsets past the end are reported in words.
 */
export const readTool: AgentTool<ReadInput> = {
  name: 'Read',
  description:
    'Reads a file of the worktree. Returns its lines numbered like `cat -n` (line number, tab, text). ' +
    `By default up to ${DEFAULT_LIMIT} lines from the start; use offset and limit for long files. ` +
    `Lines longer than ${MAX_LINE_LENGTH} characters are cut.`,
  inputSchema: readInput,
  async execute(input, context) {
    const absolute = await context.guard.resolveRead(input.file_path);
    const shown = context.guard.relative(absolute);
    const info = await stat(absolute).catch(() => undefined);
    if (info === undefined) {
      throw new ToolError(`File does not exist: ${shown}. Use Glob to find files by name.`);
    }
    if (info.isDirectory()) {
      throw new ToolError(
        `${shown} is a directory, not a file. Use Glob (e.g. pattern '${shown === '.' ? '' : `${shown}/`}*') to list it.`,
      );
    }
    const buffer = await readFile(absolute);
    if (buffer.length === 0) return { output: `The file ${shown} exists but is empty.`, isError: false };
    if (buffer.subarray(0, 8000).includes(0)) {
      throw new ToolError(`${shown} looks like a binary file (${buffer.length} bytes); it cannot be shown as text.`);
    }
    const lines = buffer.toString('utf8').split(/\r?\n/);
    if (lines.at(-1) === '') lines.pop();
    const start = Math.max(input.offset ?? 1, 1);
    const limit = input.limit ?? DEFAULT_LIMIT;
    if (start > lines.length) {
      return {
        output: `${shown} has ${lines.length} line${lines.length === 1 ? '' : 's'}; offset ${start} is past the end.`,
        isError: false,
      };
    }
    const selected = lines.slice(start - 1, start - 1 + limit);
    let cut = 0;
    const body = selected.map((line, index) => {
      if (line.length <= MAX_LINE_LENGTH) return numbered(start + index, line);
      cut += 1;
      return numbered(start + index, line.slice(0, MAX_LINE_LENGTH));
    });
    const end = start + selected.length - 1;
    const notes: string[] = [];
    if (end < lines.length || start > 1) {
      notes.push(
        `(Showing lines ${start}-${end} of ${lines.length}.${end < lines.length ? ` Use offset ${end + 1} to read more.` : ''})`,
      );
    }
    if (cut > 0)
      notes.push(`(${cut} line${cut === 1 ? ' was' : 's were'} longer than ${MAX_LINE_LENGTH} characters and cut.)`);
    return { output: [...body, ...notes].join('\n'), isError: false };
  },
};
