/**
 * `ratchet team advance` out of implementation with layers of tasks.json never merged: the coach
 * may signal the phase complete after the first layer (it did on a run over a Python package,
 * whose second layer was then silently skipped into code review). Advancing is refused, naming
 * the layers and tasks left, until they are merged or `--force` says to go on without them.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createIterationStore } from '../../src/workflows/team/file-stores.js';
import { teamDirOf } from '../../src/workflows/team/setup.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { describeResult, runCli } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { seedImplementationIteration, teamTask } from '../support/team-iteration.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

const sandbox = sandboxForThisMachine();
const PROVIDER = ['--provider', 'anthropic', '--model', 'claude-team-e2e'];

describe(`ratchet team advance with layers not merged${sandbox.note}`, () => {
  let server: FakeAnthropicServer;
  let repo: TempRepo;
  let env: Record<string, string>;

  beforeEach(async () => {
    server = await startFakeAnthropicServer();
    repo = await createTempRepo({
      files: { 'package.json': JSON.stringify({ name: 'units', type: 'module', scripts: { test: 'node --test' } }) },
    });
    const home = repo.path('ratchet-home');
    env = {
      ...repo.env,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-team-0000',
      RATCHET_HOME: home,
    };
    await seedImplementationIteration({
      projectRoot: repo.dir,
      home,
      agents: 2,
      description: 'units',
      maxTurns: 2,
      tasks: [teamTask('keys', 'agent-1', 0), teamTask('dumps', 'agent-2', 1)],
    });
  });
  afterEach(async () => {
    await server.close();
    await repo.cleanup();
  });

  const team = (...args: string[]) => runCli(['team', ...args], { cwd: repo.dir, env });
  const phase = async () => (await createIterationStore(teamDirOf(repo.dir)).getCurrent()).iteration.phase;

  it('refuses to leave implementation before every layer is merged, and goes on with --force', async () => {
    const early = await team('advance', ...PROVIDER);
    expect(early.exitCode, describeResult(early)).toBe(2);
    expect(early.stderr).toContain('Layers 0, 1 of iter-1 are not merged yet (keys, dumps)');
    expect(await phase()).toBe('implementation');

    // Layer 0 done by hand in its task's worktree, then merged (verified by node --test).
    const setup = await team('worktrees', 'setup', '--json');
    expect(setup.exitCode, describeResult(setup)).toBe(0);
    const [keys] = (JSON.parse(setup.stdout) as { tasks: Array<{ worktree: string }> }).tasks;
    if (keys === undefined) throw new Error('one task expected in layer 0');
    await writeFile(join(keys.worktree, 'keys.js'), 'export const keys = 1;\n');
    const merged = await team('worktrees', 'merge', ...sandbox.flags);
    expect(merged.exitCode, describeResult(merged)).toBe(0);

    const refused = await team('advance', ...PROVIDER);
    expect(refused.exitCode, describeResult(refused)).toBe(2);
    expect(refused.stderr).toContain(
      'Layer 1 of iter-1 is not merged yet (dumps): advancing to code-review would leave that task unimplemented.',
    );
    expect(refused.stderr).toContain('ratchet team advance --force');
    expect(await phase()).toBe('implementation');

    const forced = await team('advance', '--force', ...PROVIDER);
    expect(forced.exitCode, describeResult(forced)).toBe(0);
    expect(forced.stdout).toContain('implementation -> code-review');
    expect(await phase()).toBe('code-review');
    // Nothing was asked of the model: leaving implementation extracts nothing.
    expect(server.requests.filter((request) => request.path !== '/v1/models')).toEqual([]);
  });
});
