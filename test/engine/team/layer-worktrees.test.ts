import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { ResolvedConfig } from '../../../src/config/resolved.js';
import { Git } from '../../../src/git/git.js';
import { createProcessRunner } from '../../../src/process/runner.js';
import { mergeLayer, reviewLayer, setupLayer, type TeamLayerTarget } from '../../../src/engine/team/layer-worktrees.js';
import type { LayerTaskInput } from '../../../src/workflows/team/layers/layer-plan.js';
import { sandboxForThisMachine } from '../../support/sandbox-for-this-machine.js';
import { createTempRepo, type TempRepo } from '../../support/temp-repo.js';

const sandbox = sandboxForThisMachine();
const BRANCH = 'ratchet/team-iter-1-0a1b2c3d';

/** Layer 0: add and mul, each on its own; layer 1: calc, which needs both. */
const TASKS: LayerTaskInput[] = [
  { id: 'T1-add', depends_on: [] },
  { id: 'T2-mul', depends_on: [] },
  { id: 'T3-calc', depends_on: ['T1-add', 'T2-mul'] },
];

const FILES = {
  'package.json': JSON.stringify({ name: 'calc', type: 'module', scripts: { test: 'node --test' } }),
  'test/base.test.js': "import test from 'node:test';\ntest('base', () => {});\n",
};

function moduleAndTest(name: string, body: string, assertion: string): Record<string, string> {
  return {
    [`src/${name}.js`]: body,
    [`test/${name}.test.js`]: `import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport * as m from '../src/${name}.js';\ntest('${name}', () => { ${assertion} });\n`,
  };
}

async function writeIn(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

describe(`ratchet team worktrees: a layer's task worktrees, merged and verified${sandbox.note}`, () => {
  let repo: TempRepo;
  let config: ResolvedConfig;
  let target: (layer: number) => TeamLayerTarget;
  const merge = (layer: number) =>
    mergeLayer({ ...target(layer), config, runner: createProcessRunner(), env: process.env });

  beforeEach(async () => {
    repo = await createTempRepo({ files: FILES });
    const home = repo.path('home', '.ratchet');
    config = await loadConfig({ repoRoot: repo.dir, env: { RATCHET_HOME: home }, flags: sandbox.configFlags });
    // The iteration's workspace, as 'team run' makes it: its own branch in a worktree under the home.
    const worktree = join(home, 'worktrees', 'team-iter-1-0a1b2c3d');
    await repo.git.addWorktree(worktree, BRANCH, 'HEAD');
    target = (layer) => ({
      repoRoot: repo.dir,
      iterationId: 'iter-1',
      iteration: { branch: BRANCH, worktree },
      layer,
      tasks: TASKS,
    });
  });
  afterEach(async () => {
    await repo.cleanup();
  });

  it('implements two layers: each starts from the merged result of the one before, and the checkout never changes', async () => {
    const mainBefore = repo.run('rev-parse', 'main');
    // What the team wrote in the iteration's workspace in earlier phases, not committed yet.
    await writeIn(target(0).iteration.worktree, { 'docs/plan.md': '# plan\n' });
    const setup = await setupLayer(target(0));
    expect(repo.run('rev-parse', `${setup.base}^`)).toBe(mainBefore);
    expect(repo.run('show', `${setup.base}:docs/plan.md`)).toBe('# plan');
    expect(setup.tasks.map((task) => [task.id, task.branch, task.made])).toEqual([
      ['T1-add', `${BRANCH}-L0-T1-add`, 'created'],
      ['T2-mul', `${BRANCH}-L0-T2-mul`, 'created'],
    ]);
    const [add, mul] = setup.tasks;
    if (add === undefined || mul === undefined) throw new Error('two tasks expected');
    // One task commits its work, the other leaves it uncommitted (merge commits it).
    await writeIn(
      add.worktree,
      moduleAndTest('add', 'export const add = (a, b) => a + b;\n', 'assert.equal(m.add(2, 3), 5);'),
    );
    await new Git(add.worktree).commitAll('add');
    await writeIn(
      mul.worktree,
      moduleAndTest('mul', 'export const mul = (a, b) => a * b;\n', 'assert.equal(m.mul(2, 3), 6);'),
    );

    const review = await reviewLayer(target(0));
    const [addReview, mulReview] = review.tasks;
    expect(addReview?.status).toBe('ready');
    if (addReview?.status !== 'ready') throw new Error('unreachable');
    expect(addReview.diff).toContain('+export const add = (a, b) => a + b;');
    expect(addReview.stat.files.map((file) => file.path).sort()).toEqual(['src/add.js', 'test/add.test.js']);
    expect(mulReview?.status).toBe('ready');
    if (mulReview?.status !== 'ready') throw new Error('unreachable');
    expect(mulReview.diff).toBe('');
    expect(mulReview.uncommitted.sort()).toEqual(['src/', 'test/mul.test.js']);
    // What is not committed yet is shown too, new files whole.
    expect(mulReview.pending).toContain(
      'New file src/mul.js (not committed yet):\nexport const mul = (a, b) => a * b;',
    );
    expect(addReview.pending).toBe('');

    const first = await merge(0);
    expect(first.outcome).toBe('merged');
    if (first.outcome !== 'merged') throw new Error(JSON.stringify(first));
    expect(first).toMatchObject({ merged: ['T1-add', 'T2-mul'], nextLayer: 1, done: false });
    expect(first.verification.decision.accepted).toBe(true);
    expect(first.verification.commands[0]).toBe('npm test');
    expect(repo.run('ls-tree', '-r', '--name-only', BRANCH).split('\n')).toEqual(
      expect.arrayContaining(['src/add.js', 'src/mul.js']),
    );
    // The worktrees of the merged layer are gone, their branches stay.
    expect(existsSync(add.worktree)).toBe(false);
    expect(repo.run('branch', '--list', `${BRANCH}-L0-*`).split('\n')).toHaveLength(2);
    expect((await reviewLayer(target(0))).tasks.map((task) => task.status)).toEqual(['merged', 'merged']);

    const second = await setupLayer(target(1));
    expect(second.base).toBe(first.head);
    const [calc] = second.tasks;
    if (calc === undefined) throw new Error('one task expected');
    expect(await readFile(join(calc.worktree, 'src/mul.js'), 'utf8')).toContain('a * b');
    await writeIn(
      calc.worktree,
      moduleAndTest(
        'calc',
        "import { add } from './add.js';\nimport { mul } from './mul.js';\nexport const calc = (a, b) => mul(add(a, b), 2);\n",
        'assert.equal(m.calc(1, 2), 6);',
      ),
    );
    const last = await merge(1);
    expect(last).toMatchObject({ outcome: 'merged', merged: ['T3-calc'], nextLayer: 2, done: true });

    expect(repo.run('rev-parse', 'main')).toBe(mainBefore);
    expect(repo.run('status', '--porcelain')).toBe('');
    expect(repo.run('branch', '--show-current')).toBe('main');
  });

  it('a conflict stops the merge with the task and files named, the iteration branch as it was and the work kept', async () => {
    const tasks: LayerTaskInput[] = [{ id: 'A' }, { id: 'B' }];
    const conflicting = (layer: number): TeamLayerTarget => ({ ...target(layer), tasks });
    const setup = await setupLayer(conflicting(0));
    for (const [index, task] of setup.tasks.entries()) {
      await writeIn(task.worktree, {
        'test/base.test.js': `import test from 'node:test';\ntest('base ${index}', () => {});\n`,
      });
      await new Git(task.worktree).commitAll(`edit ${task.id}`);
    }
    const before = repo.run('rev-parse', BRANCH);
    const tipB = repo.run('rev-parse', `${BRANCH}-L0-B`);
    const result = await mergeLayer({ ...conflicting(0), config, runner: createProcessRunner(), env: process.env });
    expect(result).toMatchObject({ outcome: 'conflict', task: 'B', files: ['test/base.test.js'] });
    // A was merged before B conflicted: that is undone too, so the layer merges all or nothing.
    expect(repo.run('rev-parse', BRANCH)).toBe(before);
    expect(repo.run('rev-parse', `${BRANCH}-L0-B`)).toBe(tipB);
    expect(await new Git(conflicting(0).iteration.worktree).hasChanges()).toBe(false);
    expect(setup.tasks.every((task) => existsSync(task.worktree))).toBe(true);
  });

  it('a red verifier stops the merge: the layer is not advanced and the iteration branch is as it was', async () => {
    const setup = await setupLayer(target(0));
    const [add] = setup.tasks;
    if (add === undefined) throw new Error('task expected');
    await writeIn(
      add.worktree,
      moduleAndTest('add', 'export const add = (a, b) => a - b;\n', 'assert.equal(m.add(2, 3), 5);'),
    );
    const before = repo.run('rev-parse', BRANCH);
    // Only T1 is implemented here; the empty T2 is allowed (a layer with an empty task is refused otherwise).
    const result = await mergeLayer({
      ...target(0),
      allowEmpty: true,
      config,
      runner: createProcessRunner(),
      env: process.env,
    });
    expect(result.outcome).toBe('red');
    if (result.outcome !== 'red') throw new Error('unreachable');
    expect(result.verification.decision.accepted).toBe(false);
    if (result.verification.decision.accepted) throw new Error('unreachable');
    expect(result.verification.decision.feedback).toContain('add');
    expect(repo.run('rev-parse', BRANCH)).toBe(before);
    // The task's work was committed on its branch and is still there, as is its worktree.
    expect(repo.run('show', `${BRANCH}-L0-T1-add:src/add.js`)).toContain('a - b');
    expect(existsSync(add.worktree)).toBe(true);
    expect(await new Git(target(0).iteration.worktree).hasChanges()).toBe(false);
  });

  it('a task worktree holding a link that leads outside the repository is refused before anything merges', async () => {
    const setup = await setupLayer(target(0));
    const [add] = setup.tasks;
    if (add === undefined) throw new Error('task expected');
    await symlink(repo.path('home'), join(add.worktree, 'escape'));
    const before = repo.run('rev-parse', BRANCH);
    const result = await merge(0);
    expect(result).toMatchObject({
      outcome: 'unsafe',
      task: 'T1-add',
      entries: [{ kind: 'link-outside', path: 'escape' }],
    });
    expect(repo.run('rev-parse', BRANCH)).toBe(before);
    expect(repo.run('rev-parse', `${BRANCH}-L0-T1-add`)).toBe(before);
  });

  it('refuses review and merge before setup, and a layer past the last one', async () => {
    await expect(reviewLayer(target(0))).rejects.toThrow(/no worktrees yet/);
    await expect(merge(0)).rejects.toThrow(/no worktrees yet/);
    await expect(setupLayer(target(2))).rejects.toThrow(/Every layer of iteration iter-1 is merged \(2 layers\)/);
  });
});
