/**
 * The formatting-only batch of a refactor run (seed 002, 11.2 step 1 and 17.3): the configured
 * formatter rewrites the worktree, then every file it changed is checked, and only the files
 * within the batch's scope whose syntax is unchanged keep its output (see `compareFormatting`).
 * Everything else it touched, created or deleted is restored from the last checkpoint, and said.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { compareFormatting } from '../../code/format-check.js';
import type { Git } from '../../git/git.js';
import type { FormatResult } from './ports.js';
import type { PlannedBatch } from './schemas.js';
import type { CommandsRunner } from './verifier.js';

export interface FormatBatchOptions {
  worktree: string;
  /** Git of the worktree; HEAD is the last checkpoint. */
  git: Git;
  commands: readonly string[];
  /** The configured scope (`[refactor] scope_globs`): the batch's own only narrows it. */
  scopeGlobs: readonly string[];
  scopeExcludes: readonly string[];
  runCommands: CommandsRunner;
  signal?: AbortSignal;
}

export async function runFormatBatch(batch: PlannedBatch, options: FormatBatchOptions): Promise<FormatResult> {
  const { git, worktree } = options;
  const run = await options.runCommands(options.commands, 'format', 'FORMAT', options.signal);
  if (!run.ok) return { run, files: [], loc: 0, reverted: [] };
  const inBatch = picomatch(batch.scope_globs, { dot: true });
  const inConfigured = picomatch([...options.scopeGlobs], { dot: true });
  const inScope = (path: string): boolean => inBatch(path) && inConfigured(path);
  const excluded = picomatch(options.scopeExcludes.length > 0 ? [...options.scopeExcludes] : ['\0'], { dot: true });
  const kept = new Map<string, Buffer>();
  const reverted: string[] = [];
  for (const entry of (await git.status()).files) {
    const { path } = entry;
    const why = await refusal(path, entry.index, entry.worktree, inScope(path) && !excluded(path), options);
    if (why !== null) {
      reverted.push(`${path}: ${why}`);
      if (entry.origPath !== undefined) reverted.push(`${entry.origPath}: renamed by the formatter`);
      continue;
    }
    kept.set(path, await readFile(join(worktree, path)));
  }
  if (reverted.length > 0) {
    // Back to the checkpoint, then the accepted files as the formatter left them.
    await git.resetHard('HEAD');
    await git.clean();
    for (const [path, content] of kept) await writeFile(join(worktree, path), content);
  }
  const stat = kept.size === 0 ? undefined : await git.diffStat('HEAD');
  const loc = stat === undefined ? 0 : stat.added + stat.deleted;
  return { run, files: [...kept.keys()].sort(), loc, reverted };
}

/** Why the formatter's change to `path` cannot be kept, or null when it can. */
async function refusal(
  path: string,
  index: string,
  worktreeStatus: string,
  inScope: boolean,
  options: FormatBatchOptions,
): Promise<string | null> {
  if (!inScope) return 'outside the batch scope';
  const state = `${index}${worktreeStatus}`;
  if (state.includes('?') || state.includes('A')) return 'created by the formatter';
  if (state.includes('D')) return 'deleted by the formatter';
  if (state.includes('R') || state.includes('C')) return 'renamed by the formatter';
  const after = await readFile(join(options.worktree, path));
  const before = await options.git.showFile('HEAD', path);
  if (before === null) return 'not in the last checkpoint';
  if (after.subarray(0, 8000).includes(0) || before.slice(0, 8000).includes('\0')) return 'a binary file';
  const verdict = await compareFormatting(path, before, after.toString('utf8'));
  return verdict.formattingOnly ? null : `not formatting-only: ${verdict.reason}`;
}
