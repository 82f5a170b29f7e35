/**
 * Issue 16, `ratchet team worktrees`: what the planning model and the implementing agents wrote is
 * untrusted. Driving the built CLI:
 *
 * - A scripted planning extraction (the fake Anthropic server playing the coach) names its tasks
 *   so that their worktrees and branches would land outside the team's folder or read as git
 *   options (`../../../../escaped`, `--upload-pack=...`). `team advance` stores them as the model
 *   wrote them; `team worktrees setup` refuses them: no directory, branch or worktree is made.
 * - A task's code, run by `team worktrees merge` as the project's tests, tries to write into the
 *   user's checkout, plant a git hook and write into the user's home. The verifier runs in the
 *   sandbox: the layer merges (its tests pass), and none of those files exists afterwards.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Git } from '../../src/git/git.js';
import {
  createArtifactStore,
  createConversationStore,
  createIterationStore,
} from '../../src/workflows/team/file-stores.js';
import { initTeam, teamDirOf } from '../../src/workflows/team/setup.js';
import { createIterationWorkspace } from '../../src/workflows/team/workspace.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { describeResult, PACKAGE_ROOT, runCli } from '../support/run-cli.js';
import { createTeamBrain, type TeamBrain } from '../support/team-brain.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { toolchain } from '../support/toolchains.js';

const bwrap = toolchain('bwrap');

describe('team worktrees: model-written task ids and task code stay inside the run', () => {
  let server: FakeAnthropicServer;
  let brain: TeamBrain;
  let repo: TempRepo;
  let env: Record<string, string>;
  let workspace: { workspace: string; branch: string };
  let iterationDir: string;

  beforeEach(async () => {
    server = await startFakeAnthropicServer();
    brain = createTeamBrain();
    server.setFallback((request) => brain.reply(request));
    repo = await createTempRepo({
      files: {
        'package.json': JSON.stringify({ name: 'calc', type: 'module', scripts: { test: 'node --test' } }),
        'test/base.test.js': "import test from 'node:test';\ntest('base', () => {});\n",
      },
    });
    const home = repo.path('ratchet-home');
    env = {
      ...repo.env,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-team-worktrees-000000',
      RATCHET_HOME: home,
    };
    // An iteration at the end of planning, as `team init` and `team run` leave it.
    await initTeam({ projectRoot: repo.dir, packageRoot: PACKAGE_ROOT, agents: 2 });
    const iterations = createIterationStore(teamDirOf(repo.dir));
    const { iteration, dir } = await iterations.create({ description: 'a calculator', maxTurns: 6 });
    iterationDir = dir;
    workspace = await createIterationWorkspace({ projectRoot: repo.dir, home, iterationId: iteration.id });
    await iterations.saveFields(iteration.id, { ...workspace, phase: 'planning' });
    await createConversationStore(dir).append({ from: 'agent-1', iteration: iteration.id, content: 'Two tasks.' });
  });
  afterEach(async () => {
    await server.close();
    await repo.cleanup();
  });

  const snapshotOutside = () => ({
    branches: repo.run('branch', '--list', '--format=%(refname:short)'),
    worktrees: repo.run('worktree', 'list', '--porcelain'),
    head: repo.run('rev-parse', 'HEAD'),
    status: repo.run('status', '--porcelain', '--untracked-files=no'),
  });

  it('refuses task ids that would climb out of the worktrees folder or read as options, and makes nothing', async () => {
    const hostile = [
      { id: '../../../../escaped', description: 'climb out', depends_on: [], assigned_to: 'agent-1' },
      { id: '--upload-pack=touch pwned', description: 'an option', depends_on: [], assigned_to: 'agent-2' },
    ];
    brain.script('EXTRACT_TASKS', { say: JSON.stringify(hostile) });
    const advance = await runCli(['team', 'advance', '--provider', 'anthropic', '--model', 'claude-sonnet-4-5'], {
      cwd: repo.dir,
      env,
    });
    expect(advance.exitCode, describeResult(advance)).toBe(0);
    expect(brain.unexpected).toEqual([]);
    expect((await createArtifactStore(iterationDir).readTasks())?.map((task) => task.id)).toEqual(
      hostile.map((task) => task.id),
    );
    const before = snapshotOutside();
    const home = await readdir(env.RATCHET_HOME ?? '', { recursive: true });

    const setup = await runCli(['team', 'worktrees', 'setup'], { cwd: repo.dir, env });
    expect(setup.exitCode, describeResult(setup)).toBe(2);
    expect(setup.stderr).toContain('The task id "../../../../escaped" cannot name a branch or a directory');

    expect(snapshotOutside()).toEqual(before);
    expect(await readdir(env.RATCHET_HOME ?? '', { recursive: true })).toEqual(home);
    for (const up of ['', '..', '../..', '../../..']) {
      expect(existsSync(join(`${workspace.workspace}-tasks`, up, 'escaped'))).toBe(false);
    }
    expect(existsSync(join(repo.dir, 'pwned'))).toBe(false);
  });

  it.skipIf(bwrap.missing)(
    `runs the task's code sandboxed: it cannot write the checkout, a git hook or the home${bwrap.note}`,
    async () => {
      brain.script('EXTRACT_TASKS', {
        say: JSON.stringify([{ id: 'T1', description: 'add', depends_on: [], assigned_to: 'agent-1' }]),
      });
      const advance = await runCli(['team', 'advance', '--provider', 'anthropic', '--model', 'claude-sonnet-4-5'], {
        cwd: repo.dir,
        env,
      });
      expect(advance.exitCode, describeResult(advance)).toBe(0);
      const setup = await runCli(['team', 'worktrees', 'setup', '--json'], { cwd: repo.dir, env });
      expect(setup.exitCode, describeResult(setup)).toBe(0);
      const [task] = (JSON.parse(setup.stdout) as { tasks: Array<{ worktree: string }> }).tasks;
      if (task === undefined) throw new Error('one task expected');
      const targets = {
        checkout: join(repo.dir, 'PWNED'),
        hook: join(repo.dir, '.git', 'hooks', 'post-merge'),
        home: join(repo.path('home'), 'pwned'),
      };
      // The agent's test tries every target and passes whatever happens, so the layer merges.
      const attack = `import test from 'node:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
test('add', () => {
  for (const file of ${JSON.stringify(Object.values(targets))}) {
    try { mkdirSync(dirname(file), { recursive: true }); writeFileSync(file, '#!/bin/sh\\ntouch /tmp/pwned\\n', { mode: 0o755 }); } catch {}
  }
});
`;
      const file = join(task.worktree, 'test', 'add.test.js');
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, attack);
      await new Git(task.worktree).commitAll('T1: add');
      const before = snapshotOutside();

      const merge = await runCli(['team', 'worktrees', 'merge'], { cwd: repo.dir, env });
      expect(merge.exitCode, describeResult(merge)).toBe(0);
      expect(merge.stdout).toMatch(/Merged T1: All 2 tests pass\./);
      for (const target of Object.values(targets)) expect(existsSync(target), target).toBe(false);
      expect(snapshotOutside()).toEqual({ ...before, worktrees: expect.any(String) as string });
    },
  );
});
