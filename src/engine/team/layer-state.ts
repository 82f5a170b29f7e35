import { RatchetError } from '../../core/errors.js';
import { createArtifactStore, createIterationStore } from '../../workflows/team/file-stores.js';
import { lockIteration } from '../../workflows/team/iteration-lock.js';
import type { TeamRecord } from '../../workflows/team/ledger-record.js';
import { teamAgentNames, teamDirOf } from '../../workflows/team/setup.js';
import type { ArtifactStore, IterationStore } from '../../workflows/team/stores.js';
import { phaseTasks } from '../../workflows/team/layers/layer-plan.js';
import { recordedWorkspace } from '../../workflows/team/workspace.js';
import { mergeLayer, type LayerMerge, type LayerMergeOptions, type TeamLayerTarget } from './layer-worktrees.js';

/** The stores `ratchet team worktrees` and the TUI read the iteration's layer through. */
export interface LayerStores {
  iterations: IterationStore;
  /** The artifacts (`tasks.json`) of the iteration in `dir`. */
  artifactsOf(dir: string): ArtifactStore;
}

/** The team's file stores of a repository (`.team/`), as every team command opens them. */
export function teamLayerStores(repoRoot: string): LayerStores {
  return { iterations: createIterationStore(teamDirOf(repoRoot)), artifactsOf: createArtifactStore };
}

/**
 * The current iteration's layer as its files hold it: `current_layer` (0 until a merge advances
 * it) and the tasks of `tasks.json`. Refuses an iteration without tasks: they come from planning.
 */
export async function currentLayerTarget(stores: LayerStores, repoRoot: string): Promise<TeamLayerTarget> {
  const { iteration, dir } = await stores.iterations.getCurrent();
  const workspace = recordedWorkspace(iteration);
  if (workspace === null)
    throw new RatchetError('usage', `Iteration ${iteration.id} has no workspace (its worktree and branch).`, {
      hint: "An iteration gets one when it starts ('ratchet team run'); if its directory was removed, check its branch out there again with git worktree add.",
    });
  const layer = iteration.current_layer ?? 0;
  const tasks = phaseTasks(await stores.artifactsOf(dir).readTasks(), iteration.phase, layer);
  if (tasks === null)
    throw new RatchetError('usage', `Iteration ${iteration.id} has no tasks.json yet.`, {
      hint: "Tasks come from planning: run 'ratchet team advance' at the end of the planning phase.",
    });
  return {
    repoRoot,
    iterationId: iteration.id,
    iteration: { branch: workspace.branch, worktree: workspace.workspace },
    layer,
    tasks,
    agents: await teamAgentNames(repoRoot),
  };
}

/**
 * `team worktrees merge` of the current iteration (the CLI's and the TUI's): merges its current
 * layer and, green, records that the next layer starts. It holds the iteration's lock, as a
 * session and `advance` do, so no conversation or phase change runs while the layer merges.
 * Green, each task's merge commit goes to the iteration's ledger run through `record` as a
 * checkpoint of stage VERIFY, as `tasks run` records its merges, for `report` and `status`.
 */
export async function mergeCurrentLayer(
  repoRoot: string,
  options: Omit<LayerMergeOptions, keyof TeamLayerTarget>,
  record?: TeamRecord,
): Promise<{ target: TeamLayerTarget; result: LayerMerge }> {
  const stores = teamLayerStores(repoRoot);
  const target = await currentLayerTarget(stores, repoRoot);
  await using _lock = await lockIteration(teamDirOf(repoRoot), target.iterationId);
  const result = await mergeLayer({ ...target, ...options });
  if (result.outcome === 'merged') {
    await stores.iterations.saveFields(target.iterationId, { current_layer: result.nextLayer });
    for (const { commit, subject } of result.commits)
      await record?.({ type: 'checkpoint-create', stage: 'VERIFY', phase: 'COMPLETE', commit, subject });
  }
  return { target, result };
}
