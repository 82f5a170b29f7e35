/**
 * `ratchet team worktrees setup|review|merge` through the built CLI, on an iteration whose
 * planning produced two layers: each layer's tasks get worktrees from the iteration's branch,
 * merge runs the project's real `node --test` and advances `current_layer`, a red layer is not
 * merged, and the user's checkout never changes.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Git } from '../../src/git/git.js';
import { createArtifactStore, createIterationStore } from '../../src/workflows/team/file-stores.js';
import { initTeam, teamDirOf } from '../../src/workflows/team/setup.js';
import { createIterationWorkspace } from '../../src/workflows/team/workspace.js';
import { PACKAGE_ROOT, runCli } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

const sandbox = sandboxForThisMachine();

const setupJson = (stdout: string) =>
  JSON.parse(stdout) as { iterationBranch: string; base: string; tasks: Array<{ id: string; worktree: string }> };

async function writeIn(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

const moduleAndTest = (name: string, body: string, assertion: string): Record<string, string> => ({
  [`src/${name}.js`]: body,
  [`test/${name}.test.js`]: `import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport * as m from '../src/${name}.js';\ntest('${name}', () => { ${assertion} });\n`,
});

describe(`ratchet team worktrees: two layers implemented in worktrees and merged green${sandbox.note}`, () => {
  let repo: TempRepo;
  let env: Record<string, string>;
  const cli = (...args: string[]) =>
    runCli(['team', 'worktrees', ...args, ...(args[0] === 'merge' ? sandbox.flags : [])], { cwd: repo.dir, env });
  const iteration = async () => (await createIterationStore(teamDirOf(repo.dir)).getCurrent()).iteration;

  beforeEach(async () => {
    repo = await createTempRepo({
      files: {
        'package.json': JSON.stringify({ name: 'calc', type: 'module', scripts: { test: 'node --test' } }),
        'test/base.test.js': "import test from 'node:test';\ntest('base', () => {});\n",
      },
    });
    const home = repo.path('ratchet-home');
    env = { RATCHET_HOME: home, HOME: repo.path('home') };
    // An iteration after planning, as `team init`, `team run` and `team advance` leave it.
    await initTeam({ projectRoot: repo.dir, packageRoot: PACKAGE_ROOT, agents: 3 });
    const iterations = createIterationStore(teamDirOf(repo.dir));
    const { iteration: created, dir } = await iterations.create({ description: 'a calculator', maxTurns: 12 });
    const workspace = await createIterationWorkspace({ projectRoot: repo.dir, home, iterationId: created.id });
    await iterations.saveFields(created.id, { ...workspace, phase: 'implementation' });
    await createArtifactStore(dir).writeTasks([
      {
        id: 'T1',
        description: 'add',
        done_criteria: '',
        depends_on: [],
        assigned_to: 'agent-1',
        status: 'pending',
        layer: 0,
      },
      {
        id: 'T2',
        description: 'mul',
        done_criteria: '',
        depends_on: [],
        assigned_to: 'agent-2',
        status: 'pending',
        layer: 0,
      },
      {
        id: 'T3',
        description: 'calc',
        done_criteria: '',
        depends_on: ['T1', 'T2'],
        assigned_to: 'agent-3',
        status: 'pending',
        layer: 1,
      },
    ]);
  });
  afterEach(async () => {
    await repo.cleanup();
  });

  it('sets up, reviews and merges each layer; a red layer stays unmerged and current_layer where it was', async () => {
    const head = repo.run('rev-parse', 'HEAD');
    const setup = await cli('setup', '--json');
    expect(setup.exitCode, setup.stderr).toBe(0);
    const layer0 = setupJson(setup.stdout);
    expect(layer0.tasks.map((task) => task.id)).toEqual(['T1', 'T2']);
    const [t1, t2] = layer0.tasks;
    if (t1 === undefined || t2 === undefined) throw new Error('two tasks expected');
    await writeIn(
      t1.worktree,
      moduleAndTest('add', 'export const add = (a, b) => a + b;\n', 'assert.equal(m.add(2, 3), 5);'),
    );
    await new Git(t1.worktree).commitAll('T1: add');
    await writeIn(
      t2.worktree,
      moduleAndTest('mul', 'export const mul = (a, b) => a * b;\n', 'assert.equal(m.mul(2, 3), 6);'),
    );

    const review = await cli('review');
    expect(review.exitCode, review.stderr).toBe(0);
    expect(review.stdout).toContain('T1  ready');
    expect(review.stdout).toContain('+export const add = (a, b) => a + b;');
    expect(review.stdout).toMatch(/uncommitted in .*T2 \(merge commits them\): src\/, test\/mul\.test\.js/);

    const merged = await cli('merge');
    expect(merged.exitCode, merged.stderr).toBe(0);
    expect(merged.stdout).toMatch(/Merged T1, T2: All 3 tests pass/);
    expect(merged.stdout).toContain('Layer 1 is next');
    expect((await iteration()).current_layer).toBe(1);

    const layer1 = setupJson((await cli('setup', '--json')).stdout);
    const [t3] = layer1.tasks;
    if (t3 === undefined) throw new Error('one task expected');
    expect(await readFile(join(t3.worktree, 'src/mul.js'), 'utf8')).toContain('a * b');
    const calc =
      "import { add } from './add.js';\nimport { mul } from './mul.js';\nexport const calc = (a, b) => mul(add(a, b), 2);\n";
    await writeIn(t3.worktree, moduleAndTest('calc', calc, 'assert.equal(m.calc(1, 2), 7);'));
    const red = await cli('merge');
    expect(red.exitCode).toBe(1);
    expect(red.stderr).toContain('fails verification: nothing was merged');
    expect((await iteration()).current_layer).toBe(1);

    await writeIn(t3.worktree, moduleAndTest('calc', calc, 'assert.equal(m.calc(1, 2), 6);'));
    const green = await cli('merge');
    expect(green.exitCode, green.stderr).toBe(0);
    expect(green.stdout).toContain('Every layer is merged');
    expect((await iteration()).current_layer).toBe(2);
    expect(repo.run('ls-tree', '-r', '--name-only', layer1.iterationBranch)).toContain('src/calc.js');

    const past = await cli('setup');
    expect(past.exitCode).toBe(2);
    expect(past.stderr).toContain('Every layer of iteration iter-1 is merged (2 layers)');
    expect(repo.run('rev-parse', 'HEAD')).toBe(head);
    expect(repo.run('status', '--porcelain', '--untracked-files=no')).toBe('');
  });
});
