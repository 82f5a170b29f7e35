/**
 * How `driveRun` ends the plain output of a run that did not complete: an interrupted run with
 * one line saying what stopped it and how to go on; a failed run with its `run-end` line, the
 * error's hint and the resume command. The run is a generator of events, as the engine's is.
 */
import { describe, expect, it } from 'vitest';
import { RatchetError } from '../../src/core/errors.js';
import type { EventInput, RatchetEvent } from '../../src/core/events.js';
import type { RunOutcome } from '../../src/engine/run-process.js';
import type { Output } from '../../src/cli/output.js';
import { driveRun } from '../../src/cli/drive-run.js';

const RUN = '20260101-000000-abcd';

function capture(): { output: Output; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const plain = (line: string): string => line.replace(/\u001b\[[0-9;]*m/g, '');
  return {
    output: {
      json: false,
      out: (line) => out.push(plain(line)),
      err: (line) => err.push(plain(line)),
      progress: () => {},
    },
    out,
    err,
  };
}

let seq = 0;
const event = (input: EventInput): RatchetEvent => ({
  ...input,
  id: `${RUN}:${++seq}`,
  runId: RUN,
  timestamp: '2026-01-01T00:00:00.000Z',
});

// eslint-disable-next-line @typescript-eslint/require-await -- a generator of the engine's shape
async function* stoppedRun(error: RatchetError): AsyncGenerator<RatchetEvent, RunOutcome> {
  const status = error.code === 'interrupted' ? 'interrupted' : 'failed';
  yield event({
    type: 'run-start',
    workflow: 'tdd',
    feature: 'x',
    branch: `ratchet/${RUN}`,
    worktree: '/tmp/w',
    baseCommit: 'a'.repeat(40),
    resumed: false,
  });
  yield event({ type: 'run-end', status, message: error.message });
  return { runId: RUN, status, error, result: null, resumable: true };
}

describe('driveRun, plain output', () => {
  it('ends an interrupted run with one line: what stopped it, and the resume command', async () => {
    const { output, out, err } = capture();
    const error = new RatchetError('interrupted', 'Interrupted by SIGINT', { details: { signal: 'SIGINT' } });
    const { code } = await driveRun(stoppedRun(error), output, () => true);

    expect(code).toBe(130);
    expect(out.join('\n')).not.toMatch(/interrupted/i);
    expect(err).toEqual([`\nRun ${RUN} interrupted (SIGINT); resume with: ratchet resume ${RUN}`]);
  });

  it('says no signal when it does not know one', async () => {
    const { output, err } = capture();
    const { code } = await driveRun(stoppedRun(new RatchetError('interrupted', 'Interrupted')), output, () => false);
    expect(code).toBe(4);
    expect(err).toEqual([`\nRun ${RUN} interrupted; resume with: ratchet resume ${RUN}`]);
  });

  it('ends a failed run with its run-end line, the hint and the resume command', async () => {
    const { output, out, err } = capture();
    const error = new RatchetError('gate-failed', 'PLAN failed after 3 attempts: invalid-output (no JSON)', {
      hint: 'Fix the cause.',
    });
    const { code } = await driveRun(stoppedRun(error), output, () => false);
    expect(code).toBe(1);
    expect(out.at(-1)).toBe(`\nRun ${RUN} failed: PLAN failed after 3 attempts: invalid-output (no JSON)`);
    expect(err).toEqual(['hint: Fix the cause.', `Resume with: ratchet resume ${RUN}`]);
  });
});
