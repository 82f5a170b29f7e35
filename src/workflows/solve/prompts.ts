/**
 * The solve workflow's prompts: `[solve.<pass>]` of `prompts/prompts.toml`, overridable like the
 * TDD stages' in `<repo>/.ratchet/prompts.toml`. Each system prompt's first line names its stage
 * (`Stage: META_PLAN`), as recordings and the trace identify passes by it.
 */
import { RatchetError } from '../../core/errors.js';
import type { SolvePassStage } from '../../core/stages.js';
import { promptText, renderTemplate, type PromptSet, type StagePrompt } from '../../config/prompts.js';

/** The stages with prompts: the passes, and precision grading. */
export type SolvePromptStage = SolvePassStage | 'PRECISION';

const KEYS: Record<SolvePromptStage, string> = {
  META_PLAN: 'meta_plan',
  PART_PLAN: 'part_plan',
  IMPLEMENT: 'implement',
  ADJUSTMENT: 'adjustment',
  PRECISION: 'precision',
};

export type SolvePrompts = Record<SolvePromptStage, StagePrompt>;

/** The solve prompts of a loaded prompt set; throws `config` when one is missing or renames its stage. */
export function solvePrompts(prompts: PromptSet): SolvePrompts {
  const result = {} as SolvePrompts;
  for (const [stage, key] of Object.entries(KEYS) as [SolvePromptStage, string][]) {
    const system = promptText(prompts, `solve.${key}.system`);
    const user = promptText(prompts, `solve.${key}.user`);
    if (system === undefined || user === undefined) {
      throw new RatchetError('config', `The prompts of solve.${key} are missing (${prompts.files.join(', ')}).`, {
        hint: 'Reinstall Ratchet, or restore [solve.' + key + '] system and user in your prompts.toml.',
      });
    }
    if (system.split('\n')[0]?.trim() !== `Stage: ${stage}`) {
      throw new RatchetError('config', `The solve.${key}.system prompt must start with the line "Stage: ${stage}".`, {
        hint: `Make "Stage: ${stage}" the first line of solve.${key}.system; Ratchet and its recordings identify passes by it.`,
        details: { keyPath: `solve.${key}.system`, files: prompts.files },
      });
    }
    result[stage] = { system, user };
  }
  return result;
}

/** A stage's system prompt and user message with `vars` filled in (unknown names stay as written). */
export function renderSolvePrompt(
  prompts: SolvePrompts,
  stage: SolvePromptStage,
  vars: Readonly<Record<string, string>>,
): StagePrompt {
  return { system: renderTemplate(prompts[stage].system, vars), user: renderTemplate(prompts[stage].user, vars) };
}
