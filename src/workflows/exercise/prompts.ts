import { RatchetError } from '../../core/errors.js';
import { promptText, type PromptSet } from '../../config/prompts.js';

/** The EXERCISE stage's prompts: `[bench.exercise]` of `prompts/prompts.toml` (overridable in `.ratchet/prompts.toml`). */
export interface ExercisePrompts {
  system: string;
  user: string;
  /** The feedback of a try after a failed one: the first lines of the official tests' output. */
  retry: string;
}

/** The prompts of a loaded set; throws `config` when one is missing or its system prompt renames the stage. */
export function exercisePrompts(prompts: PromptSet): ExercisePrompts {
  const system = promptText(prompts, 'bench.exercise.system');
  const user = promptText(prompts, 'bench.exercise.user');
  const retry = promptText(prompts, 'bench.exercise.retry');
  if (system === undefined || user === undefined || retry === undefined) {
    throw new RatchetError('config', `The prompts of bench.exercise are missing (${prompts.files.join(', ')}).`, {
      hint: 'Reinstall Ratchet, or restore [bench.exercise] system, user and retry in your prompts.toml.',
    });
  }
  if (system.split('\n')[0]?.trim() !== 'Stage: EXERCISE') {
    throw new RatchetError('config', 'The bench.exercise.system prompt must start with the line "Stage: EXERCISE".', {
      hint: 'Make "Stage: EXERCISE" its first line; Ratchet and its recordings identify the stage by it.',
    });
  }
  return { system, user, retry };
}
