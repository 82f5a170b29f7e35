import { describe, expect, it } from 'vitest';
import type { EventInput, RatchetEvent } from '../../src/core/events.js';
import type { ModelRequest } from '../../src/core/model.js';
import { cassettePositionAfterFailure, cassettePositionAt } from '../../src/llm/cassette-position.js';

const BASE = 'base000';
const FILE = '/cassettes/run.ndjson';
const request: ModelRequest = {
  system: 'Stage: RED',
  messages: [{ role: 'user', content: 'x' }],
  tools: [],
  maxOutputTokens: 100,
};

/** The ledger's events of one run, in order, built from short descriptions. */
function ledger(...inputs: EventInput[]): RatchetEvent[] {
  return inputs.map((input, index) => ({
    ...input,
    id: `run:${index + 1}`,
    runId: 'run',
    timestamp: '2026-01-01T00:00:00.000Z',
  }));
}

const start = (commit: string, position: number, file = FILE): EventInput => ({
  type: 'run-start',
  workflow: 'tdd',
  feature: 'f',
  branch: 'ratchet/run',
  worktree: '/w',
  baseCommit: BASE,
  resumed: commit !== BASE,
  cassette: { file, commit, position },
});
const plainStart = (): EventInput => ({
  type: 'run-start',
  workflow: 'tdd',
  feature: 'f',
  branch: 'ratchet/run',
  worktree: '/w',
  baseCommit: BASE,
  resumed: true,
});
const checkpoint = (commit: string, position?: number, file = FILE): EventInput => ({
  type: 'checkpoint-create',
  stage: 'RED',
  phase: 'RED',
  commit,
  subject: `test: ${commit}`,
  ...(position === undefined ? {} : { cassette: { file, position } }),
});
const noteWrite = (commit: string): EventInput => ({
  type: 'note-write',
  commit,
  state: {
    phase: 'RED',
    nextPhase: 'GREEN',
    cycleNumber: 1,
    currentTest: null,
    completedTests: [],
    pendingTests: [],
    testResult: 'FAIL',
    error: 'GREEN failed after 3 attempts: tests-failing',
    errorDetails: null,
    retryCount: 2,
  },
});
const end = (status: 'completed' | 'failed' | 'interrupted'): EventInput => ({ type: 'run-end', status });
const call = (provider = 'replay', failed = false): EventInput => ({
  type: 'model-call',
  stage: 'RED',
  provider,
  model: 'm',
  request,
  response: failed
    ? null
    : {
        text: '',
        toolCalls: [],
        finishReason: 'stop',
        usage: { inputTokens: 0, outputTokens: 0 },
        costUsd: 0,
        latencyMs: 0,
        model: 'm',
        provider,
      },
  error: failed ? { code: 'replay-mismatch', message: 'no' } : null,
  latencyMs: 0,
});

describe('cassettePositionAt', () => {
  it('reads the position recorded with the checkpoint, the newest when it was made again', () => {
    const events = ledger(start(BASE, 0), call(), call(), checkpoint('c1', 2), call(), checkpoint('c2', 3), call());
    expect(cassettePositionAt(events, 'c1', FILE, BASE)).toBe(2);
    expect(cassettePositionAt(events, 'c2', FILE, BASE)).toBe(3);
    expect(cassettePositionAt(events, BASE, FILE, BASE)).toBe(0);
  });

  it('over repeated kills and resumes, each process continuing where its checkpoint left the cassette', () => {
    const events = ledger(
      start(BASE, 0),
      call(),
      checkpoint('c1', 1),
      call(),
      call(), // killed in the stage after c1
      start('c1', 1),
      call(),
      checkpoint('c2', 2),
      call(),
      call(),
      call(), // killed again
      start('c2', 2),
      call(),
    );
    expect(cassettePositionAt(events, 'c2', FILE, BASE)).toBe(2);
    expect(cassettePositionAt(events, 'c1', FILE, BASE)).toBe(1);
  });

  it('a checkpoint whose event never reached the ledger: the last process made it, position counted from its last mark', () => {
    // Killed between the commit of c2 and the ledger write of its checkpoint-create.
    const events = ledger(start(BASE, 0), call(), checkpoint('c1', 1), call(), call('replay', true), call());
    expect(cassettePositionAt(events, 'c2', FILE, BASE)).toBe(3);
    // A process resumed from there says so in its run-start: a later rollback to c2 finds it.
    const later = ledger(
      start(BASE, 0),
      call(),
      checkpoint('c1', 1),
      call(),
      call(),
      start('c2', 3),
      call(),
      checkpoint('c3', 4),
      call(),
    );
    expect(cassettePositionAt(later, 'c2', FILE, BASE)).toBe(3);
  });

  it('a cassette the run never played starts at its first entry', () => {
    const events = ledger(start(BASE, 0), call(), checkpoint('c1', 1));
    expect(cassettePositionAt(events, 'c1', '/cassettes/other.ndjson', BASE)).toBe(0);
    expect(cassettePositionAt(ledger(plainStart(), call('anthropic'), checkpoint('c1')), 'c1', FILE, BASE)).toBe(0);
  });

  it('unknown (null) for a checkpoint another provider or cassette made after this cassette was played', () => {
    const events = ledger(
      start(BASE, 0),
      call(),
      checkpoint('c1', 1),
      plainStart(),
      call('anthropic'),
      checkpoint('c2'),
    );
    expect(cassettePositionAt(events, 'c2', FILE, BASE)).toBeNull();
    // ...and for one missing from the ledger when the last process was not replaying this cassette.
    const other = ledger(
      start(BASE, 0),
      call(),
      checkpoint('c1', 1),
      start('c1', 0, '/cassettes/other.ndjson'),
      call(),
    );
    expect(cassettePositionAt(other, 'c2', FILE, BASE)).toBeNull();
  });
});

describe('cassettePositionAfterFailure', () => {
  it('a run whose last process failed a gate: after every answer it played, on the checkpoint it failed on', () => {
    // PLAN and RED checkpointed, then three GREEN attempts of two calls each were rejected.
    const events = ledger(
      start(BASE, 0),
      call(),
      checkpoint('c1', 1),
      noteWrite('c1'),
      call(),
      checkpoint('c2', 2),
      noteWrite('c2'),
      ...Array.from({ length: 6 }, () => call()),
      noteWrite('c2'),
      end('failed'),
    );
    expect(cassettePositionAfterFailure(events, FILE)).toEqual({ commit: 'c2', position: 8 });
    // The checkpoint rule (a kill or an interruption) would go back to c2's position.
    expect(cassettePositionAt(events, 'c2', FILE, BASE)).toBe(2);
    // A call that got no answer (the cassette had none left) did not move it.
    const exhausted = ledger(start(BASE, 0), call(), checkpoint('c1', 1), call(), call('replay', true), end('failed'));
    expect(cassettePositionAfterFailure(exhausted, FILE)).toEqual({ commit: 'c1', position: 2 });
  });

  it('counts from where a resumed process started, and before any checkpoint from the run start', () => {
    const resumed = ledger(
      start(BASE, 0),
      call(),
      checkpoint('c1', 1),
      call(),
      call(),
      noteWrite('c1'),
      end('failed'),
      start('c1', 3),
      call(),
      call(),
      noteWrite('c1'),
      end('failed'),
    );
    expect(cassettePositionAfterFailure(resumed, FILE)).toEqual({ commit: 'c1', position: 5 });
    // That resumed process's run-start also gives the position the first failure left at c1.
    expect(cassettePositionAt(resumed, 'c1', FILE, BASE)).toBe(3);
    const planFailed = ledger(start(BASE, 0), call(), call(), call(), end('failed'));
    expect(cassettePositionAfterFailure(planFailed, FILE)).toEqual({ commit: BASE, position: 3 });
  });

  it('null unless the last process ended failed while replaying this cassette', () => {
    const interrupted = ledger(start(BASE, 0), call(), checkpoint('c1', 1), call(), end('interrupted'));
    expect(cassettePositionAfterFailure(interrupted, FILE)).toBeNull();
    const killed = ledger(start(BASE, 0), call(), checkpoint('c1', 1), end('failed'), start('c1', 1), call());
    expect(cassettePositionAfterFailure(killed, FILE)).toBeNull();
    const other = ledger(start(BASE, 0, '/cassettes/other.ndjson'), call(), end('failed'));
    expect(cassettePositionAfterFailure(other, FILE)).toBeNull();
    const live = ledger(plainStart(), call('anthropic'), checkpoint('c1'), end('failed'));
    expect(cassettePositionAfterFailure(live, FILE)).toBeNull();
  });
});
