/**
 * A team iteration in its implementation phase, as `team run` and `team advance` leave it after
 * planning: `team init` with `agents`, optionally `writable_paths`, an iteration with its own
 * worktree and branch, and `tasks.json` holding `tasks` (layer 0 current). For tests that start
 * at the implementation phase without talking through the earlier ones.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createArtifactStore, createIterationStore } from '../../src/workflows/team/file-stores.js';
import { initTeam, teamDirOf } from '../../src/workflows/team/setup.js';
import type { TeamTask } from '../../src/workflows/team/types.js';
import { createIterationWorkspace } from '../../src/workflows/team/workspace.js';
import { PACKAGE_ROOT } from './run-cli.js';

/** A pending task of `layer`, assigned to `assigned_to`. */
export const teamTask = (id: string, assigned_to: string, layer = 0): TeamTask => ({
  id,
  description: `task ${id}`,
  done_criteria: '',
  depends_on: [],
  assigned_to,
  status: 'pending',
  layer,
});

export async function seedImplementationIteration(options: {
  projectRoot: string;
  /** `$RATCHET_HOME`, where the iteration's worktree goes. */
  home: string;
  agents: number;
  description: string;
  maxTurns: number;
  tasks: readonly TeamTask[];
  /** `file_access.writable_paths` of team.json (default: as `team init` writes it). */
  writablePaths?: readonly string[];
}): Promise<{ workspace: string; branch: string }> {
  await initTeam({ projectRoot: options.projectRoot, packageRoot: PACKAGE_ROOT, agents: options.agents });
  if (options.writablePaths !== undefined) {
    const teamFile = join(teamDirOf(options.projectRoot), 'team.json');
    const config = JSON.parse(await readFile(teamFile, 'utf8')) as { file_access: Record<string, unknown> };
    config.file_access.writable_paths = [...options.writablePaths];
    await writeFile(teamFile, JSON.stringify(config));
  }
  const iterations = createIterationStore(teamDirOf(options.projectRoot));
  const { iteration, dir } = await iterations.create({ description: options.description, maxTurns: options.maxTurns });
  const made = await createIterationWorkspace({
    projectRoot: options.projectRoot,
    home: options.home,
    iterationId: iteration.id,
  });
  await iterations.saveFields(iteration.id, { ...made, phase: 'implementation', current_layer: 0 });
  await createArtifactStore(dir).writeTasks([...options.tasks]);
  return { workspace: made.workspace, branch: made.branch };
}
