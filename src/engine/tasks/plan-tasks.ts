import { readFile, writeFile } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import type { Clock } from '../../core/effects.js';
import { RatchetError } from '../../core/errors.js';
import { loadPrompts, packageRoot } from '../../config/prompts.js';
import { stageSettings, type ResolvedConfig } from '../../config/resolved.js';
import { gitListFiles } from '../../code/index/git-files.js';
import { createModelPool } from '../../agent/models/model-factory.js';
import { withRetry } from '../../llm/retry.js';
import { decomposePrompt, decomposeSpec, type DecomposeResult } from '../../workflows/tasks/decompose.js';
import { structuredModelPort } from './structured-model.js';

export interface PlanTasksOptions {
  repoRoot: string;
  /** The specification, an absolute path. */
  specFile: string;
  /** Where the tasks file goes, an absolute path. */
  outFile: string;
  config: ResolvedConfig;
  env: Record<string, string | undefined>;
  clock: Clock;
  fetch?: typeof fetch;
  /** `--record FILE`: append the planning calls to this cassette. */
  recordPath?: string;
  signal?: AbortSignal;
}

async function readSpec(specFile: string): Promise<string> {
  const spec = await readFile(specFile, 'utf8').catch((error: unknown) => {
    throw new RatchetError('usage', `Cannot read the specification ${specFile}.`, {
      hint: 'Pass the path of a Markdown or text file describing what to build.',
      cause: error,
    });
  });
  if (spec.trim() === '')
    throw new RatchetError('usage', `The specification ${specFile} is empty.`, {
      hint: 'Describe what to build in it.',
    });
  return spec;
}

/**
 * `ratchet tasks plan`: asks the PLAN stage's model (`[stages.plan]`) to decompose the
 * specification into a tasks file, validated by `decomposeSpec` (one corrective retry), and
 * writes it to `outFile` for the user to review; `tasks run` reads it. Plans are not runs: no
 * branch, worktree or ledger row, and nothing of the repository changes but `outFile`.
 * The Claude Code provider is refused (its structured answers are validated inside the CLI,
 * which would hide the problems the corrective retry names).
 */
export async function planTasks(options: PlanTasksOptions): Promise<DecomposeResult & { outFile: string }> {
  const { config } = options;
  if (config.provider.name === 'claude-code')
    throw new RatchetError('usage', '`ratchet tasks plan` needs an API provider; claude-code is an agent runtime.', {
      hint: 'Plan with --provider anthropic (or openai, ollama, replay), then run the tasks with --provider claude-code.',
    });
  const spec = await readSpec(options.specFile);
  const prompt = decomposePrompt(await loadPrompts({ packageRoot: packageRoot(), repoRoot: options.repoRoot }));
  const repoFiles = await gitListFiles(options.repoRoot, options.signal);
  const models = createModelPool({
    config,
    env: options.env,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.recordPath ? { recordPath: options.recordPath } : {}),
  });
  const client = withRetry(models.clientFor(stageSettings(config, 'PLAN').model), {
    sleep: (ms, signal) => options.clock.sleep(ms, signal),
  });
  const specPath = relative(options.repoRoot, options.specFile);
  const result = await decomposeSpec(
    {
      spec,
      specFile: specPath || options.specFile,
      repoFiles,
      prompt,
      ...(options.signal ? { signal: options.signal } : {}),
    },
    structuredModelPort(client),
  );
  // The file names its specification (inside the repository), so `tasks run` counts neither as a
  // change of the user's while both are still uncommitted.
  const inside = specPath !== '' && !specPath.startsWith('..') && !isAbsolute(specPath);
  const written = inside ? { spec: specPath.split(sep).join('/'), ...result.file } : result.file;
  await writeFile(options.outFile, `${JSON.stringify(written, null, 2)}\n`);
  return { ...result, outFile: options.outFile };
}
