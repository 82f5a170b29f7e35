/**
 * `team checkpoint create|list|restore` over the current iteration, shared by the CLI and the
 * TUI. Restoring takes the iteration's lock: under a running session (or `advance`) the session
 * would go on writing into the restored state, so it is refused while one runs.
 */
import type { TeamContext } from './context.js';
import { createIterationStore } from './file-stores.js';
import { lockIteration } from './iteration-lock.js';
import { iterationStores } from './iteration-session.js';
import type { CheckpointInfo } from './stores.js';

export interface IterationCheckpoints {
  list(): Promise<CheckpointInfo[]>;
  create(description: string): Promise<CheckpointInfo>;
  /** Makes the iteration's state exactly what checkpoint `number` saved. */
  restore(number: number): Promise<CheckpointInfo>;
}

export function iterationCheckpoints(ctx: TeamContext): IterationCheckpoints {
  const current = async () => {
    const { iteration, dir } = await createIterationStore(ctx.teamDir).getCurrent();
    return { iteration, store: iterationStores(ctx, dir, iteration.id).checkpoints };
  };
  return {
    list: async () => (await current()).store.list(),
    create: async (description) => (await current()).store.create(description),
    async restore(number) {
      const { iteration, store } = await current();
      await using _lock = await lockIteration(ctx.teamDir, iteration.id);
      return store.restore(number);
    },
  };
}
