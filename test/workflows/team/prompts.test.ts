import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadTeamPrompts, packageTeamPromptsPath } from '../../../src/workflows/team/prompts.js';
import { PACKAGE_ROOT } from '../../support/run-cli.js';

describe('team prompts', () => {
  let teamDir: string;
  beforeEach(async () => {
    teamDir = await mkdtemp(join(tmpdir(), 'team-prompts-'));
  });
  afterEach(async () => {
    await rm(teamDir, { recursive: true, force: true });
  });

  it("uses the package prompts until .team/prompts.toml exists, then the user's copy", async () => {
    const builtIn = await loadTeamPrompts({ teamDir, packageRoot: PACKAGE_ROOT });
    expect(builtIn.coach.system.split('\n')[0]).toBe('Stage: COACH');
    const text = await readFile(packageTeamPromptsPath(PACKAGE_ROOT), 'utf8');
    await writeFile(join(teamDir, 'prompts.toml'), text.replace('You do not do the engineering.', 'Be brief, coach.'));
    const custom = await loadTeamPrompts({ teamDir, packageRoot: PACKAGE_ROOT });
    expect(custom.coach.system).toContain('Be brief, coach.');
  });

  it('refuses a prompts file whose system prompt lost its Stage line', async () => {
    const text = await readFile(packageTeamPromptsPath(PACKAGE_ROOT), 'utf8');
    await writeFile(join(teamDir, 'prompts.toml'), text.replace('Stage: EXTRACT_TASKS\n', ''));
    await expect(loadTeamPrompts({ teamDir, packageRoot: PACKAGE_ROOT })).rejects.toThrow(/Stage: EXTRACT_TASKS/);
  });
});
