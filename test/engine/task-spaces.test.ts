/**
 * The local pool's task spaces (`createTaskSpaces`): every worker opens one at once when a run
 * starts, so opening and disposing many together must work: git keeps its worktrees in
 * `.git/worktrees/`, and a `worktree add` that meets another one half made failed the task
 * ("failed to read .git/worktrees/T6-1/commondir") on a loaded machine.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { RunModels } from '../../src/agent/models/run-models.js';
import { createTaskSpaces, taskBranch } from '../../src/engine/tasks/task-spaces.js';
import { Git } from '../../src/git/git.js';
import { createProcessRunner } from '../../src/process/runner.js';
import type { RunInfo, TaskSpace } from '../../src/workflows/definition.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;

beforeEach(async () => {
  repo = await createTempRepo({ files: { 'README.md': '# pool\n', 'src/a.js': 'export const a = 1;\n' } });
});

afterEach(async () => {
  await repo.cleanup();
});

/** Models whose agents are never asked for here: the spaces only hand them out. */
const NO_MODELS: RunModels = {
  stored: { provider: 'replay' },
  provider: 'replay',
  model: null,
  notices: [],
  startFields: () => ({}),
  resumedCheckpointFields: () => ({}),
  open: () => ({
    forStage: () => {
      throw new Error('no agent in this test');
    },
  }),
} as unknown as RunModels;

async function spacesOfRun() {
  const config = await loadConfig({ repoRoot: repo.dir, env: { RATCHET_HOME: repo.path('home') } });
  const head = await repo.git.head();
  const worktree = repo.path('home', 'worktrees', 'run-1');
  await repo.git.addWorktree(worktree, 'ratchet/run-1', head);
  const run: RunInfo = {
    id: 'run-1',
    repoRoot: repo.dir,
    target: repo.dir,
    isGit: true,
    hidden: [],
    worktree,
    branch: 'ratchet/run-1',
    baseBranch: 'main',
    baseCommit: head,
    feature: 'tasks',
  };
  const spaces = createTaskSpaces({
    run,
    // No sandbox: what is tested is git's bookkeeping, on any machine.
    config: { ...config, bash: { ...config.bash, sandbox: 'off' } },
    models: NO_MODELS,
    runner: createProcessRunner(),
    env: {},
    runDir: repo.path('run-dir'),
  });
  return { spaces, head, run };
}

describe('task spaces', () => {
  it('opens and disposes eight task spaces at once, each a worktree on its own branch at the start point', async () => {
    const { spaces, head, run } = await spacesOfRun();
    const keys = Array.from({ length: 8 }, (_, index) => `T${index + 1}`);
    for (const round of [1, 2, 3]) {
      const opened: TaskSpace[] = await Promise.all(
        keys.map((key) => spaces.open({ key, attempt: round, startPoint: head })),
      );
      for (const [index, space] of opened.entries()) {
        expect(space.branch).toBe(taskBranch(run.id, keys[index] ?? '', round));
        expect(space.head).toBe(head);
        expect(await new Git(space.worktree).head()).toBe(head);
        expect(existsSync(join(space.worktree, 'src', 'a.js'))).toBe(true);
      }
      await Promise.all(opened.map((space) => space[Symbol.asyncDispose]()));
      for (const space of opened) expect(existsSync(space.worktree)).toBe(false);
    }
    // Only the checkout and the run's worktree are left registered.
    expect((await repo.git.listWorktrees()).map((entry) => entry.path)).toEqual([repo.dir, run.worktree]);
  });

  it('opens an attempt again on the branch it made, with what it committed there', async () => {
    const { spaces, head } = await spacesOfRun();
    const first = await spaces.open({ key: 'T1', attempt: 1, startPoint: head });
    await new Git(first.worktree).commitAll('test: the first opening', { allowEmpty: true });
    const committed = await new Git(first.worktree).head();
    await first[Symbol.asyncDispose]();
    await using again = await spaces.open({ key: 'T1', attempt: 1, startPoint: head });
    expect(again.head).toBe(committed);
    // Another task's branch is made anew at the start point.
    await using other = await spaces.open({ key: 'T2', attempt: 1, startPoint: head });
    expect(other.head).toBe(head);
  });

  it("checks out a branch an earlier process left as it is, its head the space's", async () => {
    const { spaces, head, run } = await spacesOfRun();
    const left = repo.path('left');
    await repo.git.addWorktree(left, taskBranch(run.id, 'T1', 1), head);
    const git = new Git(left);
    await git.commitAll('test: what the killed attempt committed', { allowEmpty: true });
    const committed = await git.head();
    await repo.git.removeWorktree(left, { force: true });
    await using space = await spaces.open({ key: 'T1', attempt: 1, startPoint: head });
    expect(committed).not.toBe(head);
    expect(space.head).toBe(committed);
    expect(await new Git(space.worktree).head()).toBe(committed);
  });
});
