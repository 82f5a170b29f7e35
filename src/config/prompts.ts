/**
 * Prompt loading (seed 001, D6/R4): the package's `prompts/prompts.toml`, overlaid key by key by
 * an optional `<repo>/.ratchet/prompts.toml`. Templates use `{name}` placeholders; rendering
 * replaces the names it is given and leaves every other brace untouched, so prompt text (JSON
 * examples, code) never breaks rendering.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { RatchetError } from '../core/errors.js';
import { AGENT_STAGES, type AgentStageName } from '../core/stages.js';
import { locateKey, parseToml, schemaIssueError } from './internal/issues.js';
import { stageKey } from './resolved.js';

export interface StagePrompt {
  system: string;
  user: string;
}

/** Nested TOML tables of prompt text. */
interface PromptTree {
  [key: string]: string | PromptTree;
}

export interface PromptSet {
  stages: Record<AgentStageName, StagePrompt>;
  /** Every prompt key, nested as in the TOML (`stages.red.system`, other workflows' sections). */
  tree: PromptTree;
  /** Files read, package file first. */
  files: string[];
}

/** The placeholders the TDD stage templates use, with what the orchestrator fills in. */
export const PROMPT_VARIABLES = {
  feature: 'The feature request as the user wrote it.',
  cycle: 'The TDD cycle number, from 1.',
  test_list: 'Contents of test-list.md (or a note that it does not exist yet).',
  current_test: 'The current test case description.',
  test_file: 'Path of the test file, relative to the repository root.',
  impl_file: 'Path of the implementation file, relative to the repository root.',
  test_command: 'The command that runs the test suite.',
  feedback: 'Gate or verification output from the previous attempt (empty on a first attempt).',
  attempt: 'The attempt number of this stage, from 1.',
  max_attempts: 'Attempts allowed for this stage.',
  completed_tests: 'Checked items of test-list.md, one per line.',
  pending_tests: 'Unchecked items of test-list.md, one per line.',
  reasons: 'Findings of the static size checker, one per line.',
  changed_files: 'Files changed in this cycle, one per line.',
} as const;

const StagePromptSchema = z.strictObject({
  system: z.string().min(1).describe('System prompt; its first line is `Stage: <NAME>`.'),
  user: z.string().min(1).describe('User message template.'),
});

const PromptTreeSchema: z.ZodType<PromptTree> = z.lazy(() =>
  z.record(z.string(), z.union([z.string(), PromptTreeSchema])),
);

const PackagePromptsSchema = z
  .object({
    stages: z.strictObject({
      plan: StagePromptSchema,
      red: StagePromptSchema,
      red_fix: StagePromptSchema,
      green: StagePromptSchema,
      fix: StagePromptSchema,
      refactor: StagePromptSchema,
    }),
  })
  .catchall(PromptTreeSchema);

/** Root of the installed package: modules run from `<root>/src/config` or `<root>/dist/config`. */
export function packageRoot(): string {
  return fileURLToPath(new URL('../../', import.meta.url));
}

/** The built-in prompts file. */
export function packagePromptsPath(root: string = packageRoot()): string {
  return join(root, 'prompts', 'prompts.toml');
}

/** A repository's optional prompt overrides. */
export function repoPromptsPath(repoRoot: string): string {
  return join(repoRoot, '.ratchet', 'prompts.toml');
}

/**
 * Loads the package prompts and overlays `<repo>/.ratchet/prompts.toml` when it exists. An
 * override may only replace keys the package file defines (a typo is an error naming the file).
 */
export async function loadPrompts({
  packageRoot: root,
  repoRoot,
}: {
  packageRoot: string;
  repoRoot: string;
}): Promise<PromptSet> {
  const baseFile = packagePromptsPath(root);
  const baseText = await readText(baseFile, true);
  const parsed = PackagePromptsSchema.safeParse(parseToml(baseText ?? '', baseFile));
  if (!parsed.success) throw schemaIssueError(parsed.error.issues, baseFile, baseText ?? '', PackagePromptsSchema);
  const tree = structuredClone(parsed.data) as PromptTree;
  const files = [baseFile];
  const replaced = new Set<string>();

  const overrideFile = repoPromptsPath(repoRoot);
  const overrideText = await readText(overrideFile, false);
  if (overrideText !== undefined) {
    const override = parseToml(overrideText, overrideFile);
    overlay(tree, override, [], overrideFile, overrideText, replaced);
    files.push(overrideFile);
  }

  const stages = {} as Record<AgentStageName, StagePrompt>;
  for (const stage of AGENT_STAGES) {
    const prompt = stageFromTree(tree, stage);
    const firstLine = prompt.system.split('\n')[0]?.trim();
    const keyPath = `stages.${stageKey(stage)}.system`;
    if (firstLine !== `Stage: ${stage}`) {
      const file = replaced.has(keyPath) ? overrideFile : baseFile;
      throw new RatchetError('config', `The ${keyPath} prompt must start with the line "Stage: ${stage}" (${file})`, {
        hint: `Make "Stage: ${stage}" the first line of ${keyPath}; Ratchet and its recordings identify stages by it.`,
        details: { file, keyPath },
      });
    }
    stages[stage] = prompt;
  }
  return { stages, tree, files };
}

/** The system prompt and user template of an agent stage. */
export function stagePrompt(prompts: PromptSet, stage: AgentStageName): StagePrompt {
  return prompts.stages[stage];
}

/** A stage's system prompt and user message with the variables filled in. */
export function renderStagePrompt(
  prompts: PromptSet,
  stage: AgentStageName,
  vars: Readonly<Record<string, string | number>>,
): StagePrompt {
  const { system, user } = stagePrompt(prompts, stage);
  return {
    system: renderTemplate(system, vars),
    user: renderTemplate(user, vars),
  };
}

/** The prompt text at a dotted key path (`stages.red.user`), or undefined. */
export function promptText(prompts: PromptSet, keyPath: string): string | undefined {
  let node: string | PromptTree | undefined = prompts.tree;
  for (const key of keyPath.split('.')) {
    node = typeof node === 'object' ? node[key] : undefined;
  }
  return typeof node === 'string' ? node : undefined;
}

/**
 * Replaces `{name}` for every name in `vars`. Unknown names and any other braces (JSON, code)
 * pass through unchanged; values are inserted verbatim (never re-expanded). Never throws.
 */
export function renderTemplate(template: string, vars: Readonly<Record<string, string | number>>): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (match, name: string) =>
    Object.hasOwn(vars, name) ? String(vars[name]) : match,
  );
}

function stageFromTree(tree: PromptTree, stage: AgentStageName): StagePrompt {
  const stages = tree.stages;
  const node = typeof stages === 'object' ? stages[stageKey(stage)] : undefined;
  const system = typeof node === 'object' ? node.system : undefined;
  const user = typeof node === 'object' ? node.user : undefined;
  if (typeof system !== 'string' || typeof user !== 'string') {
    throw new RatchetError('internal', `Prompt stages.${stageKey(stage)} is incomplete`);
  }
  return { system, user };
}

/**
 * Copies override strings onto the base. A key the base does not have, or a value that is not
 * text where the base has text (or not a table where it has a table), is an error.
 */
function overlay(
  base: PromptTree,
  override: Record<string, unknown>,
  path: string[],
  file: string,
  text: string,
  replaced: Set<string>,
): void {
  for (const [key, value] of Object.entries(override)) {
    const keyPath = [...path, key];
    const current = base[key];
    const problem =
      current === undefined
        ? 'Unknown prompt key'
        : typeof current === 'string'
          ? typeof value === 'string'
            ? undefined
            : 'Expected text for prompt key'
          : isTable(value)
            ? undefined
            : 'Expected a table for prompt key';
    if (problem !== undefined) {
      const line = locateKey(text, keyPath);
      throw new RatchetError(
        'config',
        `${problem} "${keyPath.join('.')}" in ${file}${line === undefined ? '' : ` (line ${line})`}`,
        {
          hint: "Overrides may only replace keys of Ratchet's built-in prompts.toml with text, e.g. [stages.red] system = '''...'''.",
          details: { file, keyPath: keyPath.join('.'), line },
        },
      );
    }
    if (typeof value === 'string') {
      base[key] = value;
      replaced.add(keyPath.join('.'));
    } else {
      overlay(current as PromptTree, value as Record<string, unknown>, keyPath, file, text, replaced);
    }
  }
}

function isTable(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date);
}

async function readText(file: string, required: boolean): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if (!required && error instanceof Error && 'code' in error && error.code === 'ENOENT') return undefined;
    throw new RatchetError('config', `Cannot read prompts file ${file}`, {
      cause: error,
      hint: required
        ? 'The Ratchet installation looks incomplete; reinstall the package.'
        : 'Check the file permissions.',
      details: { file },
    });
  }
}
