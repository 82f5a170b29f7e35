/**
 * The team may live in `[team]` of `.ratchet/config.toml` instead of `.team/team.json` (issue 16):
 * one or the other, validated by the config file's schema.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initTeam, loadTeamContext } from '../../../src/workflows/team/setup.js';
import { PACKAGE_ROOT } from '../../support/run-cli.js';

const TEAM_TABLE = `[provider]
name = "anthropic"

[team]
max_turns = 8
[[team.agents]]
name = "ada"
role = "Backend Engineer"
[[team.agents]]
name = "grace"
[team.coach]
name = "mentor"
[team.file_access]
writable_paths = ["lib/**"]
`;

describe('[team] in .ratchet/config.toml', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'team-config-'));
    await mkdir(join(root, '.ratchet'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const load = () => loadTeamContext({ projectRoot: root, packageRoot: PACKAGE_ROOT });

  it('sets the team up without .team/team.json, and team init then writes only the prompts', async () => {
    await writeFile(join(root, '.ratchet', 'config.toml'), TEAM_TABLE);
    const ctx = await load();
    expect(ctx.config.agents.map((agent) => [agent.name, agent.role])).toEqual([
      ['ada', 'Backend Engineer'],
      ['grace', 'Software Engineer'],
    ]);
    expect(ctx.config.coach?.name).toBe('mentor');
    expect(ctx.config.max_turns).toBe(8);
    expect(ctx.config.file_access.writable_paths).toEqual(['lib/**']);
    expect(ctx.config.file_access.enable_approvals).toBe(true);

    const init = await initTeam({ projectRoot: root, packageRoot: PACKAGE_ROOT, agents: 3 });
    expect(init.files).toEqual([join(root, '.team', 'prompts.toml')]);
    expect(existsSync(join(root, '.team', 'team.json'))).toBe(false);
    expect((await load()).config.agents).toHaveLength(2);
  });

  it('refuses a team set up twice, and a [team] the schema refuses', async () => {
    await initTeam({ projectRoot: root, packageRoot: PACKAGE_ROOT, agents: 3 });
    await writeFile(join(root, '.ratchet', 'config.toml'), TEAM_TABLE);
    await expect(load()).rejects.toThrow(/The team is set up twice/);

    await rm(join(root, '.team', 'team.json'));
    await writeFile(join(root, '.ratchet', 'config.toml'), '[team]\n[[team.agents]]\nname = "../evil"\n');
    await expect(load()).rejects.toThrow(/agent names are letters, digits/);
  });
});
