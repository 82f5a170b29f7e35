import { stat } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import type { AgentTool } from './agent-tool.js';
import { ToolError } from '../tool-error.js';
import { capLines } from './truncate-output.js';

/** Most paths listed in one result. */
const GLOB_RESULT_LIMIT = 500;

const globInput = z.object({
  pattern: z.string().min(1).describe("Glob pattern, e.g. '**/*.ts' or 'src/**/*.test.ts'."),
  path: z.string().optional().describe('Directory to search in, relative to the worktree (default: the worktree).'),
});

export type GlobInput = z.infer<typeof globInput>;

/**
 * `Glob {pattern, path?}`: files matching a glob (tinyglobby, dotfiles included, symlinks not
 * followed) under `path` or the worktree, ignoring `.git` and `node_modules`. Lists
 * worktree-relative paths the stage may read, sorted, at most 500.
 */
export const globTool: AgentTool<GlobInput> = {
  name: 'Glob',
  description:
    "Finds files by glob pattern (e.g. '**/*.ts') in the worktree or in the directory given by path. " +
    `Returns matching file paths relative to the worktree, sorted, at most ${GLOB_RESULT_LIMIT}. ` +
    '.git and node_modules are skipped.',
  inputSchema: globInput,
  async execute(input, context) {
    if (path.isAbsolute(input.pattern) || input.pattern.split('/').includes('..')) {
      throw new ToolError(
        "The pattern must be relative and may not contain '..'; use the path parameter to choose the directory.",
      );
    }
    const base = await context.guard.resolveSearchRoot(input.path);
    const info = await stat(base).catch(() => undefined);
    if (info === undefined) throw new ToolError(`Directory does not exist: ${input.path ?? '.'}.`);
    if (!info.isDirectory())
      throw new ToolError(`${input.path ?? '.'} is a file, not a directory; give a directory as path.`);
    const found = await glob(input.pattern, {
      cwd: base,
      dot: true,
      onlyFiles: true,
      followSymbolicLinks: false,
      ignore: ['**/.git/**', '**/node_modules/**'],
    });
    const files = found
      .map((file) => context.guard.relative(path.join(base, file)))
      .filter((file) => context.guard.allowsRead(file))
      .sort();
    if (files.length === 0) return { output: `No files match '${input.pattern}'.`, isError: false };
    return { output: capLines(files, GLOB_RESULT_LIMIT, 'use a narrower pattern'), isError: false };
  },
};
