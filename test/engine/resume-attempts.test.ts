/**
 * What `resume` reads from the ledger about the stage a killed or interrupted process cut short:
 * the attempt numbers it used and the attempts the gate rejected, since the checkpoint the run
 * resumes from (a real SQLite ledger, the events a run records).
 */
import { describe, expect, it } from 'vitest';
import type { EventInput } from '../../src/core/events.js';
import { createEnveloper } from '../../src/engine/event-stream.js';
import { asGitRun, type GitRun } from '../../src/engine/git-run.js';
import { priorAttempts } from '../../src/workflows/tdd/resume-point.js';
import type { Ledger } from '../../src/ledger/types.js';
import { newRun, useLedger } from '../ledger/helpers.js';

const RUN = 'run-attempts';
const BASE = 'b'.repeat(40);
const PLAN = '1'.repeat(40);
const RED = '2'.repeat(40);

const opened = useLedger();

async function run(ledger: Ledger): Promise<GitRun> {
  const row = await ledger.createRun(
    newRun(RUN, { branch: `ratchet/${RUN}`, baseCommit: BASE, worktree: '/home/worktrees/run-attempts' }),
  );
  return asGitRun(row);
}

/** Records `events` after those already recorded, as each process of the run does. */
async function record(ledger: Ledger, events: EventInput[]): Promise<void> {
  const envelope = createEnveloper(
    RUN,
    { now: () => new Date(), sleep: () => Promise.resolve() },
    await ledger.lastEventNumber(RUN),
  );
  await ledger.recordMany(events.map(envelope));
}

const start = (
  stage: 'PLAN' | 'RED' | 'RED_FIX' | 'GREEN' | 'VERIFY' | 'FIX' | 'RE_VERIFY',
  attempt: number,
  cycle = 1,
): EventInput => ({
  type: 'stage-start',
  stage,
  phase: stage === 'PLAN' ? 'PLAN' : stage === 'RED' || stage === 'RED_FIX' ? 'RED' : 'GREEN',
  cycle,
  attempt,
});
const end = (
  stage: 'PLAN' | 'RED' | 'RED_FIX' | 'GREEN' | 'VERIFY' | 'FIX' | 'RE_VERIFY',
  attempt: number,
  outcome: 'accepted' | 'rejected' | 'error',
  reason: string,
  cycle = 1,
): EventInput => ({ ...start(stage, attempt, cycle), type: 'stage-end', outcome, reason }) as EventInput;
const checkpoint = (stage: 'PLAN' | 'RED', commit: string): EventInput => ({
  type: 'checkpoint-create',
  stage,
  phase: stage,
  commit,
  subject: `${stage.toLowerCase()}: x`,
});

/** Cycle 1 up to its RED checkpoint. */
const UP_TO_RED: EventInput[] = [
  {
    type: 'run-start',
    workflow: 'tdd',
    feature: 'f',
    branch: `ratchet/${RUN}`,
    worktree: '/w',
    baseCommit: BASE,
    resumed: false,
  },
  start('PLAN', 1),
  checkpoint('PLAN', PLAN),
  end('PLAN', 1, 'accepted', ''),
  start('RED', 1),
  end('RED', 1, 'rejected', 'passed-immediately'),
  start('RED_FIX', 2),
  checkpoint('RED', RED),
  end('RED_FIX', 2, 'accepted', 'ok'),
];

describe('priorAttempts', () => {
  it('after kills: the numbers used and the rejected attempts since the checkpoint, not those cut short', async () => {
    const { ledger } = opened;
    const gitRun = await run(ledger);
    await record(ledger, [
      ...UP_TO_RED,
      start('GREEN', 1),
      end('GREEN', 1, 'rejected', 'tests-failing'),
      start('GREEN', 2),
      // The process was killed; the next one closed the attempt it left open.
      {
        type: 'run-start',
        workflow: 'tdd',
        feature: 'f',
        branch: `ratchet/${RUN}`,
        worktree: '/w',
        baseCommit: BASE,
        resumed: true,
      },
      end('GREEN', 2, 'error', 'interrupted'),
      start('GREEN', 3),
      end('GREEN', 3, 'accepted', 'All 2 tests pass'),
      start('VERIFY', 1),
      end('VERIFY', 1, 'rejected', 'lint-failed'),
      start('FIX', 1),
      start('RE_VERIFY', 1),
      // Interrupted (Ctrl-C) inside RE_VERIFY: the run's own end closes both.
      end('RE_VERIFY', 1, 'error', 'interrupted'),
      end('FIX', 1, 'error', 'interrupted'),
      { type: 'run-end', status: 'interrupted' },
    ]);

    expect(await priorAttempts(ledger, gitRun, RED)).toEqual([
      // GREEN #3 was accepted, but the stop undid its work (VERIFY failed, FIX was cut short): it does not count.
      { cycle: 1, stage: 'GREEN', last: 3, rejections: ['tests-failing'] },
      { cycle: 1, stage: 'VERIFY', last: 1, rejections: ['lint-failed'] },
      { cycle: 1, stage: 'FIX', last: 1, rejections: [] },
    ]);
  });

  it('counts RED and RED_FIX together, and nothing before the checkpoint', async () => {
    const { ledger } = opened;
    const gitRun = await run(ledger);
    await record(ledger, UP_TO_RED.slice(0, 5));
    await record(ledger, [end('RED', 1, 'rejected', 'passed-immediately'), start('RED_FIX', 2)]);

    expect(await priorAttempts(ledger, gitRun, PLAN)).toEqual([
      { cycle: 1, stage: 'RED', last: 2, rejections: ['passed-immediately'] },
    ]);
  });

  it('leaves nothing after a run that failed (its resume gets the attempts afresh) or one rolled back', async () => {
    const { ledger } = opened;
    const gitRun = await run(ledger);
    await record(ledger, [
      ...UP_TO_RED,
      start('GREEN', 1),
      end('GREEN', 1, 'rejected', 'tests-failing'),
      start('GREEN', 2),
      end('GREEN', 2, 'rejected', 'tests-failing'),
      start('GREEN', 3),
      end('GREEN', 3, 'rejected', 'tests-failing'),
      { type: 'run-end', status: 'failed', message: 'GREEN failed after 3 attempts: tests-failing' },
    ]);
    expect(await priorAttempts(ledger, gitRun, RED)).toEqual([]);

    // Resumed, then killed in GREEN #1 again: only what came after the failure counts.
    await record(ledger, [start('GREEN', 1), end('GREEN', 1, 'rejected', 'tests-failing'), start('GREEN', 2)]);
    expect(await priorAttempts(ledger, gitRun, RED)).toEqual([
      { cycle: 1, stage: 'GREEN', last: 2, rejections: ['tests-failing'] },
    ]);
    // Rolled back to the PLAN checkpoint: the run made a later one, so RED starts afresh.
    expect(await priorAttempts(ledger, gitRun, PLAN)).toEqual([]);
  });
});
