/**
 * The team's prompts (seed 001, D6/R4): `.team/prompts.toml` when it exists (`team init` copies
 * the package's `prompts/team.toml` there for the user to edit), else the package file. Unknown
 * `{placeholders}` pass through (`renderTemplate`). Every system prompt must start with its
 * `Stage: <NAME>` line: recordings, scripted models and the ledger identify speakers by it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { RatchetError } from '../../core/errors.js';
import { parseToml, schemaIssueError } from '../../config/internal/issues.js';
import { PHASE_ORDER, type Phase } from './types.js';

const PhasePromptSchema = z.looseObject({
  prompt: z.string(),
  kickoff: z.string(),
  coach: z.string(),
});

const TeamPromptsSchema = z.looseObject({
  agent: z.looseObject({ system: z.string(), turn: z.string() }),
  coach: z.looseObject({ system: z.string() }),
  grooming: z.looseObject({ prompt: z.string() }),
  phases: z.looseObject(
    Object.fromEntries(PHASE_ORDER.map((phase) => [phase, PhasePromptSchema])) as Record<
      Phase,
      typeof PhasePromptSchema
    >,
  ),
  extraction: z.looseObject({
    refinement: z.looseObject({ system: z.string(), user: z.string() }),
    tasks: z.looseObject({ system: z.string(), user: z.string() }),
    notes: z.looseObject({ system: z.string(), user: z.string() }),
  }),
  tools: z.looseObject({
    pass_turn: z.looseObject({ description: z.string() }),
    signal_phase_complete: z.looseObject({ description: z.string() }),
    ask_pm: z.looseObject({ description: z.string() }),
  }),
});
export type TeamPrompts = z.infer<typeof TeamPromptsSchema>;

/** The system prompts and the `Stage:` line each must start with. */
const STAGE_LINES: ReadonlyArray<[string, (prompts: TeamPrompts) => string]> = [
  ['AGENT', (p) => p.agent.system],
  ['COACH', (p) => p.coach.system],
  ['EXTRACT_REFINEMENT', (p) => p.extraction.refinement.system],
  ['EXTRACT_TASKS', (p) => p.extraction.tasks.system],
  ['EXTRACT_NOTES', (p) => p.extraction.notes.system],
];

/** The package's team prompts file. */
export function packageTeamPromptsPath(packageRoot: string): string {
  return join(packageRoot, 'prompts', 'team.toml');
}

/** Parses and checks a team prompts file's text. */
export function parseTeamPrompts(text: string, file: string): TeamPrompts {
  const parsed = TeamPromptsSchema.safeParse(parseToml(text, file));
  if (!parsed.success) throw schemaIssueError(parsed.error.issues, file, text, TeamPromptsSchema);
  for (const [stage, systemOf] of STAGE_LINES) {
    if (systemOf(parsed.data).split('\n')[0]?.trim() !== `Stage: ${stage}`)
      throw new RatchetError('config', `A team system prompt must start with the line "Stage: ${stage}" (${file}).`, {
        hint: `Put "Stage: ${stage}" back as the first line of that prompt; Ratchet identifies the speaker by it.`,
        details: { file, stage },
      });
  }
  return parsed.data;
}

/** Loads `<teamDir>/prompts.toml` when it exists, else the package's `prompts/team.toml`. */
export async function loadTeamPrompts(options: { teamDir: string; packageRoot: string }): Promise<TeamPrompts> {
  const custom = join(options.teamDir, 'prompts.toml');
  const customText = await readFile(custom, 'utf8').catch(() => undefined);
  if (customText !== undefined) return parseTeamPrompts(customText, custom);
  const builtIn = packageTeamPromptsPath(options.packageRoot);
  return parseTeamPrompts(await readFile(builtIn, 'utf8'), builtIn);
}
