/**
 * Issue 16: in the implementation phase each agent writes in the worktree of its own task. A
 * scripted agent, driving the built CLI through the loopback fake Anthropic server, tries to
 * write into the worktree of another agent's task (climbing out with `..`, by absolute path,
 * through that worktree's `.git` file), into the iteration's workspace (which would slip into the
 * next layer's base unreviewed) and into the user's checkout; an agent with no task in the layer
 * tries to write at all. Every attempt is refused, none becomes an approval, and no worktree, no
 * branch and the checkout changed.
 */
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createArtifactStore, createIterationStore } from '../../src/workflows/team/file-stores.js';
import { initTeam, teamDirOf } from '../../src/workflows/team/setup.js';
import { createIterationWorkspace } from '../../src/workflows/team/workspace.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { describeResult, PACKAGE_ROOT, runCli } from '../support/run-cli.js';
import { createTeamBrain, type TeamBrain } from '../support/team-brain.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

const task = (id: string, assigned_to: string) => ({
  id,
  description: id,
  done_criteria: '',
  depends_on: [],
  assigned_to,
  status: 'pending',
  layer: 0,
});

/** Every file or directory name under `dir`, however deep (`.git` directories skipped). */
async function namesUnder(dir: string): Promise<string[]> {
  const names: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === '.git') continue;
    names.push(entry.name);
    if (entry.isDirectory()) names.push(...(await namesUnder(join(dir, entry.name))));
  }
  return names;
}

describe("team agents cannot write another task's worktree", () => {
  let server: FakeAnthropicServer;
  let repo: TempRepo;
  let brain: TeamBrain;
  let env: Record<string, string>;
  let workspace: string;

  beforeEach(async () => {
    server = await startFakeAnthropicServer();
    brain = createTeamBrain();
    server.setFallback((request) => brain.reply(request));
    repo = await createTempRepo({ files: { 'README.md': '# app\n', 'src/app.js': 'run();\n' } });
    const home = repo.path('ratchet-home');
    env = {
      ...repo.env,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-team-task-0000000',
      RATCHET_HOME: home,
    };
    // An iteration in implementation with two tasks in layer 0, as planning leaves it.
    await initTeam({ projectRoot: repo.dir, packageRoot: PACKAGE_ROOT, agents: 3 });
    const iterations = createIterationStore(teamDirOf(repo.dir));
    const { iteration, dir } = await iterations.create({ description: 'two tasks', maxTurns: 3 });
    const made = await createIterationWorkspace({ projectRoot: repo.dir, home, iterationId: iteration.id });
    workspace = made.workspace;
    await iterations.saveFields(iteration.id, { ...made, phase: 'implementation', current_layer: 0 });
    await createArtifactStore(dir).writeTasks([task('T1', 'agent-1'), task('T2', 'agent-2')]);
  });
  afterEach(async () => {
    await server.close();
    await repo.cleanup();
  });

  it('refuses writes into the other task, the workspace and the checkout, and from an agent without a task', async () => {
    const setup = await runCli(['team', 'worktrees', 'setup', '--json'], { cwd: repo.dir, env });
    expect(setup.exitCode, describeResult(setup)).toBe(0);
    const spaces = (JSON.parse(setup.stdout) as { tasks: Array<{ id: string; worktree: string; branch: string }> })
      .tasks;
    const [t1, t2] = spaces;
    if (t1 === undefined || t2 === undefined) throw new Error('two tasks expected');
    const tips = spaces.map((space) => repo.run('rev-parse', space.branch));
    const write = (file_path: string) => ({ name: 'Write', input: { file_path, content: 'pwned\n' } });
    brain.script(
      'agent-1',
      {
        tools: [
          write(`../${basename(t2.worktree)}/src/evil.js`),
          write(join(t2.worktree, 'src', 'evil.js')),
          write(join(t2.worktree, 'README.md')),
          write(`../${basename(t2.worktree)}/.git`),
          write('.git'),
          write(join(workspace, 'src', 'evil.js')),
          write(`../../${basename(workspace)}/src/evil.js`),
          write(join(repo.dir, 'src', 'evil.js')),
        ],
      },
      { say: 'Done.' },
    );
    brain.script('agent-2', { say: 'T2 in progress.' });
    brain.script('agent-3', { tools: [write('src/evil.js'), write('README.md')] }, { say: 'Done.' });
    brain.script('coach', { say: 'Carry on.' });
    const result = await runCli(['team', 'continue', '--provider', 'anthropic', '--model', 'claude-task-escape'], {
      cwd: repo.dir,
      env,
    });
    expect(result.exitCode, describeResult(result)).toBe(0);
    expect(result.stdout).not.toContain('Paused');

    const approvals = await runCli(['team', 'approvals', '--json'], { cwd: repo.dir, env });
    expect(JSON.parse(approvals.stdout)).toEqual({ approvals: [] });
    const refusals = brain.seen.get('agent-1')?.[1] ?? '';
    expect(refusals.match(/Access denied/g)?.length ?? 0, refusals).toBeGreaterThanOrEqual(6);
    expect(brain.seen.get('agent-3')?.[1]).toContain('You have no task in layer 0');
    expect(brain.unexpected).toEqual([]);
    expect(brain.unplayed()).toEqual([]);

    // No worktree, no branch and not the checkout changed; no evil.js anywhere.
    for (const dir of [t1.worktree, t2.worktree, workspace])
      expect(repo.run('-C', dir, 'status', '--porcelain')).toBe('');
    expect(spaces.map((space) => repo.run('rev-parse', space.branch))).toEqual(tips);
    expect(repo.run('status', '--porcelain')).toBe('');
    expect(await namesUnder(dirname(repo.dir))).not.toContain('evil.js');
  });
});
