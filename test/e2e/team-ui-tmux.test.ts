/**
 * The real `ratchet team ui` (the built binary) in a real terminal: tmux runs it at 120x40, the
 * test types keys (`send-keys`) and reads the screen (`capture-pane -p`), while the loopback fake
 * OpenAI-compatible server plays the agents, the coach and the extraction by the first line of
 * their system prompts. Through the TUI alone: one pending write approved and one denied with a
 * reason, the conversation run until the coach asks, the answer typed in, the phase completed
 * and advanced, and the current layer's worktrees set up. What it did is then read back from the
 * team's files, as `ratchet team` commands would read it.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createApprovalStore,
  createArtifactStore,
  createConversationStore,
  createIterationStore,
} from '../../src/workflows/team/file-stores.js';
import { initTeam, teamDirOf } from '../../src/workflows/team/setup.js';
import { createIterationWorkspace } from '../../src/workflows/team/workspace.js';
import {
  startFakeOpenAiServer,
  type FakeOpenAiServer,
  type OpenAiReply,
  type RecordedRequest,
} from '../support/fake-openai-server.js';
import { CLI, cliEnv, PACKAGE_ROOT } from '../support/run-cli.js';
import { openAiPrompt } from '../support/solve-fixture.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { toolchain } from '../support/toolchains.js';

const tmux = toolchain('tmux');

/** The team by the first line of its system prompts: agents talk, the coach asks once, then closes the phase. */
function teamBrain(): { reply: (request: RecordedRequest) => OpenAiReply; stages: string[] } {
  const stages: string[] = [];
  let coachTurns = 0;
  let agentTurns = 0;
  const reply = (request: RecordedRequest): OpenAiReply => {
    const stage = openAiPrompt(request).system.split('\n')[0] ?? '';
    stages.push(stage);
    if (stage === 'Stage: AGENT')
      return { kind: 'message', text: `Agent point ${++agentTurns}: add and multiply first.` };
    if (stage === 'Stage: COACH') {
      coachTurns++;
      if (coachTurns === 1)
        return {
          kind: 'message',
          text: 'One question for the PM.',
          toolCalls: [{ name: 'ask_pm', arguments: { question: 'Integers only, or floats too?' } }],
        };
      return {
        kind: 'message',
        text: 'We agree on the scope.',
        toolCalls: [
          { name: 'signal_phase_complete', arguments: { summary: 'Scope agreed: add and multiply, floats.' } },
        ],
      };
    }
    if (stage === 'Stage: EXTRACT_REFINEMENT')
      return { kind: 'message', text: '# Refinement\n\n- add and multiply, on floats\n' };
    return { kind: 'message', text: `unexpected ${stage}` };
  };
  return { reply, stages };
}

describe.skipIf(tmux.missing)(`ratchet team ui in tmux, against the fake model server${tmux.note}`, () => {
  let repo: TempRepo;
  let server: FakeOpenAiServer;
  let socket: string;
  let workspace: string;

  const tmuxRun = (...args: string[]): string =>
    execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', env: cliEnv({ TERM: 'xterm-256color' }) });
  const screen = (): string => tmuxRun('capture-pane', '-p', '-t', 'ui');
  /** Waits until the screen shows `text` (the TUI draws asynchronously); fails with the screen. */
  const shows = async (text: string): Promise<string> => {
    for (let attempt = 0; attempt < 300; attempt++) {
      const now = screen();
      if (now.includes(text)) return now;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`The TUI never showed ${JSON.stringify(text)}; the screen:\n${screen()}`);
  };
  const type = (text: string): void => void tmuxRun('send-keys', '-t', 'ui', '-l', text);
  const press = (key: string): void => void tmuxRun('send-keys', '-t', 'ui', key);

  beforeEach(async () => {
    repo = await createTempRepo({
      files: {
        'package.json': JSON.stringify({ name: 'calc', type: 'module', scripts: { test: 'node --test' } }),
        'test/base.test.js': "import test from 'node:test';\ntest('base', () => {});\n",
      },
    });
    server = await startFakeOpenAiServer({ models: ['team-model'] });
    socket = `ratchet-test-${randomBytes(4).toString('hex')}`;
    const home = repo.path('ratchet-home');
    await initTeam({ projectRoot: repo.dir, packageRoot: PACKAGE_ROOT, agents: 3 });
    const iterations = createIterationStore(teamDirOf(repo.dir));
    const { iteration, dir } = await iterations.create({ description: 'a calculator', maxTurns: 12 });
    const made = await createIterationWorkspace({ projectRoot: repo.dir, home, iterationId: iteration.id });
    workspace = made.workspace;
    await iterations.saveFields(iteration.id, { ...made });
    // Two writes an earlier turn left waiting, and the tasks a planning would have produced.
    const approvals = createApprovalStore(dir);
    await approvals.add({
      id: 'a1',
      agent: 'agent-2',
      path: 'README.md',
      content: '# calc\n',
      status: 'pending',
      phase: 'refinement',
    });
    await approvals.add({
      id: 'a2',
      agent: 'agent-3',
      path: 'notes/ideas.md',
      content: 'ideas\n',
      status: 'pending',
      phase: 'refinement',
    });
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
        description: 'calc',
        done_criteria: '',
        depends_on: ['T1'],
        assigned_to: 'agent-2',
        status: 'pending',
        layer: 1,
      },
    ]);
    const env = cliEnv({
      RATCHET_HOME: home,
      HOME: repo.path('home'),
      OPENAI_API_KEY: 'sk-test-team-ui-00000000',
      TERM: 'xterm-256color',
    });
    const command = [
      process.execPath,
      CLI,
      'team',
      'ui',
      '--provider',
      'openai-compatible',
      '--model',
      'team-model',
      '--base-url',
      server.url,
    ]
      .map((word) => `'${word.replace(/'/g, "'\\''")}'`)
      .join(' ');
    execFileSync(
      'tmux',
      [
        '-L',
        socket,
        'new-session',
        '-d',
        '-s',
        'ui',
        '-x',
        '120',
        '-y',
        '40',
        '-c',
        repo.dir,
        `${command}; echo "ratchet exited $?"; sleep 600`,
      ],
      { env },
    );
  });

  afterEach(async () => {
    // Our own tmux server (its own socket), and everything it runs.
    try {
      tmuxRun('kill-server');
    } catch {
      // Already gone.
    }
    await server.close();
    await repo.cleanup();
  });

  it('approves, denies, converses, answers the coach, advances and sets up worktrees without leaving', async () => {
    const brain = teamBrain();
    server.setFallback(brain.reply);
    await shows('ratchet team · iter-1 · phase refinement');
    expect(await shows('Pending approvals (2)')).toMatch(/▸ a1 {2}agent-2 → README\.md/);

    press('a');
    await shows('Approved a1: README.md written.');
    expect(await readFile(join(workspace, 'README.md'), 'utf8')).toBe('# calc\n');
    press('d');
    await shows('Why deny a2?');
    type('keep notes out');
    press('Enter');
    await shows('Denied a2.');
    expect(existsSync(join(workspace, 'notes/ideas.md'))).toBe(false);

    press('c');
    const asked = await shows('Coach asks: Integers only, or floats too?');
    expect(asked).toContain('Agent point 3: add and multiply first.');
    press('m');
    type('floats too');
    press('Enter');
    const complete = await shows('Phase complete: Scope agreed: add and multiply, floats.');
    expect(complete).toContain('pm: floats too');

    press('n');
    await shows('Phase: refinement -> planning');
    await shows('phase planning');

    press('w');
    await shows('Layer 0 of iteration iter-1 has no worktrees yet.');
    press('s');
    const setup = await shows('Layer 0 of ratchet/team-iter-1-');
    expect(setup).toMatch(/▸ T1 {2}empty/);
    press('Escape');
    // Back in the conversation before the next key: an Escape and a q that reach the terminal
    // together are read as one Alt-q (seen in CI under load), which only leaves the view.
    await shows('c continue · m answer');
    press('q');
    await shows('ratchet exited 0');

    // Everything went through the team's stores.
    const { iteration, dir } = await createIterationStore(teamDirOf(repo.dir)).getCurrent();
    expect(iteration.phase).toBe('planning');
    const log = await createConversationStore(dir).readFull();
    const contents = log.map((message) => `${message.from}: ${message.content}`);
    expect(contents).toContain('pm: floats too');
    expect(contents.some((line) => line.includes("denied agent-3's write to notes/ideas.md: keep notes out"))).toBe(
      true,
    );
    expect(await readFile(join(dir, 'groomed.md'), 'utf8')).toContain('add and multiply, on floats');
    expect(await createApprovalStore(dir).pending()).toEqual([]);
    expect(brain.stages.filter((stage) => stage === 'Stage: COACH')).toHaveLength(2);
    expect(brain.stages).toContain('Stage: EXTRACT_REFINEMENT');
  });
});
