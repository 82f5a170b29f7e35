import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { ResolvedConfig } from '../../config/resolved.js';
import { RatchetError } from '../../core/errors.js';

/** Seed 002, section 20: `.refactor-bot.config.json`, same keys as `[refactor]` in config.toml. */
const RefactorBotConfigSchema = z
  .object({
    diff_budget_loc: z.number().int().positive().optional(),
    max_batches: z.number().int().positive().max(200).optional(),
    retry_per_batch: z.number().int().min(0).optional(),
    run_full_verifier_every: z.number().int().positive().optional(),
    fast_verifier: z.array(z.string().min(1)).optional(),
    full_verifier: z.array(z.string().min(1)).optional(),
    scope_globs: z.array(z.string().min(1)).min(1).optional(),
    scope_excludes: z.array(z.string()).optional(),
    allow_public_api_changes: z.boolean().optional(),
    formatter: z.array(z.string().min(1)).optional(),
    max_runtime_minutes: z.number().positive().optional(),
    claude: z
      .object({
        binary: z.string().optional(),
        allowed_tools: z.string().optional(),
        tools: z.string().optional(),
        max_turns_patcher: z.number().int().positive().optional(),
        max_turns_planner: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export const REFACTOR_BOT_CONFIG = '.refactor-bot.config.json';

export type RefactorSettings = ResolvedConfig['refactor'] & { source: string };

/**
 * The refactor settings: `.refactor-bot.config.json` when the repository has one (the seed's file
 * and keys), otherwise the `[refactor]` section of `.ratchet/config.toml` (with defaults).
 */
export async function loadRefactorSettings(repoRoot: string, config: ResolvedConfig): Promise<RefactorSettings> {
  const file = join(repoRoot, REFACTOR_BOT_CONFIG);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return { ...config.refactor, source: config.configFile ? `${config.configFile} [refactor]` : 'defaults' };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new RatchetError('config', `${file} is not valid JSON.`, {
      cause: error,
      hint: 'Fix the JSON (its keys: diff_budget_loc, max_batches, fast_verifier, ...; see the README, ratchet refactor).',
    });
  }
  const parsed = RefactorBotConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RatchetError(
      'config',
      `${file}: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'}`,
      {
        hint: 'See `.refactor-bot.config.json` in the README for the keys.',
      },
    );
  }
  const value = parsed.data;
  const base = config.refactor;
  return {
    diffBudgetLoc: value.diff_budget_loc ?? base.diffBudgetLoc,
    maxBatches: value.max_batches ?? base.maxBatches,
    retryPerBatch: value.retry_per_batch ?? base.retryPerBatch,
    runFullVerifierEvery: value.run_full_verifier_every ?? base.runFullVerifierEvery,
    fastVerifier: value.fast_verifier ?? base.fastVerifier,
    fullVerifier: value.full_verifier ?? base.fullVerifier,
    scopeGlobs: value.scope_globs ?? base.scopeGlobs,
    scopeExcludes: value.scope_excludes ?? base.scopeExcludes,
    allowPublicApiChanges: value.allow_public_api_changes ?? base.allowPublicApiChanges,
    formatter: value.formatter ?? base.formatter,
    maxRuntimeMinutes: value.max_runtime_minutes ?? base.maxRuntimeMinutes,
    claude: {
      binary: value.claude?.binary ?? base.claude.binary,
      allowedTools: value.claude?.allowed_tools ?? base.claude.allowedTools,
      tools: value.claude?.tools ?? base.claude.tools,
      maxTurnsPatcher: value.claude?.max_turns_patcher ?? base.claude.maxTurnsPatcher,
      maxTurnsPlanner: value.claude?.max_turns_planner ?? base.claude.maxTurnsPlanner,
    },
    source: file,
  };
}
