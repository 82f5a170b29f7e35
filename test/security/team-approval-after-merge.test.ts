/**
 * Issue 16: an approval writes only where the agent may write when it is approved. A scripted
 * agent, driving the built CLI through the loopback fake Anthropic server, asks in layer 0 (its
 * task's worktree) for a write outside the writable paths; the product manager merges the layer
 * (the last, so every merge and its verifier are behind) and only then approves. The write must
 * not land anywhere: not in the iteration's workspace or branch, which no verifier would see
 * again, nor in the checkout; the approval says why.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { describeResult, runCli } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { createTeamBrain, type TeamBrain } from '../support/team-brain.js';
import { seedImplementationIteration, teamTask } from '../support/team-iteration.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

const sandbox = sandboxForThisMachine();
const write = (file_path: string, content: string) => ({ name: 'Write', input: { file_path, content } });

describe('a team approval granted after its layer merged', () => {
  let server: FakeAnthropicServer;
  let repo: TempRepo;
  let brain: TeamBrain;
  let env: Record<string, string>;
  let workspace: string;
  let branch: string;

  beforeEach(async () => {
    server = await startFakeAnthropicServer();
    brain = createTeamBrain();
    server.setFallback((request) => brain.reply(request));
    repo = await createTempRepo({
      files: {
        'README.md': '# app\n',
        'package.json': JSON.stringify({ name: 'app', type: 'module', scripts: { test: 'node --test' } }),
        'test/base.test.js': "import test from 'node:test';\ntest('base', () => {});\n",
      },
    });
    const home = repo.path('ratchet-home');
    env = {
      ...repo.env,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-team-approve-00000',
      RATCHET_HOME: home,
    };
    // An iteration in implementation with one task, so layer 0 is the last.
    ({ workspace, branch } = await seedImplementationIteration({
      projectRoot: repo.dir,
      home,
      agents: 2,
      description: 'one task',
      maxTurns: 2,
      writablePaths: ['src/**', 'test/**'],
      tasks: [teamTask('T1', 'agent-1')],
    }));
  });
  afterEach(async () => {
    await server.close();
    await repo.cleanup();
  });

  const cli = async (args: string[], exitCode = 0) => {
    const result = await runCli(args, { cwd: repo.dir, env });
    expect(result.exitCode, describeResult(result)).toBe(exitCode);
    return result;
  };

  type Listed = { approvals: Array<{ id: string; path: string; status: string; worktree?: string }> };
  const approvalFor = async (path: string) => {
    const listed = JSON.parse((await cli(['team', 'approvals', '--json'])).stdout) as Listed;
    const asked = listed.approvals.find((approval) => approval.path === path);
    if (asked === undefined) throw new Error(`an approval for ${path} expected: ${JSON.stringify(listed)}`);
    return asked;
  };
  const talk = (agentOne: ReturnType<typeof write>[]) => {
    brain.script('agent-1', { tools: agentOne }, { say: 'Done; one file needs approval.' });
    brain.script('agent-2', { say: 'Looks fine.' });
    brain.script('coach', { say: 'Carry on.' });
    return cli(['team', 'continue', '--provider', 'anthropic', '--model', 'claude-approve-late', ...sandbox.flags]);
  };

  it('refuses to write it, says why, and leaves the iteration branch, its workspace and the checkout as they were', async () => {
    // Layer 0 before setup: the agents share the iteration's workspace, the approval names it.
    await talk([write('src/one.js', 'export const one = 1;\n'), write('README.md', 'unverified\n')]);
    const asked = await approvalFor('README.md');
    expect(asked.worktree).toBe(workspace);
    expect(asked.status).toBe('pending');

    // Setup takes what the team wrote into the layer's base; the layer (the last) merges green.
    // (Its task's branch is empty: the session cannot go on while the approval is pending.)
    await cli(['team', 'worktrees', 'setup']);
    const merged = await cli(['team', 'worktrees', 'merge', '--allow-empty', ...sandbox.flags]);
    expect(merged.stdout).toContain('Every layer is merged');
    const tip = repo.run('rev-parse', branch);
    const checkoutTip = repo.run('rev-parse', 'HEAD');

    const approved = await cli(['team', 'approve', asked.id], 2);
    expect(approved.stderr).toContain('Approved, but not written');
    expect(approved.stderr).toContain('Every layer is merged');
    expect(approved.stdout).toContain('could not be written');

    // Nothing reached the iteration: its branch, its workspace (clean), nor the checkout.
    expect(repo.run('rev-parse', branch)).toBe(tip);
    expect(repo.run('-C', workspace, 'status', '--porcelain')).toBe('');
    expect(await readFile(join(workspace, 'README.md'), 'utf8')).toBe('# app\n');
    expect(await readFile(join(repo.dir, 'README.md'), 'utf8')).toBe('# app\n');
    expect(repo.run('rev-parse', 'HEAD')).toBe(checkoutTip);
    expect(repo.run('status', '--porcelain')).toBe('');
    expect((await approvalFor('README.md')).status).toBe('approved');
  });
});
