/**
 * `team approve` writes where the approval was asked for: the worktree it records (the iteration's
 * workspace or a task's worktree), and only when that is still one of the iteration's worktrees.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createProcessRunner } from '../../../src/process/runner.js';
import { currentLayerTarget, teamLayerStores } from '../../../src/engine/team/layer-state.js';
import { setupLayer } from '../../../src/engine/team/layer-worktrees.js';
import { approveWrite } from '../../../src/workflows/team/approvals.js';
import type { TeamContext } from '../../../src/workflows/team/context.js';
import { createArtifactStore, createIterationStore } from '../../../src/workflows/team/file-stores.js';
import { iterationStores } from '../../../src/workflows/team/iteration-session.js';
import { initTeam, loadTeamContext } from '../../../src/workflows/team/setup.js';
import { createIterationWorkspace } from '../../../src/workflows/team/workspace.js';
import { PACKAGE_ROOT } from '../../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../../support/temp-repo.js';

describe('approving a write', () => {
  let repo: TempRepo;
  let ctx: TeamContext;
  let workspace: string;

  beforeEach(async () => {
    repo = await createTempRepo({ files: { 'README.md': '# app\n' } });
    await initTeam({ projectRoot: repo.dir, packageRoot: PACKAGE_ROOT, agents: 2 });
    ctx = await loadTeamContext({ projectRoot: repo.dir, packageRoot: PACKAGE_ROOT });
    const iterations = createIterationStore(ctx.teamDir);
    const { iteration } = await iterations.create({ description: 'x', maxTurns: 2 });
    const made = await createIterationWorkspace({
      projectRoot: repo.dir,
      home: repo.path('ratchet-home'),
      iterationId: iteration.id,
    });
    workspace = made.workspace;
    await iterations.saveFields(iteration.id, { ...made });
  });
  afterEach(async () => {
    await repo.cleanup();
  });

  const approve = async (approval: { id: string; agent: string; path: string; content: string; worktree?: string }) => {
    const { iteration, dir } = await createIterationStore(ctx.teamDir).getCurrent();
    const stores = iterationStores(ctx, dir, iteration.id);
    await stores.approvals.add({ ...approval, status: 'pending' });
    return approveWrite(ctx, { iteration, stores, id: approval.id, runner: createProcessRunner() });
  };

  it('writes into the worktree the approval records, the workspace when it records none', async () => {
    const recorded = await approve({
      id: 'a1',
      agent: 'agent-1',
      path: 'NOTES.md',
      content: 'a\n',
      worktree: workspace,
    });
    expect(recorded.writeError).toBeNull();
    expect(await readFile(join(workspace, 'NOTES.md'), 'utf8')).toBe('a\n');
    const older = await approve({ id: 'a2', agent: 'agent-1', path: 'OLD.md', content: 'b\n' });
    expect(older.writeError).toBeNull();
    expect(await readFile(join(workspace, 'OLD.md'), 'utf8')).toBe('b\n');
  });

  it("refuses a worktree that is not the iteration's (an approval file edited to point at the checkout)", async () => {
    const decision = await approve({
      id: 'a1',
      agent: 'agent-1',
      path: 'README.md',
      content: 'pwned\n',
      worktree: repo.dir,
    });
    expect(decision.writeError).toContain('is not a worktree of this iteration');
    expect(decision.msg.content).toContain('could not be written');
    expect(await readFile(join(repo.dir, 'README.md'), 'utf8')).toBe('# app\n');
    expect(existsSync(join(workspace, 'README.md'))).toBe(true);
    expect(await readFile(join(workspace, 'README.md'), 'utf8')).toBe('# app\n');
  });

  it("refuses an approval asked for in the workspace once the layer's task worktrees are set up (the agent writes in its task's now)", async () => {
    const iterations = createIterationStore(ctx.teamDir);
    const { iteration, dir } = await iterations.getCurrent();
    await iterations.saveFields(iteration.id, { phase: 'implementation', current_layer: 0 });
    await createArtifactStore(dir).writeTasks([
      {
        id: 'T1',
        description: 'T1',
        done_criteria: '',
        depends_on: [],
        assigned_to: 'agent-1',
        status: 'pending',
        layer: 0,
      },
    ]);
    const setup = await setupLayer(await currentLayerTarget(teamLayerStores(repo.dir), repo.dir));
    const decision = await approve({
      id: 'a1',
      agent: 'agent-1',
      path: 'README.md',
      content: 'late\n',
      worktree: workspace,
    });
    expect(decision.writeError).toContain('ask for the change again there');
    expect(decision.writeError).toContain(setup.tasks[0]?.worktree);
    expect(await readFile(join(workspace, 'README.md'), 'utf8')).toBe('# app\n');
  });
});
