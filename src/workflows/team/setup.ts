/**
 * `.team/` on disk: `team init` writes it, every other command loads it into a `TeamContext`.
 */
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfigText } from '../../config/load.js';
import { configPath } from '../../config/write-default.js';
import { RatchetError } from '../../core/errors.js';
import { Git } from '../../git/git.js';
import { createRedactor, secretsFromEnv } from '../../core/redact.js';
import type { TeamContext } from './context.js';
import { replaceText } from './file-stores.js';
import { loadTeamPrompts, packageTeamPromptsPath } from './prompts.js';
import { TeamConfigSchema, type TeamConfig } from './types.js';

export function teamDirOf(projectRoot: string): string {
  return join(projectRoot, '.team');
}

/**
 * `.team/` is Ratchet's, as `.ratchet/` is: kept out of git (`.git/info/exclude`), so the checkout
 * never shows it as an uncommitted change, which would stop the next run (`ratchet tdd`, `solve`,
 * `tasks run`) and `accept`. Its conversation logs change with every command. To share the team's
 * settings, `git add -f .team/team.json .team/prompts.toml`: tracked files are not excluded.
 */
async function keepTeamOutOfGit(projectRoot: string): Promise<void> {
  if (await Git.isRepository(projectRoot)) await new Git(projectRoot).addInfoExclude(['/.team/']);
}

/** The team `team init` writes: `agents` engineers and a coach. */
export function defaultTeamConfig(agents: number): TeamConfig {
  return TeamConfigSchema.parse({
    agents: Array.from({ length: agents }, (_, index) => ({ name: `agent-${index + 1}`, role: 'Software Engineer' })),
    coach: { name: 'coach', role: 'Agile Coach' },
  });
}

/** The `[team]` table of the repository's `.ratchet/config.toml` (validated), when it has one. */
async function configuredTeam(projectRoot: string): Promise<{ team: TeamConfig; file: string } | null> {
  const file = configPath(projectRoot);
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return null;
  const { team } = parseConfigText(text, file).config;
  return team === undefined ? null : { team, file };
}

/**
 * Creates `.team/team.json` (unless `[team]` in `.ratchet/config.toml` already says who is on the
 * team) and `.team/prompts.toml` (a copy of the package's team prompts). Refuses when either
 * exists: the user's team and prompt edits are never overwritten.
 */
export async function initTeam(options: {
  projectRoot: string;
  packageRoot: string;
  agents: number;
}): Promise<{ teamDir: string; files: string[] }> {
  const teamDir = teamDirOf(options.projectRoot);
  const teamFile = join(teamDir, 'team.json');
  const promptsFile = join(teamDir, 'prompts.toml');
  const inConfig = await configuredTeam(options.projectRoot);
  const existing = [...(inConfig === null ? [teamFile] : []), promptsFile].filter((file) => existsSync(file));
  const verb = existing.length === 1 ? 'exists' : 'exist';
  if (existing.length > 0)
    throw new RatchetError('usage', `The team is already set up: ${existing.join(' and ')} ${verb}.`, {
      hint: 'Edit .team/team.json and .team/prompts.toml, or remove them to start over.',
    });
  if (!Number.isInteger(options.agents) || options.agents < 1 || options.agents > 12)
    throw new RatchetError('usage', `--agents must be a whole number from 1 to 12, got ${options.agents}.`);
  await keepTeamOutOfGit(options.projectRoot);
  await mkdir(join(teamDir, 'iterations'), { recursive: true });
  if (inConfig === null) await replaceText(teamFile, `${JSON.stringify(defaultTeamConfig(options.agents), null, 2)}\n`);
  await copyFile(packageTeamPromptsPath(options.packageRoot), promptsFile);
  return { teamDir, files: [...(inConfig === null ? [teamFile] : []), promptsFile] };
}

/**
 * The team from `.team/team.json` or `[team]` of `.ratchet/config.toml`: one or the other, since
 * two teams would leave the user guessing which one talks.
 */
async function teamConfigOf(projectRoot: string, teamFile: string): Promise<{ config: TeamConfig; file: string }> {
  const text = await readFile(teamFile, 'utf8').catch(() => undefined);
  const inConfig = await configuredTeam(projectRoot);
  if (text !== undefined && inConfig !== null)
    throw new RatchetError('config', `The team is set up twice: in ${teamFile} and in [team] of ${inConfig.file}.`, {
      hint: 'Keep one: remove .team/team.json or the [team] table.',
    });
  if (inConfig !== null) return { config: inConfig.team, file: inConfig.file };
  if (text === undefined)
    throw new RatchetError('usage', `No team is set up in ${projectRoot} (${teamFile} is missing).`, {
      hint: 'Run `ratchet team init` first (or write a [team] table in .ratchet/config.toml).',
    });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new RatchetError('config', `${teamFile} is not valid JSON.`, { cause: error, hint: 'Fix the file by hand.' });
  }
  const parsed = TeamConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RatchetError(
      'config',
      `${teamFile}: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
      {
        hint: 'Fix the file; `ratchet team init` in an empty directory shows the expected shape.',
      },
    );
  }
  return { config: parsed.data, file: teamFile };
}

/** The names of the team's agents (who may be assigned tasks). */
export async function teamAgentNames(projectRoot: string): Promise<string[]> {
  const { config } = await teamConfigOf(projectRoot, join(teamDirOf(projectRoot), 'team.json'));
  return config.agents.map((agent) => agent.name);
}

/** Loads the team (`.team/team.json` or `[team]`) and the prompts; none is a usage error naming `team init`. */
export async function loadTeamContext(options: {
  projectRoot: string;
  packageRoot: string;
  /** The environment whose secrets are redacted from what the team stores (see `secretsFromEnv`). */
  env?: Readonly<Record<string, string | undefined>>;
}): Promise<TeamContext> {
  const teamDir = teamDirOf(options.projectRoot);
  const { config, file } = await teamConfigOf(options.projectRoot, join(teamDir, 'team.json'));
  const names = [...config.agents.map((agent) => agent.name), ...(config.coach ? [config.coach.name] : [])];
  if (new Set([...names, 'system', 'pm']).size !== names.length + 2)
    throw new RatchetError('config', `${file}: agent and coach names must be unique and not "system" or "pm".`);
  const prompts = await loadTeamPrompts({ teamDir, packageRoot: options.packageRoot });
  // Also for a .team/ made before Ratchet kept it out of git.
  await keepTeamOutOfGit(options.projectRoot);
  return {
    projectRoot: options.projectRoot,
    teamDir,
    config,
    prompts,
    redact: createRedactor(secretsFromEnv(options.env ?? {})),
  };
}
