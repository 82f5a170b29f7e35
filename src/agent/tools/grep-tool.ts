import path from 'node:path';
import { rgPath } from '@vscode/ripgrep';
import { z } from 'zod';
import { commandEnvironment } from '../../process/env.js';
import { RatchetError } from '../../core/errors.js';
import type { AgentTool } from './agent-tool.js';
import { ToolError } from '../tool-error.js';
import { capLines, truncateMiddle } from './truncate-output.js';

/** Most matching lines shown in one result. */
const GREP_RESULT_LIMIT = 300;
const MAX_COLUMNS = 500;

const grepInput = z.object({
  pattern: z.string().min(1).describe('Regular expression to search for (ripgrep / Rust regex syntax).'),
  path: z
    .string()
    .optional()
    .describe('File or directory to search, relative to the worktree (default: the whole worktree).'),
  glob: z.string().optional().describe("Only search files matching this glob, e.g. '*.ts' or 'src/**/*.py'."),
});

export type GrepInput = z.infer<typeof grepInput>;

/**
 * Turns rg's `path NUL line:text` lines into `path:line:text` with worktree-relative paths,
 * dropping files the stage may not read. Lines without a NUL (rg notices) pass through.
 */
function rewriteMatches(
  output: string,
  toRelative: (file: string) => string,
  allowed: (file: string) => boolean,
): string[] {
  const lines: string[] = [];
  for (const line of output.split('\n')) {
    if (line === '') continue;
    const separator = line.indexOf('\0');
    if (separator === -1) {
      lines.push(line);
      continue;
    }
    const file = toRelative(line.slice(0, separator));
    if (allowed(file)) lines.push(`${file}:${line.slice(separator + 1)}`);
  }
  return lines;
}

/**
 * `Grep {pattern, path?, glob?}`: searches file contents with ripgrep (`rgPath`), respecting
 * `.gitignore`, skipping hidden files, `node_modules` and `.git`. Shows `path:line:text` with
 * worktree-relative paths, at most 300 lines. Exit code 1 (no matches) is a normal result;
 * exit code 2 without matches (e.g. a bad regex) is an error result.
 */
export const grepTool: AgentTool<GrepInput> = {
  name: 'Grep',
  description:
    'Searches file contents for a regular expression with ripgrep, in the worktree or in the file or ' +
    'directory given by path, optionally only in files matching glob. Returns matching lines as ' +
    `path:line:text (paths relative to the worktree), at most ${GREP_RESULT_LIMIT}. Respects .gitignore ` +
    'and skips hidden files and node_modules.',
  inputSchema: grepInput,
  async execute(input, context) {
    const { guard } = context;
    const target = await guard.resolveSearchRoot(input.path);
    const args = ['--line-number', '--no-heading', '--with-filename', '--null', '--color', 'never'];
    args.push('--max-columns', String(MAX_COLUMNS), '--max-columns-preview');
    if (input.glob !== undefined && input.glob !== '') args.push('--glob', input.glob);
    // Later globs win in rg: these exclusions hold even when the repository has no .gitignore.
    args.push('--glob', '!node_modules', '--glob', '!.git');
    // An explicit path: without one, rg would search its (piped) stdin.
    args.push('--regexp', input.pattern, '--', guard.relative(target));
    const result = await context.runner.run({
      command: rgPath,
      args,
      cwd: guard.root,
      env: { ...(context.environment ?? commandEnvironment(process.env)) },
      extendEnv: false,
      timeoutMs: context.bashTimeoutMs,
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    });
    if (result.aborted) throw new RatchetError('interrupted', 'Interrupted while running Grep');
    if (result.timedOut)
      throw new ToolError(`Grep timed out after ${context.bashTimeoutMs} ms; search a narrower path or glob.`);
    const toRelative = (file: string): string => guard.relative(path.resolve(guard.root, file));
    const lines = rewriteMatches(result.stdout, toRelative, (file) => guard.allowsRead(file));
    const errors = truncateMiddle(result.stderr.trim(), 2000);
    if (result.exitCode === 1 || (result.exitCode === 0 && lines.length === 0)) {
      return { output: `No matches for '${input.pattern}'.`, isError: false };
    }
    if (result.exitCode !== 0 && lines.length === 0) {
      return {
        output: `Grep failed (rg exit code ${result.exitCode ?? 'none'}): ${errors || 'no details'}`,
        isError: true,
      };
    }
    const shown = capLines(lines, GREP_RESULT_LIMIT, 'narrow the pattern, path or glob');
    const notice = result.exitCode === 0 || errors === '' ? '' : `\n(rg also reported: ${errors})`;
    return { output: shown + notice, isError: false };
  },
};
