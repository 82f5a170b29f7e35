import type { ZodType } from 'zod';
import { RatchetError } from '../../core/errors.js';
import { promptText, renderTemplate, type PromptSet } from '../../config/prompts.js';
import {
  checkTasksFile,
  describeProblems,
  TasksFileSchema,
  type TasksFile,
  type TasksFileProblem,
} from './tasks-file.js';

/**
 * DECOMPOSE (`ratchet tasks plan`): asks the model to split a specification into a tasks file,
 * validates the answer (schema, keys, dependencies, cycles, file ownership), and on an invalid
 * answer asks once more with a corrective message that names every problem. The validation is
 * ours, never the model's: an answer is used only when `checkTasksFile` accepts it.
 */

/** The stage name of the decomposition's system prompt (its first line, `Stage: DECOMPOSE`). */
const DECOMPOSE_STAGE = 'DECOMPOSE';

/** Where the prompt lives in `prompts.toml` (overridable in `.ratchet/prompts.toml`). */
const PROMPT_KEY = 'tasks.decompose';

/** One turn of the conversation with the model (a retry quotes its earlier answer back). */
type ConversationTurn = { role: 'user'; text: string } | { role: 'assistant'; text: string };

export interface StructuredRequest<T> {
  /** `DECOMPOSE`: the stage the call belongs to (for the ledger and recordings). */
  stage: string;
  system: string;
  messages: readonly ConversationTurn[];
  /** The shape the answer must have: for a structured-output tool, or Claude Code's `--json-schema`. */
  schema: ZodType<T>;
  signal?: AbortSignal;
}

export interface StructuredAnswer {
  /** What the model gave as its result (parsed JSON, not validated); undefined when it gave none. */
  value: unknown;
  /** Its reply as it goes back into the conversation on a retry. */
  text: string;
}

/**
 * The model, as decomposition needs it: one structured answer per call. The engine implements
 * it over a `ModelClient` (the StructuredOutput tool) or the Claude Code runtime; it returns what
 * the model gave even when that does not match the schema, so the retry can say what is wrong.
 */
export interface StructuredModelPort {
  ask<T>(request: StructuredRequest<T>): Promise<StructuredAnswer>;
}

export interface DecomposePrompt {
  system: string;
  user: string;
  retry: string;
}

/**
 * The decomposition's prompt templates from the loaded prompt set. Throws `config` when an
 * override removed the `Stage: DECOMPOSE` first line (recordings and the ledger identify the
 * stage by it) or left a template empty.
 */
export function decomposePrompt(prompts: PromptSet): DecomposePrompt {
  const read = (name: keyof DecomposePrompt): string => {
    const text = promptText(prompts, `${PROMPT_KEY}.${name}`);
    if (text === undefined || text.trim() === '')
      throw new RatchetError('config', `The prompt ${PROMPT_KEY}.${name} is missing or empty`, {
        hint: `Restore [${PROMPT_KEY}] ${name} in .ratchet/prompts.toml, or remove your override of it.`,
      });
    return text;
  };
  const prompt = { system: read('system'), user: read('user'), retry: read('retry') };
  if (prompt.system.split('\n')[0]?.trim() !== `Stage: ${DECOMPOSE_STAGE}`)
    throw new RatchetError(
      'config',
      `The ${PROMPT_KEY}.system prompt must start with the line "Stage: ${DECOMPOSE_STAGE}"`,
      { hint: `Make "Stage: ${DECOMPOSE_STAGE}" the first line of ${PROMPT_KEY}.system.` },
    );
  return prompt;
}

export interface DecomposeRequest {
  /** The specification's text. */
  spec: string;
  /** Its path as the user gave it, for the prompt. */
  specFile: string;
  /** Files of the repository (tracked), so paths follow its layout; the first 300 are shown. */
  repoFiles: readonly string[];
  prompt: DecomposePrompt;
  signal?: AbortSignal;
}

export interface DecomposeResult {
  file: TasksFile;
  /** 1, or 2 when the first answer was invalid and the corrected one was used. */
  calls: 1 | 2;
  /** What was wrong with the first answer (empty when it was valid). */
  corrected: TasksFileProblem[];
}

const SHOWN_REPO_FILES = 300;

function listFiles(files: readonly string[]): string {
  if (files.length === 0) return '(none yet: the repository is empty)';
  const shown = files.slice(0, SHOWN_REPO_FILES).join('\n');
  return files.length > SHOWN_REPO_FILES ? `${shown}\n... and ${files.length - SHOWN_REPO_FILES} more` : shown;
}

function problemsOf(answer: StructuredAnswer): TasksFileProblem[] | TasksFile {
  if (answer.value === undefined)
    return [{ code: 'schema', path: '(file)', message: 'The answer contained no tasks file (no JSON object).' }];
  const check = checkTasksFile(answer.value);
  return check.ok ? check.file : check.problems;
}

/**
 * Decomposes `spec` into a validated tasks file with at most two model calls. Throws
 * `gate-failed` (with every problem of the second answer in its message and `details`) when the
 * corrected answer is invalid too; errors of the port (provider, auth, interrupt) pass through.
 */
export async function decomposeSpec(request: DecomposeRequest, model: StructuredModelPort): Promise<DecomposeResult> {
  const user = renderTemplate(request.prompt.user, {
    spec: request.spec,
    spec_file: request.specFile,
    repo_files: listFiles(request.repoFiles),
  });
  const messages: ConversationTurn[] = [{ role: 'user', text: user }];
  const ask = (turns: readonly ConversationTurn[]): Promise<StructuredAnswer> =>
    model.ask({
      stage: DECOMPOSE_STAGE,
      system: request.prompt.system,
      messages: turns,
      schema: TasksFileSchema,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });

  const first = await ask(messages);
  const firstResult = problemsOf(first);
  if (!Array.isArray(firstResult)) return { file: firstResult, calls: 1, corrected: [] };

  const correction = renderTemplate(request.prompt.retry, { problems: describeProblems(firstResult) });
  const second = await ask([...messages, { role: 'assistant', text: first.text }, { role: 'user', text: correction }]);
  const secondResult = problemsOf(second);
  if (!Array.isArray(secondResult)) return { file: secondResult, calls: 2, corrected: firstResult };

  throw new RatchetError(
    'gate-failed',
    `The model's tasks file was invalid twice (once after being told what to fix):\n${describeProblems(secondResult)}`,
    {
      hint: 'Run `ratchet tasks plan` again, make the specification more explicit about files and dependencies, or write the tasks file by hand.',
      details: { problems: secondResult },
    },
  );
}
