import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { TeamApp } from '../../../src/cli/tui/team-app.js';
import type { TeamUiPorts, TeamUiSnapshot } from '../../../src/cli/tui/team-ui-ports.js';
import type { LayerReview } from '../../../src/engine/team/layer-worktrees.js';
import type { TeamEvent } from '../../../src/workflows/team/events.js';
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
  async *[Symbol.asyncIterator](): AsyncIterator<TeamEvent> {
    for (;;) {
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
function fakePorts() {
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
      },
    ],
  };
  const ports: TeamUiPorts = {
    snapshot: () => Promise.resolve(structuredClone(snapshot)),
    converse(answer) {
      calls.push(`converse ${answer ?? '-'}`);
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
    },
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
    advance() {
      calls.push('advance');
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
        head: 'f00',
        verification: {
          commands: ['npm test'],
          decision: { accepted: true, summary: 'All 3 tests pass' },
          sandboxed: true,
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
  return { ports, calls, feed };
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
});
