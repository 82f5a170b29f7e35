import { RatchetError } from '../../core/errors.js';
import type { ArtifactStore, IterationStore } from '../../workflows/team/stores.js';
import type { TeamLayerTarget } from './layer-worktrees.js';

/** The stores `ratchet team worktrees` and the TUI read the iteration's layer through. */
export interface LayerStores {
  iterations: IterationStore;
  /** The artifacts (`tasks.json`) of the iteration in `dir`. */
  artifactsOf(dir: string): ArtifactStore;
}

/**
 * The current iteration's layer as its files hold it: `current_layer` (0 until a merge advances
 * it) and the tasks of `tasks.json`. Refuses an iteration without tasks: they come from planning.
 */
export async function currentLayerTarget(
  stores: LayerStores,
  place: { repoRoot: string; home: string },
): Promise<TeamLayerTarget> {
  const { iteration, dir } = await stores.iterations.getCurrent();
  const tasks = await stores.artifactsOf(dir).readTasks();
  if (tasks === null)
    throw new RatchetError('usage', `Iteration ${iteration.id} has no tasks.json yet.`, {
      hint: "Tasks come from planning: run 'ratchet team advance' at the end of the planning phase.",
    });
  return { ...place, iterationId: iteration.id, layer: iteration.current_layer ?? 0, tasks };
}

/** Records that the iteration's next layer starts (after a green `merge`). */
export async function advanceLayer(stores: LayerStores, iterationId: string, nextLayer: number): Promise<void> {
  await stores.iterations.saveFields(iterationId, { current_layer: nextLayer });
}
