/**
 * The implementation phase of `ratchet team` through the built CLI and the fake Anthropic server,
 * on an iteration whose planning gave one agent two tasks of a layer: each of its writes lands in
 * the worktree (and branch) of the task it names, never in the other's.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Git } from '../../src/git/git.js';
import { openLedger } from '../../src/ledger/ledger.js';
import { createArtifactStore, createIterationStore } from '../../src/workflows/team/file-stores.js';
import { teamDirOf } from '../../src/workflows/team/setup.js';
import { bodySchema, textOf } from '../support/anthropic-request.js';
import {
  startFakeAnthropicServer,
  type FakeAnthropicServer,
  type RecordedRequest,
} from '../support/fake-anthropic-server.js';
import { CLI, cliEnv, describeResult, runCli } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { createTeamBrain, type TeamBrain } from '../support/team-brain.js';
import { seedImplementationIteration, teamTask as task } from '../support/team-iteration.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

const sandbox = sandboxForThisMachine();
const writeCall = (file_path: string, content: string, taskId?: string) => ({
  name: 'Write',
  input: { file_path, content, ...(taskId === undefined ? {} : { task: taskId }) },
});
const unitTest = (name: string) =>
  `import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { ${name} } from '../src/${name}.js';\ntest('${name}', () => assert.equal(${name}(), '${name}'));\n`;
const unit = (name: string) => `export const ${name} = () => '${name}';\n`;

describe('ratchet team implementation: several tasks per agent, through the Anthropic adapter (loopback fake)', () => {
  let server: FakeAnthropicServer;
  let repo: TempRepo;
  let brain: TeamBrain;
  let env: Record<string, string>;
  let workspace: string;

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
      ANTHROPIC_API_KEY: 'sk-ant-test-team-000000000000',
      RATCHET_HOME: home,
    };
    // An iteration after planning, as `team run` and `team advance` leave it.
    ({ workspace } = await seedImplementationIteration({
      projectRoot: repo.dir,
      home,
      agents: 3,
      description: 'units',
      maxTurns: 2,
      writablePaths: ['src/**', 'test/**'],
      tasks: [task('alpha', 'agent-1'), task('beta', 'agent-1'), task('gamma', 'agent-2')],
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
  const team = (...args: string[]) =>
    cli(['team', ...args, '--provider', 'anthropic', '--model', 'claude-team-e2e', ...sandbox.flags]);
  const worktrees = async (...args: string[]) =>
    cli(['team', 'worktrees', ...args, ...(args[0] === 'merge' ? sandbox.flags : [])]);

  it("routes an agent's writes to the worktree of the task each names, and refuses one that names none", async () => {
    const setup = JSON.parse((await worktrees('setup', '--json')).stdout) as {
      tasks: Array<{ id: string; worktree: string; branch: string }>;
    };
    const space = new Map(setup.tasks.map((entry) => [entry.id, entry]));
    const alpha = space.get('alpha');
    const beta = space.get('beta');
    const gamma = space.get('gamma');
    if (alpha === undefined || beta === undefined || gamma === undefined) throw new Error('three tasks expected');

    brain.script(
      'agent-1',
      {
        tools: [
          writeCall('src/alpha.js', unit('alpha'), 'alpha'),
          writeCall('test/alpha.test.js', unitTest('alpha'), 'alpha'),
          writeCall('src/beta.js', unit('beta'), 'beta'),
          writeCall('test/beta.test.js', unitTest('beta'), 'beta'),
          writeCall('src/where.js', 'unaddressed\n'),
          writeCall('src/theirs.js', 'not mine\n', 'gamma'),
        ],
      },
      { say: 'alpha and beta done.' },
    );
    // One task: its writes need no `task`.
    brain.script(
      'agent-2',
      { tools: [writeCall('src/gamma.js', unit('gamma')), writeCall('test/gamma.test.js', unitTest('gamma'))] },
      { say: 'gamma done.' },
    );
    brain.script('coach', { say: 'All three tasks are written.' });
    await team('continue');

    // Each write is in its task's worktree only; nothing reached the iteration's workspace.
    expect(await readFile(join(alpha.worktree, 'src/alpha.js'), 'utf8')).toBe(unit('alpha'));
    expect(existsSync(join(alpha.worktree, 'src/beta.js'))).toBe(false);
    expect(await readFile(join(beta.worktree, 'src/beta.js'), 'utf8')).toBe(unit('beta'));
    expect(existsSync(join(beta.worktree, 'src/alpha.js'))).toBe(false);
    expect(await readFile(join(gamma.worktree, 'src/gamma.js'), 'utf8')).toBe(unit('gamma'));
    for (const path of [alpha.worktree, beta.worktree, gamma.worktree, workspace]) {
      expect(existsSync(join(path, 'src/where.js'))).toBe(false);
      expect(existsSync(join(path, 'src/theirs.js'))).toBe(false);
    }
    // The agent was told why, in the tool results of its turn.
    const seen = brain.seen.get('agent-1')?.at(-1) ?? '';
    expect(seen).toContain('You own tasks alpha, beta in layer 0: say which task this Write is for with "task"');
    expect(seen).toContain('"gamma" is not one of your tasks in layer 0; yours: alpha, beta.');
    // The tool definitions offered the field.
    const offered = server.requests.find((request) => JSON.stringify(request.body).includes('You are agent-1,'));
    expect(JSON.stringify(offered?.body)).toContain('whose worktree the call works in');

    const merged = await worktrees('merge');
    expect(merged.stdout).toMatch(/Merged alpha, beta, gamma: All 4 tests pass/);
    expect(repo.run('show', `${beta.branch}:src/beta.js`)).toBe(unit('beta').trim());
    expect(() => repo.run('show', `${beta.branch}:src/alpha.js`)).toThrow();
    // Each task's merge is a VERIFY checkpoint of the iteration's ledger run, as `tasks run` records its merges.
    const runId = String((await createIterationStore(teamDirOf(repo.dir)).getCurrent()).iteration.ledger_run);
    {
      await using ledger = await openLedger(join(repo.dir, '.ratchet', 'ledger.db'));
      const checkpoints = await ledger.checkpoints(runId);
      expect(checkpoints.map((row) => `${row.stage} ${row.subject}`)).toEqual(
        ['alpha', 'beta', 'gamma'].map((id) => `VERIFY team: merge ${id} (layer 0)`),
      );
      expect(checkpoints.at(-1)?.commitSha).toBe(await new Git(workspace).head());
    }
    const report = await cli(['report', runId]);
    expect(report.stdout).toContain('team: merge gamma (layer 0)');
    expect(brain.unexpected).toEqual([]);
    expect(brain.unplayed()).toEqual([]);
  });

  it('names a task nobody is assigned at setup, and merges no layer with an empty task unless told to', async () => {
    const { iteration, dir } = await createIterationStore(teamDirOf(repo.dir)).getCurrent();
    await createArtifactStore(dir).writeTasks([task('alpha', 'agent-1'), task('orphan', ''), task('ghost', 'bob')]);
    const setup = await worktrees('setup', '--json');
    const spaces = (JSON.parse(setup.stdout) as { tasks: Array<{ id: string; worktree: string }> }).tasks;
    const alpha = spaces.find((entry) => entry.id === 'alpha');
    if (alpha === undefined) throw new Error('alpha expected');
    expect((JSON.parse(setup.stdout) as { unassigned: string[] }).unassigned).toEqual(['orphan', 'ghost']);
    expect((await worktrees('setup')).stderr).toContain('Assigned to no agent of the team: orphan, ghost.');

    await writeFile(
      join(alpha.worktree, 'test/alpha.test.js'),
      "import test from 'node:test';\ntest('alpha', () => {});\n",
    );
    const before = repo.run('rev-parse', String(iteration.branch));
    const refused = await cli(['team', 'worktrees', 'merge', ...sandbox.flags], 1);
    expect(refused.stderr).toContain(
      "Nothing was merged: orphan, ghost have no change since the layer's base (assigned to no agent: orphan, ghost).",
    );
    expect(repo.run('rev-parse', String(iteration.branch))).toBe(before);
    expect((await createIterationStore(teamDirOf(repo.dir)).getCurrent()).iteration.current_layer).toBe(0);

    const allowed = await worktrees('merge', '--allow-empty');
    expect(allowed.stdout).toMatch(/Merged alpha: All 2 tests pass/);
  });

  it("after the last layer, review fixes go through a fix worktree that merge verifies, never straight onto the iteration's branch", async () => {
    const setup = JSON.parse((await worktrees('setup', '--json')).stdout) as {
      tasks: Array<{ id: string; worktree: string }>;
    };
    for (const { id, worktree } of setup.tasks) {
      await mkdir(join(worktree, 'src'), { recursive: true });
      await writeFile(join(worktree, `src/${id}.js`), unit(id));
      await writeFile(join(worktree, `test/${id}.test.js`), unitTest(id));
    }
    expect((await worktrees('merge')).stdout).toContain('Every layer is merged');
    await cli(['team', 'advance']);
    const { iteration } = await createIterationStore(teamDirOf(repo.dir)).getCurrent();
    const branch = String(iteration.branch);

    // Code review before the fix worktree exists: a write is refused, the workspace unchanged.
    brain.script('agent-1', { tools: [writeCall('src/alpha.js', 'broken\n')] }, { say: 'Tried a fix.' });
    brain.script('agent-2', { say: 'Looks fine.' });
    await team('continue');
    expect(brain.seen.get('agent-1')?.at(-1)).toContain("The review's fix worktree is not set up yet");
    expect(await readFile(join(workspace, 'src/alpha.js'), 'utf8')).toBe(unit('alpha'));
    expect(await new Git(workspace).hasChanges()).toBe(false);

    // Set up, the agents write there; a red fix is not merged.
    const fixes = JSON.parse((await worktrees('setup', '--json')).stdout) as {
      tasks: Array<{ id: string; worktree: string }>;
    };
    expect(fixes.tasks.map((entry) => entry.id)).toEqual(['code-review-fixes']);
    const fixWorktree = fixes.tasks[0]?.worktree ?? '';
    brain.script(
      'agent-3',
      { tools: [writeCall('src/alpha.js', "export const alpha = () => 'ALPHA';\n")] },
      { say: 'Fixed.' },
    );
    brain.script('agent-1', { say: 'Agreed.' });
    brain.script('coach', { say: 'Merge it.' });
    await team('continue', '--max-turns', '2');
    expect(await readFile(join(fixWorktree, 'src/alpha.js'), 'utf8')).toContain('ALPHA');
    expect(await readFile(join(workspace, 'src/alpha.js'), 'utf8')).toBe(unit('alpha'));
    const before = repo.run('rev-parse', branch);
    const red = await cli(['team', 'worktrees', 'merge', ...sandbox.flags], 1);
    expect(red.stderr).toContain('fails verification: nothing was merged');
    expect(repo.run('rev-parse', branch)).toBe(before);

    await writeFile(join(fixWorktree, 'test/alpha.test.js'), unitTest('alpha').replace("'alpha')", "'ALPHA')"));
    expect((await worktrees('merge')).stdout).toMatch(/Merged code-review-fixes: All 4 tests pass/);
    expect(repo.run('show', `${branch}:src/alpha.js`)).toContain('ALPHA');
    expect(brain.unexpected).toEqual([]);
  });

  it("records the iteration's agent, coach and extraction calls in the ledger as one run that history and report show", async () => {
    const iterations = createIterationStore(teamDirOf(repo.dir));
    await iterations.saveFields('iter-1', { phase: 'planning' });
    brain.script('agent-1', { tools: [writeCall('src/plan.md', '# plan\n')] }, { say: 'Planned.' });
    brain.script('agent-2', { say: 'Two tasks.' });
    brain.script('agent-3', { say: 'Agreed.' });
    brain.script('coach', { tools: [{ name: 'signal_phase_complete', input: { summary: 'Tasks agreed' } }] });
    await team('continue', '--max-turns', '3');
    brain.script('EXTRACT_TASKS', { say: JSON.stringify([task('alpha', 'agent-1'), task('beta', 'agent-2')]) });
    await team('advance');

    const runId = String((await iterations.getCurrent()).iteration.ledger_run);
    expect(runId).toBe(basename(workspace));
    await using ledger = await openLedger(join(repo.dir, '.ratchet', 'ledger.db'));
    const run = await ledger.getRun(runId);
    expect(run).toMatchObject({ workflow: 'team', feature: 'units', status: 'completed', worktree: workspace });
    const calls = await ledger.modelCalls(runId);
    expect(calls.map((call) => call.stage).sort()).toEqual([
      'AGENT',
      'AGENT',
      'AGENT',
      'AGENT',
      'COACH',
      'EXTRACT_TASKS',
    ]);
    expect(calls.every((call) => call.provider === 'anthropic' && call.model === 'claude-team-e2e')).toBe(true);
    expect(calls.every((call) => (call.inputTokens ?? 0) > 0 && (call.outputTokens ?? 0) > 0)).toBe(true);
    const tools = await ledger.toolCalls(runId);
    expect(tools.map((call) => [call.stage, call.tool, call.isError])).toEqual([['AGENT', 'Write', false]]);
    expect((await ledger.summary(runId)).modelCalls.total).toBe(6);

    const history = await cli(['history']);
    expect(history.stdout).toMatch(new RegExp(`${runId}\\s+completed\\s+team\\s+units`));
    const report = await cli(['report', runId]);
    expect(report.stdout).toContain('| Workflow | team |');
    expect(report.stdout).toMatch(/\| Model calls \| 6 \(0 failed\), \d+ input \/ \d+ output tokens \|/);
    expect(report.stdout).toContain('| Tool calls | 1 (0 errors) |');
    // Lifecycle verbs without a run id never take the iteration for a run to accept or reject.
    const reject = await cli(['reject'], 2);
    expect(reject.stderr).toContain('No runs in this repository yet.');
    // Named, they refuse too, saying what the run is and which team commands work with it.
    const branch = String((await iterations.getCurrent()).iteration.branch);
    const tip = repo.run('rev-parse', branch);
    const files = repo.run('-C', workspace, 'status', '--porcelain');
    for (const verb of ['status', 'accept', 'reject']) {
      const named = await cli([verb, runId], 2);
      expect(named.stderr).toContain(`Run ${runId} is a team iteration's ledger run`);
      expect(named.stderr).toContain('`ratchet team`');
      expect(named.stderr).toContain('team worktrees merge');
      expect(named.stderr).not.toContain('does not know');
    }
    expect((await ledger.getRun(runId))?.status).toBe('completed');
    expect(repo.run('rev-parse', branch)).toBe(tip);
    expect(repo.run('-C', workspace, 'status', '--porcelain')).toBe(files);
    expect(existsSync(workspace)).toBe(true);
    expect(repo.run('branch', '--list', branch)).not.toBe('');
  });

  describe('the iteration lock of a command that stops mid-session', () => {
    const lockFile = () => join(teamDirOf(repo.dir), 'locks', 'iter-1', 'ratchet.lock');
    /** `team continue` in the background, still working once `reached()` holds. */
    const continueInBackground = async (reached: () => boolean) => {
      const child = execa(
        process.execPath,
        [CLI, 'team', 'continue', '--provider', 'anthropic', '--model', 'claude-team-e2e', ...sandbox.flags],
        {
          cwd: repo.dir,
          env: cliEnv(env),
          extendEnv: false,
          reject: false,
          stdin: 'ignore',
          forceKillAfterDelay: 5_000,
        },
      );
      let exited = false;
      void child.finally(() => {
        exited = true;
      });
      while (!reached() && !exited) await new Promise((done) => setTimeout(done, 50));
      expect(exited).toBe(false);
      // Wrapped: the subprocess is a promise, which an async function's return would wait for.
      return { child };
    };
    /** `team continue` in the background, its model calls held until `release`. */
    const hangingContinue = async () => {
      let held = true;
      server.setFallback((request) =>
        held ? { kind: 'message', content: [{ type: 'text', text: 'late' }], delayMs: 600_000 } : brain.reply(request),
      );
      // The first model request comes while the session holds the lock.
      const { child } = await continueInBackground(() => server.requests.length > 0);
      return {
        child,
        release: () => {
          held = false;
        },
      };
    };
    const scriptRound = () => {
      brain.script('agent-1', { say: 'back' });
      brain.script('agent-2', { say: 'back' });
      brain.script('coach', { say: 'go on' });
    };

    it('a killed command leaves a lock the next command takes over; a second one meanwhile is refused', async () => {
      const { child, release } = await hangingContinue();
      const holder = JSON.parse(await readFile(lockFile(), 'utf8')) as { pid: number };
      expect(holder.pid).toBe(child.pid);
      const busy = await cli(['team', 'continue', '--provider', 'anthropic', '--model', 'm', ...sandbox.flags], 2);
      expect(busy.stderr).toContain('Another ratchet team command is working on iter-1 right now.');

      child.kill('SIGKILL');
      await child;
      expect(existsSync(lockFile())).toBe(true);
      release();
      scriptRound();
      await team('continue');
      expect(existsSync(lockFile())).toBe(false);
      expect(brain.unplayed()).toEqual([]);
    });

    it('an interrupted command (Ctrl-C) releases the lock on its way out', async () => {
      const { child, release } = await hangingContinue();
      expect(existsSync(lockFile())).toBe(true);
      child.kill('SIGINT');
      const ended = await child;
      expect(ended.exitCode).not.toBe(0);
      expect(existsSync(lockFile())).toBe(false);
      release();
      scriptRound();
      await team('continue');
    });

    it("history shows the iteration's run as running while a command works on it, as gone once that is killed", async () => {
      // The agents answer (their calls make the iteration's ledger run); the coach's reply is held.
      const isCoach = (request: RecordedRequest) =>
        /^\s*Stage: COACH/.test(textOf(bodySchema.parse(request.body).system ?? ''));
      server.setFallback((request) =>
        isCoach(request)
          ? { kind: 'message', content: [{ type: 'text', text: 'late' }], delayMs: 600_000 }
          : brain.reply(request),
      );
      brain.script('agent-1', { say: 'on it' });
      brain.script('agent-2', { say: 'on it' });
      const { child } = await continueInBackground(() => server.requests.some(isCoach));
      const runs = async () =>
        (JSON.parse((await cli(['history', '--json'])).stdout) as { runs: Array<Record<string, unknown>> }).runs;
      const live = (await runs()).find((run) => run.workflow === 'team');
      expect(live).toMatchObject({ status: 'running', active: true });
      const id = String(live?.id);
      const line = () => cli(['history']).then((result) => result.stdout.split('\n').find((row) => row.includes(id)));
      expect(await line()).toMatch(/\srunning\s+team\s+units$/);

      child.kill('SIGKILL');
      await child;
      expect((await runs()).find((run) => run.id === id)).toMatchObject({ status: 'running', active: false });
      expect(await line()).toContain('running, but its process is gone (killed?)');
    });
  });
});
