/**
 * The TUI over its live ports (the team's real stores, the real iteration lock, the OpenAI
 * adapter against the loopback fake server): quitting while an agent's model call is still
 * running stops it, keeps what was said before, and releases the iteration's lock before the TUI
 * is gone, while the process lives on (a second `ratchet team` command can take the iteration
 * at once, not only after this process exits).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { useEffect, type ReactNode } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLiveTeamUiPorts } from '../../../src/cli/tui/team-ui-live.js';
import { TeamApp } from '../../../src/cli/tui/team-app.js';
import { REPO_LOCK_FILE } from '../../../src/git/repo-lock.js';
import { createConversationStore, createIterationStore } from '../../../src/workflows/team/file-stores.js';
import { initTeam, teamDirOf } from '../../../src/workflows/team/setup.js';
import { createIterationWorkspace } from '../../../src/workflows/team/workspace.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../support/fake-openai-server.js';
import { PACKAGE_ROOT } from '../../support/run-cli.js';
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
  repo = await createTempRepo({ files: { 'README.md': '# calc\n' } });
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

/** A team of two agents and a coach, with an iteration in refinement and its worktree. */
async function teamWithIteration(): Promise<{ id: string; dir: string; lock: string }> {
  await initTeam({ projectRoot: repo.dir, packageRoot: PACKAGE_ROOT, agents: 2 });
  const iterations = createIterationStore(teamDirOf(repo.dir));
  const { iteration, dir } = await iterations.create({ description: 'a calculator', maxTurns: 6 });
  const made = await createIterationWorkspace({
    projectRoot: repo.dir,
    home: repo.path('ratchet-home'),
    iterationId: iteration.id,
  });
  await iterations.saveFields(iteration.id, { ...made });
  return { id: iteration.id, dir, lock: join(teamDirOf(repo.dir), 'locks', iteration.id, REPO_LOCK_FILE) };
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
});
