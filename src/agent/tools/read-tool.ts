import { stat } from 'node:fs/promises';
import { z } from 'zod';
import type { AgentTool } from './agent-tool.js';
import { ToolError } from '../tool-error.js';
import { readWindow } from './read-window.js';

const DEFAULT_LIMIT = 2000;
const MAX_LINE_LENGTH = 2000;
/** Characters of file text one call returns at most (about 25 000 tokens, as Claude Code's Read). */
const MAX_OUTPUT_CHARS = 100_000;
/** Files up to this size are read to their end to say how many lines they have. */
const COUNT_LINES_UP_TO = 8 * 1024 * 1024;

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
 * most `limit` of them (default 2000) from `offset`, each cut at 2000 characters, and at most
 * about 100 000 characters in all (a window cut there says where to go on). The file is read
 * chunk by chunk up to the end of the window, never whole (see `readWindow`): a file of hundreds
 * of megabytes costs what its window costs. Empty files, directories, binary files and offsets
 * past the end are reported in words.
 */
export const readTool: AgentTool<ReadInput> = {
  name: 'Read',
  description:
    'Reads a file of the worktree. Returns its lines numbered like `cat -n` (line number, tab, text). ' +
    `By default up to ${DEFAULT_LIMIT} lines from the start; use offset and limit for long files. ` +
    `Lines longer than ${MAX_LINE_LENGTH} characters are cut, and one call returns at most about ` +
    `${MAX_OUTPUT_CHARS} characters.`,
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
    if (!info.isFile()) throw new ToolError(`${shown} is not a regular file; it cannot be read.`);
    if (info.size === 0) return { output: `The file ${shown} exists but is empty.`, isError: false };
    const start = Math.max(input.offset ?? 1, 1);
    const window = await readWindow(absolute, {
      start,
      limit: input.limit ?? DEFAULT_LIMIT,
      maxLineLength: MAX_LINE_LENGTH,
      maxChars: MAX_OUTPUT_CHARS,
      countUpTo: COUNT_LINES_UP_TO,
      size: info.size,
    });
    if (window.binary) {
      throw new ToolError(`${shown} looks like a binary file (${info.size} bytes); it cannot be shown as text.`);
    }
    const total = window.totalLines;
    if (window.lines.length === 0) {
      return {
        output: `${shown} has ${total ?? 0} line${total === 1 ? '' : 's'}; offset ${start} is past the end.`,
        isError: false,
      };
    }
    const body = window.lines.map((line, index) => numbered(start + index, line));
    const end = start + window.lines.length - 1;
    const notes: string[] = [];
    const goOn = ` Use offset ${end + 1} to read more.`;
    if (window.charLimitReached) {
      notes.push(
        `(Output cut at ${MAX_OUTPUT_CHARS} characters: showing lines ${start}-${end}${total === null ? '' : ` of ${total}`}.${goOn})`,
      );
    } else if (window.more || start > 1) {
      const of = total === null ? ` of a file of ${info.size} bytes` : ` of ${total}`;
      notes.push(`(Showing lines ${start}-${end}${of}.${window.more ? goOn : ''})`);
    }
    if (window.cutLines > 0)
      notes.push(
        `(${window.cutLines} line${window.cutLines === 1 ? ' was' : 's were'} longer than ${MAX_LINE_LENGTH} characters and cut.)`,
      );
    return { output: [...body, ...notes].join('\n'), isError: false };
  },
};
