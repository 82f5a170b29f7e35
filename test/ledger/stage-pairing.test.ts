import { describe, expect, it } from 'vitest';
import { useRunLedger } from './helpers.js';

const RUN = '20260101-000000-a1b2';

describe('stage-start / stage-end pairing', () => {
  const fixture = useRunLedger(RUN);

  it('pairs stage-start with stage-end, across retries and cycles', async () => {
    const { ledger, ev } = fixture;
    await ledger.recordMany([
      ev('stage-start', { stage: 'GREEN', phase: 'GREEN', attempt: 1, cycle: 1 }),
      ev('stage-end', {
        stage: 'GREEN',
        phase: 'GREEN',
        attempt: 1,
        cycle: 1,
        outcome: 'rejected',
        reason: '1 test still fails',
      }),
      ev('stage-start', { stage: 'GREEN', phase: 'GREEN', attempt: 2, cycle: 1 }),
      ev('stage-start', { stage: 'VERIFY', phase: 'GREEN', attempt: 1, cycle: 1 }),
      ev('stage-end', { stage: 'GREEN', phase: 'GREEN', attempt: 2, cycle: 1, outcome: 'accepted' }),
      ev('stage-end', { stage: 'VERIFY', phase: 'GREEN', attempt: 1, cycle: 1, outcome: 'accepted' }),
      ev('stage-start', { stage: 'GREEN', phase: 'GREEN', attempt: 1, cycle: 2 }),
    ]);
    // A stage that ends without having started (skipped) is recorded as a closed attempt.
    await ledger.record(
      ev('stage-end', {
        stage: 'REFACTOR',
        phase: 'REFACTOR',
        attempt: 1,
        cycle: 1,
        outcome: 'skipped',
        reason: 'no size problems',
      }),
    );

    const stages = await ledger.stages(RUN);
    expect(stages.map((s) => [s.cycle, s.stage, s.attempt, s.outcome, s.reason])).toEqual([
      [1, 'GREEN', 1, 'rejected', '1 test still fails'],
      [1, 'GREEN', 2, 'accepted', null],
      [1, 'VERIFY', 1, 'accepted', null],
      [2, 'GREEN', 1, null, null],
      [1, 'REFACTOR', 1, 'skipped', 'no size problems'],
    ]);
    expect(stages[0]).toMatchObject({
      runId: RUN,
      phase: 'GREEN',
      startedAt: '2026-01-01T00:00:11.000Z',
      endedAt: '2026-01-01T00:00:12.000Z',
    });
    expect(stages[1]).toMatchObject({
      startedAt: '2026-01-01T00:00:13.000Z',
      endedAt: '2026-01-01T00:00:15.000Z',
    });
    expect(stages[3]?.endedAt).toBeNull();
    expect(stages[4]?.startedAt).toBe(stages[4]?.endedAt);
  });

  it('closes the latest open attempt when the same attempt number is started again (resume)', async () => {
    const { ledger, ev } = fixture;
    await ledger.recordMany([
      ev('stage-start', { stage: 'RED', phase: 'RED', attempt: 1, cycle: 1 }),
      ev('stage-start', { stage: 'RED', phase: 'RED', attempt: 1, cycle: 1 }),
      ev('stage-end', { stage: 'RED', phase: 'RED', attempt: 1, cycle: 1, outcome: 'accepted' }),
    ]);
    expect((await ledger.stages(RUN)).map((s) => s.outcome)).toEqual([null, 'accepted']);
  });

  it("closes each task's own attempt when parallel tasks are at the same cycle, stage and attempt", async () => {
    const { ledger, ev } = fixture;
    const of = <T extends object>(task: string, event: T): T & { task: string } => ({ ...event, task });
    await ledger.recordMany([
      of('KEY', ev('stage-start', { stage: 'RED', phase: 'RED', attempt: 1, cycle: 1 })),
      of('DUMPS', ev('stage-start', { stage: 'RED', phase: 'RED', attempt: 1, cycle: 1 })),
      // KEY ends first: it must close KEY's attempt, not the one started last.
      of(
        'KEY',
        ev('stage-end', { stage: 'RED', phase: 'RED', attempt: 1, cycle: 1, outcome: 'rejected', reason: 'no test' }),
      ),
      of('DUMPS', ev('stage-end', { stage: 'RED', phase: 'RED', attempt: 1, cycle: 1, outcome: 'accepted' })),
    ]);
    expect((await ledger.stages(RUN)).map((s) => [s.task, s.outcome, s.reason])).toEqual([
      ['KEY', 'rejected', 'no test'],
      ['DUMPS', 'accepted', null],
    ]);
  });

  it('records no task for the attempts of other runs', async () => {
    const { ledger, ev } = fixture;
    await ledger.record(ev('stage-start', { stage: 'PLAN', phase: 'PLAN', attempt: 1, cycle: 1 }));
    expect((await ledger.stages(RUN)).map((s) => s.task)).toEqual([null]);
  });
});
