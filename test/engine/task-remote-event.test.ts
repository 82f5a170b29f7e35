import { describe, expect, it } from 'vitest';
import { remoteEvent } from '../../src/engine/tasks/task-job.js';

describe('remoteEvent (a queue worker streams its task pipeline events to the coordinator)', () => {
  it('keeps the tests or files a rejected gate names, as a local worker reports them', () => {
    const streamed = {
      type: 'stage-end',
      stage: 'GREEN',
      phase: 'GREEN',
      attempt: 1,
      cycle: 1,
      outcome: 'rejected',
      reason: 'tests-not-run',
      subjects: ['adds two numbers', 'adds negatives'],
    };
    const result = remoteEvent(streamed, 'A');
    expect(result).toEqual({ ok: true, event: { ...streamed, task: 'A' } });
  });

  it('refuses a subject that is not text', () => {
    const result = remoteEvent(
      { type: 'stage-end', stage: 'RED', phase: 'RED', attempt: 1, cycle: 1, outcome: 'rejected', subjects: [1] },
      'A',
    );
    expect(result.ok).toBe(false);
  });
});
