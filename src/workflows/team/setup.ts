/**
 * `.team/` on disk: `team init` writes it, every other command loads it into a `TeamContext`.
 */
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import { createRedactor, secretsFromEnv } from '../../core/redact.js';
import type { TeamContext } from './context.js';
import { replaceText } from './file-stores.js';
import { loadTeamPrompts, packageTeamPromptsPath } from './prompts.js';
import { TeamConfigSchema, type TeamConfig } from './types.js';

export function teamDirOf(projectRoot: string): string {
  return join(projectRoot, '.team');
}

/** The team `team init` writes: `agents` engineers and a coach. */
export function defaultTeamConfig(agents: number): TeamConfig {
  return TeamConfigSchema.parse({
    agents: Array.from({ length: agents }, (_, index) => ({ name: `agent-${index + 1}`, role: 'Software Engineer' })),
    coach: { name: 'coach', role: 'Agile Coach' },
  });
}

/**
 * Creates `.team/team.json` and `.team/prompts.toml` (a copy of the package's team prompts).
 * Refuses when either exists: the user's team and prompt edits are never overwritten.
 */
export async function initTeam(options: {
  projectRoot: string;
  packageRoot: string;
  agents: number;
}): Promise<{ teamDir: string; files: string[] }> {
  const teamDir = teamDirOf(options.projectRoot);
  const teamFile = join(teamDir, 'team.json');
  const promptsFile = join(teamDir, 'prompts.toml');
  const existing = [teamFile, promptsFile].filter((file) => existsSync(file));
  if (existing.length > 0)
    throw new RatchetError('usage', `The team is already set up: ${existing.join(', ')} exists.`, {
      hint: 'Edit .team/team.json and .team/prompts.toml, or remove them to start over.',
    });
  if (!Number.isInteger(options.agents) || options.agents < 1 || options.agents > 12)
    throw new RatchetError('usage', `--agents must be a whole number from 1 to 12, got ${options.agents}.`);
  await mkdir(join(teamDir, 'iterations'), { recursive: true });
  await replaceText(teamFile, `${JSON.stringify(defaultTeamConfig(options.agents), null, 2)}\n`);
  await copyFile(packageTeamPromptsPath(options.packageRoot), promptsFile);
  return { teamDir, files: [teamFile, promptsFile] };
}

/** Loads `.team/team.json` and the prompts; a missing team is a usage error naming `team init`. */
export async function loadTeamContext(options: {
  projectRoot: string;
  packageRoot: string;
  /** The environment whose secrets are redacted from what the team stores (see `secretsFromEnv`). */
  env?: Readonly<Record<string, string | undefined>>;
}): Promise<TeamContext> {
  const teamDir = teamDirOf(options.projectRoot);
  const file = join(teamDir, 'team.json');
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined)
    throw new RatchetError('usage', `No team is set up in ${options.projectRoot} (${file} is missing).`, {
      hint: 'Run `ratchet team init` first.',
    });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new RatchetError('config', `${file} is not valid JSON.`, { cause: error, hint: 'Fix the file by hand.' });
  }
  const parsed = TeamConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RatchetError('config', `${file}: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`, {
      hint: 'Fix the file; `ratchet team init` in an empty directory shows the expected shape.',
    });
  }
  const names = [
    ...parsed.data.agents.map((agent) => agent.name),
    ...(parsed.data.coach ? [parsed.data.coach.name] : []),
  ];
  if (new Set([...names, 'system', 'pm']).size !== names.length + 2)
    throw new RatchetError('config', `${file}: agent and coach names must be unique and not "system" or "pm".`);
  const prompts = await loadTeamPrompts({ teamDir, packageRoot: options.packageRoot });
  return {
    projectRoot: options.projectRoot,
    teamDir,
    config: parsed.data,
    prompts,
    redact: createRedactor(secretsFromEnv(options.env ?? {})),
  };
}
