import { render } from 'ink-testing-library';
import { useEffect, type ReactNode } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { RatchetError } from '../../../src/core/errors.js';
import { TeamApp } from '../../../src/cli/tui/team-app.js';
import type { OnText, TeamUiPorts, TeamUiSnapshot } from '../../../src/cli/tui/team-ui-ports.js';
import type { LayerMerge, LayerReview } from '../../../src/engine/team/layer-worktrees.js';
import type { TeamEvent } from '../../../src/workflows/team/events.js';
import type { CheckpointInfo } from '../../../src/workflows/team/stores.js';
import type { Approval } from '../../../src/workflows/team/types.js';

/** An event stream the test feeds by hand, so it sees each frame the TUI draws in between. */
class EventFeed implements AsyncIterable<TeamEvent> {
  private queue: Array<TeamEvent | null> = [];
  private wake: (() => void) | undefined;
  push(...events: TeamEvent[]): void {
    this.queue.push(...events);
    this.wake?.();
  }
  end(): void {
    this.queue.push(null);
    this.wake?.();
  }
  /** Ends the stream with an error, as an aborted session does. */
  fail(error: Error): void {
    this.failure = error;
    this.wake?.();
  }
  private failure: Error | undefined;
  async *[Symbol.asyncIterator](): AsyncIterator<TeamEvent> {
    for (;;) {
      if (this.failure !== undefined) throw this.failure;
      const next = this.queue.shift();
      if (next === null) return;
      if (next !== undefined) {
        yield next;
        continue;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

const approval = (id: string, path: string): Approval => ({
  id,
  agent: 'agent-2',
  path,
  content: 'x = 1\n',
  status: 'pending',
});

/** Fake ports over an in-memory iteration; records what the TUI asked for. */
function fakePorts(options: { iteration?: boolean } = {}) {
  let current = options.iteration ?? true;
  const snapshot: TeamUiSnapshot = {
    iterationId: 'iter-1',
    description: 'a calculator',
    phase: 'refinement',
    maxTurns: 30,
    turn: 0,
    currentLayer: null,
    messages: [{ from: 'system', content: 'Kickoff: what should the calculator do?' }],
    approvals: [],
  };
  const calls: string[] = [];
  const feeds: EventFeed[] = [];
  /** Each session's stream of reply fragments, as the engine would call it. */
  const texts: OnText[] = [];
  const review: LayerReview = {
    iterationBranch: 'ratchet/team-iter-1',
    layer: 0,
    base: 'abcdef0123456789',
    tasks: [
      {
        id: 'T1',
        branch: 'ratchet/team-iter-1-L0-T1',
        worktree: '/w/T1',
        status: 'ready',
        diff: 'diff --git a/src/add.js b/src/add.js\n+export const add = (a, b) => a + b;\n',
        stat: { files: [{ path: 'src/add.js', added: 1, deleted: 0, binary: false }], added: 1, deleted: 0 },
        uncommitted: [],
        pending: '',
      },
    ],
  };
  const checkpoints: CheckpointInfo[] = [
    {
      number: 1,
      phase: 'refinement',
      createdAt: '2026-01-01T00:00:00.000Z',
      description: 'after a refinement session',
    },
  ];
  /** Each conversation's or grooming session's events, as the test feeds them. */
  const stream = (): AsyncGenerator<TeamEvent> => {
    const feed = new EventFeed();
    feeds.push(feed);
    // As the live ports do: each event is in the log once the TUI sees it.
    const persisted = async function* () {
      for await (const event of feed) {
        if (event.type === 'AppendMessage') snapshot.messages.push(event.msg);
        if (event.type === 'ApprovalRequested') snapshot.approvals.push(event.approval);
        yield event;
      }
    };
    return persisted();
  };
  const ports: TeamUiPorts = {
    snapshot: () => Promise.resolve(current ? structuredClone(snapshot) : null),
    start(description) {
      calls.push(`start ${description}`);
      current = true;
      snapshot.description = description;
      return Promise.resolve(['iter-1: agents write in /w/iter-1 (branch ratchet/team-iter-1).']);
    },
    converse({ answer, moreTurns, onText }) {
      texts.push(onText);
      calls.push(`converse ${answer ?? '-'}${moreTurns === null ? '' : ` +${moreTurns}`}`);
      return stream();
    },
    groom({ topic, withCoach, onText }) {
      texts.push(onText);
      calls.push(`groom ${topic}${withCoach ? ' with coach' : ''}`);
      // Grooming messages go to .team/grooming/, not to the iteration's log.
      const feed = new EventFeed();
      feeds.push(feed);
      return feed[Symbol.asyncIterator]() as AsyncGenerator<TeamEvent>;
    },
    listCheckpoints: () => Promise.resolve(structuredClone(checkpoints)),
    createCheckpoint(description) {
      calls.push(`checkpoint ${description}`);
      const info = {
        number: checkpoints.length + 1,
        phase: snapshot.phase,
        createdAt: '2026-01-01T00:01:00.000Z',
        description,
      };
      checkpoints.push(info);
      return Promise.resolve(info);
    },
    restoreCheckpoint(number) {
      calls.push(`restore ${number}`);
      const info = checkpoints.find((checkpoint) => checkpoint.number === number);
      if (info === undefined) return Promise.reject(new Error(`no checkpoint ${number}`));
      snapshot.phase = info.phase;
      return Promise.resolve(info);
    },
    stop() {
      calls.push('stop');
    },
    listApprovals: () =>
      Promise.resolve([
        { ...approval('a1', 'README.md'), status: 'approved' },
        { ...approval('a2', '.github/workflows/ci.yml'), status: 'denied', reason: 'no CI changes' },
        ...snapshot.approvals,
      ]),
    approve(id) {
      calls.push(`approve ${id}`);
      snapshot.approvals = snapshot.approvals.filter((entry) => entry.id !== id);
      return Promise.resolve();
    },
    deny(id, reason) {
      calls.push(`deny ${id} ${reason ?? '-'}`);
      snapshot.approvals = snapshot.approvals.filter((entry) => entry.id !== id);
      return Promise.resolve();
    },
    advance(options = {}) {
      calls.push(options.force === true ? 'advance --force' : 'advance');
      snapshot.phase = 'planning';
      return Promise.resolve(['Wrote groomed.md', 'Phase: refinement -> planning']);
    },
    setupLayer: () => Promise.reject(new Error('not in this test')),
    reviewLayer() {
      calls.push('review');
      return Promise.resolve(review);
    },
    mergeLayer() {
      calls.push('merge');
      snapshot.currentLayer = 1;
      return Promise.resolve({
        outcome: 'merged',
        merged: ['T1'],
        commits: [],
        head: 'f00',
        verification: {
          commands: ['npm test'],
          decision: { accepted: true, summary: 'All 3 tests pass' },
          sandboxed: true,
          notices: [],
        },
        nextLayer: 1,
        done: false,
      });
    },
  };
  const feed = (index: number): EventFeed => {
    const found = feeds[index];
    if (found === undefined) throw new Error(`no conversation ${index} yet`);
    return found;
  };
  const text = (index: number): OnText => {
    const found = texts[index];
    if (found === undefined) throw new Error(`no session ${index} yet`);
    return found;
  };
  return { ports, calls, feed, text };
}

let app: ReturnType<typeof render> | undefined;
afterEach(() => app?.unmount());

/** Waits until the last frame shows `text` (the TUI renders asynchronously); fails with the frame. */
async function shows(text: string | RegExp): Promise<string> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const frame = app?.lastFrame() ?? '';
    if (typeof text === 'string' ? frame.includes(text) : text.test(frame)) return frame;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`The TUI never showed ${String(text)}; last frame:\n${app?.lastFrame() ?? ''}`);
}

/** Waits until `condition` holds (what the TUI does after a key is asynchronous). */
async function waitFor(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

/** Calls `onUnmount` when Ink takes the tree down: the TUI exited. */
function Unmounted({ onUnmount, children }: { onUnmount: () => void; children: ReactNode }) {
  useEffect(() => onUnmount, [onUnmount]);
  return <>{children}</>;
}

async function press(...keys: string[]): Promise<void> {
  for (const key of keys) {
    app?.stdin.write(key);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const message = (from: string, content: string): TeamEvent => ({
  type: 'AppendMessage',
  msg: { from, content, iteration: 'iter-1' },
});

describe('ratchet team ui: the conversation live, approvals inline, phases and worktrees without leaving', () => {
  it('streams the conversation as the engine yields it, with the phase and turn in the header', async () => {
    const { ports, calls, feed } = fakePorts();
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    await shows('Kickoff: what should the calculator do?');
    expect(await shows('phase refinement')).toContain('iter-1');
    await press('c');
    expect(calls).toEqual(['converse -']);
    feed(0).push(
      {
        type: 'SessionStarted',
        sessionId: 'iter-1',
        phase: 'refinement',
        agents: ['agent-1', 'agent-2', 'agent-3'],
        coach: 'coach',
        currentLayer: null,
        turn: 0,
        maxTurns: 12,
        parallel: false,
      },
      { type: 'AgentTurnStarted', agentName: 'agent-1', turn: 0 },
    );
    await shows('agent-1 is speaking…');
    expect(await shows('turn 1/12')).not.toContain('Two operations');
    feed(0).push(message('agent-1', 'Two operations first: add and multiply.'), {
      type: 'AgentTurnStarted',
      agentName: 'agent-2',
      turn: 1,
    });
    const frame = await shows('agent-2 is speaking…');
    expect(frame).toContain('agent-1: Two operations first: add and multiply.');
    expect(frame).toContain('turn 2/12');
    feed(0).push({ type: 'SessionComplete', totalTurns: 2 });
    feed(0).end();
    await shows('Conversation paused after 2 turns');
  });

  it("shows each reply as it streams, in a parallel round each speaker's own, until its whole message replaces it", async () => {
    const { ports, feed, text } = fakePorts();
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    await shows('Kickoff');
    await press('c');
    feed(0).push({ type: 'ParallelRoundStarted', agents: ['agent-1', 'agent-2'], turn: 0 });
    await shows('agent-1, agent-2 are speaking…');
    text(0)('agent-1', 'Two oper');
    text(0)('agent-2', 'I would');
    text(0)('agent-1', 'ations first');
    const streaming = await shows('agent-1: Two operations first▍');
    expect(streaming).toContain('agent-2: I would▍');
    feed(0).push(message('agent-1', 'Two operations first: add and multiply.'));
    const replaced = await shows('agent-1: Two operations first: add and multiply.');
    expect(replaced).not.toContain('Two operations first▍');
    expect(replaced).toContain('agent-2: I would▍');
    feed(0).push({ type: 'SessionComplete', totalTurns: 2 });
    feed(0).end();
    expect(await shows('Conversation paused after 2 turns')).not.toContain('I would');
  });

  it('shows pending approvals inline: a approves the selected one, d denies it with a reason typed in', async () => {
    const { ports, calls, feed } = fakePorts();
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    await shows('Kickoff');
    await press('c');
    feed(0).push(
      { type: 'ApprovalRequested', approval: approval('a1', 'README.md') },
      { type: 'ApprovalRequested', approval: approval('a2', '.github/workflows/ci.yml') },
      { type: 'PauseForApprovals', pendingCount: 2 },
    );
    feed(0).end();
    await shows('Paused: 2 write(s) wait for approval');
    expect(await shows('Pending approvals (2)')).toMatch(/▸ a1 {2}agent-2 → README\.md/);
    await press('a');
    await shows('Approved a1: README.md written.');
    expect(await shows('Pending approvals (1)')).toMatch(/▸ a2 {2}agent-2 → \.github\/workflows\/ci\.yml/);
    await press('d');
    await shows('Why deny a2?');
    // Pasted with its Enter in one chunk, as a terminal may deliver it.
    await press('no CI changes\r');
    await shows('Denied a2.');
    expect(calls).toEqual(['converse -', 'approve a1', 'deny a2 no CI changes']);
    expect(app.lastFrame()).not.toContain('Pending approvals');
  });

  it("answers the coach's question as continue -m does, and advances the phase without leaving", async () => {
    const { ports, calls, feed } = fakePorts();
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    await shows('Kickoff');
    await press('c');
    feed(0).push(message('coach', 'Should results be integers only?'), {
      type: 'CoachAskedPM',
      question: 'Integers only?',
    });
    feed(0).end();
    await shows('Coach asks: Integers only?');
    // `m` and the answer in one chunk, as fast typing or a paste delivers them.
    await press('mfloats too');
    await shows('Answer the coach: floats too');
    await press('\r');
    expect(calls).toEqual(['converse -', 'converse floats too']);
    feed(1).push({ type: 'PhaseCompleteSignaled', summary: 'Scope agreed.', phase: 'refinement' });
    feed(1).end();
    await shows('Phase complete: Scope agreed.');
    await press('n');
    const frame = await shows('Phase: refinement -> planning');
    expect(frame).toContain('Wrote groomed.md');
    expect(await shows('phase planning')).toBeTruthy();
    expect(calls.at(-1)).toBe('advance');
  });

  it('forces an advance (advance --force) only once yes is typed at its confirmation', async () => {
    const { ports, calls } = fakePorts();
    app = render(<TeamApp ports={ports} size={{ columns: 200, rows: 30 }} />);
    await shows('Kickoff');
    expect(await shows('n advance (N --force)')).toBeTruthy();
    await press('N');
    await shows('Advance --force: leave implementation although layers of tasks.json were never merged?');
    await press('no');
    await press('\r');
    await shows('Not advanced.');
    expect(calls.filter((call) => call.startsWith('advance'))).toEqual([]);
    await press('Nyes');
    await press('\r');
    await shows('Phase: refinement -> planning');
    expect(calls.filter((call) => call.startsWith('advance'))).toEqual(['advance --force']);
  });

  it('reviews the layer with its diffs, and merges it', async () => {
    const { ports, calls } = fakePorts();
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    await shows('Kickoff');
    await press('w');
    const frame = await shows('Layer 0 of ratchet/team-iter-1');
    expect(frame).toMatch(/▸ T1 {2}ready {2}1 file\(s\) \+1 -0/);
    expect(frame).toContain('+export const add = (a, b) => a + b;');
    await press('M');
    await shows('Merged T1: All 3 tests pass.');
    expect(await shows('layer 1')).toContain('Layer 1 is next');
    expect(calls).toEqual(['review', 'merge', 'review']);
    await press('\u001b');
    await shows('Kickoff');
  });

  it("never passes a model's escape sequences to the terminal", async () => {
    const { ports, feed } = fakePorts();
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    await shows('Kickoff');
    await press('c');
    feed(0).push(message('agent-3', 'look\u001b]0;pwned\u0007 here\u001b[2J now'));
    feed(0).end();
    const frame = await shows('agent-3: look here now');
    expect(frame).not.toContain('pwned');
    expect(frame).not.toContain('\u001b[2J');
  });

  it('starts an iteration when there is none, as team run does, and its conversation at once', async () => {
    const { ports, calls, feed } = fakePorts({ iteration: false });
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    expect(await shows('no iteration yet')).toContain('r start an iteration');
    await press('r');
    await shows('Describe the new iteration:');
    await press('a calculator CLI\r');
    await shows('phase refinement');
    expect(calls).toEqual(['start a calculator CLI', 'converse -']);
    feed(0).push(message('agent-1', 'Add first.'), { type: 'SessionComplete', totalTurns: 1 });
    feed(0).end();
    expect(await shows('Conversation paused after 1 turns')).toContain('agent-1: Add first.');
  });

  it('grooms a topic in a view of its own, with or without the coach, and goes back to the iteration', async () => {
    const { ports, calls, feed } = fakePorts();
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    await shows('Kickoff');
    await press('G');
    await shows('Groom which topic?');
    await press('Caching strategy\r');
    await shows('grooming "Caching strategy"');
    feed(0).push(
      {
        type: 'SessionStarted',
        sessionId: 'caching-strategy',
        phase: null,
        agents: ['agent-1', 'agent-2'],
        coach: 'coach',
        currentLayer: null,
        turn: 0,
        maxTurns: 4,
        parallel: false,
      },
      { type: 'AgentTurnStarted', agentName: 'agent-1', turn: 0 },
      message('agent-1', 'An LRU in front of the API.'),
      { type: 'SessionComplete', totalTurns: 1 },
    );
    feed(0).end();
    const frame = await shows('Grooming paused after 1 turns');
    expect(frame).toContain('agent-1: An LRU in front of the API.');
    expect(frame).toContain('turn 1/4');
    expect(frame).not.toContain('Kickoff');
    await press('c');
    expect(calls).toEqual(['groom Caching strategy with coach', 'groom Caching strategy with coach']);
    feed(1).end();
    await press('\u001b');
    const back = await shows('Kickoff');
    expect(back).toContain('phase refinement · turn 0/30');
    expect(back).not.toContain('An LRU');
  });

  it('lists every approval so far with its decision, as team approvals does', async () => {
    const { ports } = fakePorts();
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    await shows('Kickoff');
    await press('l');
    const frame = await shows('Approvals of iter-1 (2)');
    expect(frame).toMatch(/a1 {4}approved agent-2: README\.md \(6 chars\)/);
    expect(frame).toMatch(/a2 {4}denied {3}agent-2: \.github\/workflows\/ci\.yml \(6 chars\) — no CI changes/);
    await press('\u001b');
    await shows('c continue');
  });

  it('gives the phase more agent turns, as continue --max-turns does, and refuses what is not a number', async () => {
    const { ports, calls } = fakePorts();
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    await shows('Kickoff');
    await press('t', 'x\r');
    await shows('More turns: a positive whole number, not "x".');
    await press('t', '5\r');
    await shows('Starting…');
    expect(calls).toEqual(['converse - +5']);
  });

  it('lists, creates and restores checkpoints, a restore only once confirmed', async () => {
    const { ports, calls } = fakePorts();
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    await shows('Kickoff');
    await press('p');
    expect(await shows('Checkpoints of iter-1 (1)')).toMatch(/▸ {3}1 {2}refinement .* after a refinement session/);
    await press('c');
    await shows('Describe the checkpoint:');
    // Esc leaves the typed line for the checkpoints view it was asked from, creating nothing.
    await press('\u001b');
    expect(await shows('Checkpoints of iter-1 (1)')).not.toContain('Describe the checkpoint:');
    await press('c');
    await shows('Describe the checkpoint:');
    await press('before planning\r');
    await shows('Checkpoint 2 (refinement): before planning');
    expect(await shows('Checkpoints of iter-1 (2)')).toMatch(/▸ {3}2 {2}refinement .* before planning/);
    await press('\u001b[A', 'r');
    await shows('Restore checkpoint 1?');
    await press('n');
    await shows('↑↓ select · c create · r restore');
    expect(calls).toEqual(['checkpoint before planning']);
    await press('r', 'y');
    await shows('Restored checkpoint 1 (refinement): after a refinement session');
    expect(calls).toEqual(['checkpoint before planning', 'restore 1']);
    await shows('Kickoff');
  });

  it('shows a model server that is down as an error with what to do, and takes keys after it', async () => {
    const { ports, calls } = fakePorts();
    ports.converse = () => {
      calls.push('converse');
      const down = new RatchetError(
        'provider',
        'The model server at http://127.0.0.1:9 did not answer (ECONNREFUSED).',
        {
          hint: 'Start it, or pass --base-url.',
        },
      );
      return (async function* (): AsyncGenerator<TeamEvent> {
        yield* [];
        await Promise.reject(down);
      })();
    };
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    await shows('Kickoff');
    await press('c');
    const frame = await shows('The conversation: The model server at http://127.0.0.1:9 did not answer');
    expect(frame).toContain('Start it, or pass --base-url.');
    await press('n');
    await shows('Phase: refinement -> planning');
    expect(calls).toEqual(['converse', 'advance']);
  });

  it('shows a red verifier and a merge conflict after a merge, the review still open', async () => {
    const { ports } = fakePorts();
    const outcomes: LayerMerge[] = [
      {
        outcome: 'red',
        verification: {
          commands: ['npm test'],
          decision: {
            accepted: false,
            reason: 'tests-failing',
            feedback: 'not ok 1 - add\n  expected 3, got 4',
            subjects: ['add'],
          },
          sandboxed: true,
          notices: [],
        },
      },
      {
        outcome: 'conflict',
        task: 'T2',
        files: ['src/calc.js'],
        branch: 'ratchet/team-iter-1-L0-T2',
        worktree: '/w/T2',
      },
    ];
    ports.mergeLayer = () => {
      const next = outcomes.shift();
      return next === undefined ? Promise.reject(new Error('no more merges')) : Promise.resolve(next);
    };
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    await shows('Kickoff');
    await press('w');
    await shows('Layer 0 of ratchet/team-iter-1');
    await press('M');
    const red = await shows('The merged layer fails verification');
    expect(red).toContain('expected 3, got 4');
    expect(red).toContain('Layer 0 of ratchet/team-iter-1');
    await press('M');
    const conflict = await shows('Merging task T2 conflicts in src/calc.js');
    expect(conflict).toContain('ratchet/team-iter-1-L0-T2');
    await press('M');
    await shows('Merge: no more merges');
  });

  it('scrolls a long diff by windows, not past its end', async () => {
    const { ports } = fakePorts();
    const diff = Array.from({ length: 60 }, (_, line) => `+line ${line + 1}`).join('\n');
    const review = await ports.reviewLayer();
    const task = review.tasks[0];
    if (task === undefined || task.status === 'missing') throw new Error('a ready task expected');
    ports.reviewLayer = () => Promise.resolve({ ...review, tasks: [{ ...task, diff }] });
    app = render(<TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />);
    await shows('Kickoff');
    await press('w');
    expect(await shows('diff lines 1-')).toContain('+line 1');
    await press('j');
    expect(await shows('diff lines 11-')).toContain('+line 11');
    await press('j', 'j', 'j', 'j', 'j', 'j');
    const end = await shows(/diff lines \d+-60 of 60/);
    expect(end).toContain('+line 60');
    await press('k');
    expect(await shows(/diff lines \d+-50 of 60/)).toContain('+line 50');
  });

  it('quits on Ctrl-C (or q) only once what runs has stopped, so its lock is released before the TUI is gone', async () => {
    const { ports, calls, feed } = fakePorts();
    let unmounted = false;
    app = render(
      <Unmounted onUnmount={() => (unmounted = true)}>
        <TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />
      </Unmounted>,
    );
    await shows('Kickoff');
    await press('c');
    feed(0).push({ type: 'AgentTurnStarted', agentName: 'agent-1', turn: 0 });
    await shows('agent-1 is speaking…');
    await press('\u0003');
    await shows('Stopping what runs (q again leaves at once)');
    expect(calls).toEqual(['converse -', 'stop']);
    expect(unmounted).toBe(false);
    // The live ports' abort ends the running session with an error (its lock released on the way).
    feed(0).fail(new Error('the TUI was closed'));
    await waitFor(() => unmounted);
  });

  it('starts nothing still queued once q is pressed, and leaves at once on a second q', async () => {
    const { ports, calls, feed } = fakePorts();
    let unmounted = false;
    app = render(
      <Unmounted onUnmount={() => (unmounted = true)}>
        <TeamApp ports={ports} size={{ columns: 100, rows: 30 }} />
      </Unmounted>,
    );
    await shows('Kickoff');
    // n (advance) waits behind the running conversation; q comes before it starts.
    await press('c', 'n', 'q');
    await shows('Stopping what runs');
    feed(0).end();
    await waitFor(() => unmounted);
    expect(calls).toEqual(['converse -', 'stop']);

    app.unmount();
    unmounted = false;
    const second = fakePorts();
    app = render(
      <Unmounted onUnmount={() => (unmounted = true)}>
        <TeamApp ports={second.ports} size={{ columns: 100, rows: 30 }} />
      </Unmounted>,
    );
    await shows('Kickoff');
    await press('c', 'q');
    await shows('Stopping what runs');
    expect(unmounted).toBe(false);
    await press('q');
    await waitFor(() => unmounted);
  });
});
