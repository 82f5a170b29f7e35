/**
 * `team run` without its session, shared by the CLI and the TUI: a new iteration (made current)
 * with a worktree of its own branch from HEAD under `home`, where the agents' writes land. The
 * conversation then starts through `continueIteration`, like every later session.
 */
import type { TeamContext } from './context.js';
import { createIterationStore } from './file-stores.js';
import type { Iteration } from './types.js';
import { baseCommitOf, createIterationWorkspace, type IterationWorkspace } from './workspace.js';

export async function startIteration(
  ctx: TeamContext,
  options: { description: string; maxTurns: number; home: string },
): Promise<{ iteration: Iteration; workspace: IterationWorkspace }> {
  // Checked before the iteration exists, so a repository without commits leaves nothing behind.
  await baseCommitOf(ctx.projectRoot);
  const iterations = createIterationStore(ctx.teamDir);
  const { iteration } = await iterations.create({
    description: ctx.redact(options.description),
    maxTurns: options.maxTurns,
  });
  const workspace = await createIterationWorkspace({
    projectRoot: ctx.projectRoot,
    home: options.home,
    iterationId: iteration.id,
  });
  await iterations.saveFields(iteration.id, { ...workspace });
  return { iteration: { ...iteration, ...workspace }, workspace };
}
