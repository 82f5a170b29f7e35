/**
 * The TUI over its live ports (the team's real stores, the real iteration lock, the OpenAI
 * adapter against the loopback fake server, real git worktrees and verifier): quitting while an
 * agent's model call is still running stops it, keeps what was said before, and releases the
 * iteration's lock before the TUI is gone, while the process lives on (a second `ratchet team`
 * command can take the iteration at once, not only after this process exits); a model server
 * that is down, a merge conflict and a red verifier are shown, and the keys go on working.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { useEffect, type ReactNode } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLiveTeamUiPorts } from '../../../src/cli/tui/team-ui-live.js';
import { TeamApp } from '../../../src/cli/tui/team-app.js';
import { REPO_LOCK_FILE } from '../../../src/git/repo-lock.js';
import { Git } from '../../../src/git/git.js';
import {
  createArtifactStore,
  createConversationStore,
  createIterationStore,
} from '../../../src/workflows/team/file-stores.js';
import { initTeam, teamDirOf } from '../../../src/workflows/team/setup.js';
import { createIterationWorkspace } from '../../../src/workflows/team/workspace.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../support/fake-openai-server.js';
import { PACKAGE_ROOT } from '../../support/run-cli.js';
import { sandboxForThisMachine } from '../../support/sandbox-for-this-machine.js';
import { openAiPrompt } from '../../support/solve-fixture.js';
import { createTempRepo, type TempRepo } from '../../support/temp-repo.js';

function Unmounted({ onUnmount, children }: { onUnmount: () => void; children: ReactNode }) {
  useEffect(() => onUnmount, [onUnmount]);
  return <>{children}</>;
}

let repo: TempRepo;
let server: FakeOpenAiServer;
let app: ReturnType<typeof render> | undefined;

beforeEach(async () => {
  repo = await createTempRepo({
    files: {
      'README.md': '# calc\n',
      // What a layer merge verifies with.
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
    },
  });
  server = await startFakeOpenAiServer({ models: ['team-model'] });
  vi.stubEnv('OPENAI_API_KEY', 'sk-test-team-ui-live-0000');
  vi.stubEnv('RATCHET_HOME', repo.path('ratchet-home'));
});

afterEach(async () => {
  app?.unmount();
  vi.unstubAllEnvs();
  await server.close();
  await repo.cleanup();
});

async function until(condition: () => boolean, what: () => string): Promise<void> {
  for (let attempt = 0; attempt < 500 && !condition(); attempt++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error(`Never happened: ${what()}`);
}

const sandbox = sandboxForThisMachine();

/** A team of two agents and a coach, with an iteration in refinement and its worktree. */
async function teamWithIteration(): Promise<{
  id: string;
  dir: string;
  workspace: string;
  branch: string;
  lock: string;
}> {
  await initTeam({ projectRoot: repo.dir, packageRoot: PACKAGE_ROOT, agents: 2 });
  const iterations = createIterationStore(teamDirOf(repo.dir));
  const { iteration, dir } = await iterations.create({ description: 'a calculator', maxTurns: 6 });
  const made = await createIterationWorkspace({
    projectRoot: repo.dir,
    home: repo.path('ratchet-home'),
    iterationId: iteration.id,
  });
  await iterations.saveFields(iteration.id, { ...made });
  return {
    id: iteration.id,
    dir,
    workspace: made.workspace,
    branch: made.branch,
    lock: join(teamDirOf(repo.dir), 'locks', iteration.id, REPO_LOCK_FILE),
  };
}

describe('ratchet team ui over its live ports', () => {
  it('shows a model server that is down as an error, releases the lock and goes on taking keys', async () => {
    const { lock } = await teamWithIteration();
    // No retries, so the failure shows at once (the backoff is the retry policy's, tested there).
    await mkdir(join(repo.dir, '.ratchet'), { recursive: true });
    await writeFile(join(repo.dir, '.ratchet', 'config.toml'), '[provider]\nmax_retries = 0\n');
    const url = server.url;
    await server.close();
    server = await startFakeOpenAiServer();
    const ports = await createLiveTeamUiPorts({
      repoRoot: repo.dir,
      flags: { provider: 'openai-compatible', model: 'team-model', baseUrl: url },
      maxTurns: undefined,
    });
    app = render(<TeamApp ports={ports} size={{ columns: 120, rows: 30 }} />);
    const frame = (): string => app?.lastFrame() ?? '';
    await until(
      () => frame().includes('phase refinement'),
      () => frame(),
    );
    app.stdin.write('c');
    await until(
      () => frame().includes(`The conversation: Cannot reach openai-compatible at ${new URL(url).origin}`),
      () => frame(),
    );
    expect(frame()).toContain('Check the network connection and the base URL');
    expect(existsSync(lock)).toBe(false);
    app.stdin.write('p');
    await until(
      () => frame().includes('Checkpoints of iter-1'),
      () => frame(),
    );
  });

  it('quit mid-turn: stops the model call, keeps what was said, releases the lock before the TUI is gone', async () => {
    const { dir, lock } = await teamWithIteration();
    // agent-1 answers; agent-2's call never does, until the TUI stops it.
    server.setFallback((request) =>
      openAiPrompt(request).system.includes('You are agent-1,')
        ? { kind: 'message', text: 'Add and multiply first.' }
        : { kind: 'hang' },
    );
    const ports = await createLiveTeamUiPorts({
      repoRoot: repo.dir,
      flags: { provider: 'openai-compatible', model: 'team-model', baseUrl: server.url },
      maxTurns: undefined,
    });
    let unmounted = false;
    app = render(
      <Unmounted onUnmount={() => (unmounted = true)}>
        <TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />
      </Unmounted>,
    );
    const frame = (): string => app?.lastFrame() ?? '';
    await until(
      () => frame().includes('phase refinement'),
      () => frame(),
    );
    app.stdin.write('c');
    await until(
      () => frame().includes('agent-2 is speaking…'),
      () => frame(),
    );
    await until(
      () => server.requests.length === 2,
      () => `${server.requests.length} requests`,
    );
    expect(existsSync(lock)).toBe(true);

    app.stdin.write('q');
    await until(
      () => unmounted,
      () => frame(),
    );
    // Released by the session that stopped, not at this process's exit.
    expect(existsSync(lock)).toBe(false);
    const log = await createConversationStore(dir).readFull();
    expect(log.map((message) => `${message.from}: ${message.content}`)).toContain('agent-1: Add and multiply first.');
    expect(log.some((message) => message.from === 'agent-2')).toBe(false);
    expect(server.requests).toHaveLength(2);
  });

  it('shows a merge conflict and then a red verifier after M, the iteration branch as it was each time', async () => {
    const { id, dir, branch } = await teamWithIteration();
    await writeFile(
      join(repo.dir, 'package.json'),
      JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
    );
    await createArtifactStore(dir).writeTasks(
      ['T1', 'T2'].map((task, index) => ({
        id: task,
        description: task,
        done_criteria: '',
        depends_on: [],
        assigned_to: `agent-${index + 1}`,
        status: 'pending',
        layer: 0,
      })),
    );
    await createIterationStore(teamDirOf(repo.dir)).saveFields(id, { phase: 'implementation', current_layer: 0 });
    const ports = await createLiveTeamUiPorts({
      repoRoot: repo.dir,
      flags: {
        provider: 'openai-compatible',
        model: 'team-model',
        baseUrl: server.url,
        ...(sandbox.off ? { sandbox: false } : {}),
      },
      maxTurns: undefined,
    });
    app = render(<TeamApp ports={ports} size={{ columns: 120, rows: 40 }} />);
    const frame = (): string => app?.lastFrame() ?? '';
    const shows = (text: string) =>
      until(
        () => frame().includes(text),
        () => `${text} on\n${frame()}`,
      );
    await shows('phase implementation');
    app.stdin.write('w');
    await shows('has no worktrees yet');
    app.stdin.write('s');
    await shows('Layer 0 of ratchet/team-iter-1-');
    const setup = await ports.reviewLayer();
    const [first, second] = setup.tasks;
    if (first === undefined || second === undefined) throw new Error('two tasks expected');
    // Both tasks write the same file: the second conflicts.
    await mkdir(join(first.worktree, 'src'), { recursive: true });
    await mkdir(join(first.worktree, 'test'), { recursive: true });
    await writeFile(join(first.worktree, 'src/calc.js'), 'export const calc = () => 4;\n');
    await writeFile(
      join(first.worktree, 'test/calc.test.js'),
      "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { calc } from '../src/calc.js';\ntest('calc', () => assert.equal(calc(), 3));\n",
    );
    await mkdir(join(second.worktree, 'src'), { recursive: true });
    await writeFile(join(second.worktree, 'src/calc.js'), 'export const calc = () => 5;\n');
    const before = repo.run('rev-parse', branch);
    app.stdin.write('r');
    await shows('2 uncommitted');
    app.stdin.write('M');
    await shows('Merging task T2 conflicts in src/calc.js: nothing was merged');
    expect(repo.run('rev-parse', branch)).toBe(before);

    // T2 gives the file up; the merge goes through, and the failing test turns it red.
    // The failed merge committed each task's work on its branch; T2 takes its file back out.
    const git = new Git(second.worktree);
    execFileSync('git', ['rm', '-q', 'src/calc.js'], { cwd: second.worktree, env: { ...process.env, ...repo.env } });
    await git.commitAll('T2 leaves src/calc.js to T1');
    app.stdin.write('M');
    await shows('The merged layer fails verification: nothing was merged');
    expect(frame()).toContain('Fix it on the task branches');
    expect(repo.run('rev-parse', branch)).toBe(before);
  });
});
