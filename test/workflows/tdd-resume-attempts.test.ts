/**
 * A stage that a killed or interrupted process had started continues its attempts on resume:
 * the numbers go on from those the ledger recorded (so the note's retryCount counts every attempt
 * made), and the stage's limit counts the attempts the gate rejected, not one cut short.
 */
import { describe, expect, it } from 'vitest';
import type { HandoffState } from '../../src/core/handoff.js';
import type { PriorAttempts } from '../../src/workflows/tdd/ports.js';
import { runTdd } from '../../src/workflows/tdd/workflow.js';
import {
  ADD,
  RUN_ID,
  addOnlyFiles,
  drive,
  eventsOf,
  greenTurn,
  planTurn,
  redTestFile,
  redTurn,
  stubImpl,
  trace,
  type Driven,
  type Harness,
} from '../support/fake-tdd-harness.js';
import { useHarness } from '../support/fake-tdd-suite.js';

const setUp = useHarness();

/** The note of the RED checkpoint of cycle 4 (GREEN next), as the run resumes from it. */
const RED_NOTE: HandoffState = {
  phase: 'RED',
  nextPhase: 'GREEN',
  cycleNumber: 4,
  currentTest: ADD,
  completedTests: [],
  pendingTests: [ADD.description],
  testResult: 'FAIL',
  error: null,
  errorDetails: null,
  retryCount: 0,
  runId: RUN_ID,
};

/** The note of the PLAN checkpoint of cycle 4 (RED next). */
const PLAN_NOTE: HandoffState = { ...RED_NOTE, phase: 'PLAN', nextPhase: 'RED', testResult: null };

function resume(h: Harness, start: HandoffState, priorAttempts: PriorAttempts[]): Promise<Driven> {
  return drive(runTdd(h.policy, h.deps, start, undefined, { priorAttempts }));
}

const stageLines = (run: Driven): string[] => trace(run.events).filter((line) => line.startsWith('stage-'));

describe('a resumed stage continues its attempts', () => {
  it('numbers on after the killed attempt, which does not use up one of the three', async () => {
    // Before the kill: GREEN #1 rejected (tests failing), GREEN #2 cut short.
    const files = addOnlyFiles({ [ADD.testFile]: redTestFile(ADD), [ADD.implFile]: stubImpl(ADD) });
    const h = await setUp({
      files,
      script: { GREEN: [{}, greenTurn(ADD)], REFACTOR: [{}], PLAN: [planTurn(null, null)] },
    });
    const run = await resume(h, RED_NOTE, [{ cycle: 4, stage: 'GREEN', last: 2, rejections: ['tests-failing'] }]);

    expect(run.error).toBeUndefined();
    // Two attempts are left (one of three was rejected): #3 is rejected, #4 passes.
    expect(stageLines(run).slice(0, 4)).toEqual([
      'stage-start GREEN#3',
      'stage-end GREEN#3 rejected (tests-failing)',
      'stage-start GREEN#4',
      'stage-end GREEN#4 accepted (All 1 tests pass)',
    ]);
    // The prompt names the same numbers, out of the last one the stage may reach.
    expect(h.agent.callsOf('GREEN').map((call) => [call.variables.attempt, call.variables.max_attempts])).toEqual([
      [3, 4],
      [4, 4],
    ]);
    // retryCount counts every attempt before the accepted one, the killed one too.
    const feat = h.workspace.commitWithSubject('feat: adds two numbers');
    expect(h.workspace.noteOn(feat.sha)).toMatchObject({ phase: 'GREEN', retryCount: 3 });
    // The stages after the next checkpoint start afresh.
    expect(stageLines(run)).toContain('stage-start REFACTOR#1');
    expect(stageLines(run)).toContain('stage-start PLAN#1');
  });

  it('fails at once when the attempts the gate rejected before the kill used up the limit', async () => {
    const files = addOnlyFiles({ [ADD.testFile]: redTestFile(ADD), [ADD.implFile]: stubImpl(ADD) });
    const h = await setUp({ files, script: { GREEN: [greenTurn(ADD)] } });
    // The RED checkpoint the run resumes from, where the failure is noted.
    const red = await h.workspace.checkpoint('test: adds two numbers', { allowEmpty: true, note: RED_NOTE });
    const rejections = ['tests-failing', 'tests-failing', 'tests-failing'];
    const run = await resume(h, RED_NOTE, [{ cycle: 4, stage: 'GREEN', last: 4, rejections }]);

    expect(run.error?.code).toBe('gate-failed');
    expect(run.error?.message).toBe('GREEN failed after 3 attempts: tests-failing');
    expect(h.agent.callsOf('GREEN')).toEqual([]);
    expect(eventsOf(run.events, 'stage-start')).toEqual([]);
    // Four attempts were made (one cut short): three retries.
    expect(h.workspace.noteOn(red)).toMatchObject({
      nextPhase: 'GREEN',
      error: 'GREEN failed after 3 attempts: tests-failing',
      retryCount: 3,
    });
  });

  it('starts RED afresh (not RED_FIX: what the killed attempt wrote is gone) with the next number', async () => {
    const h = await setUp({
      files: addOnlyFiles(),
      script: { RED: [redTurn(ADD)], GREEN: [greenTurn(ADD)], REFACTOR: [{}], PLAN: [planTurn(null, null)] },
    });
    const run = await resume(h, PLAN_NOTE, [{ cycle: 4, stage: 'RED', last: 2, rejections: ['passed-immediately'] }]);

    expect(run.error).toBeUndefined();
    expect(stageLines(run)[0]).toBe('stage-start RED#3');
    expect(h.agent.callsOf('RED').map((call) => [call.variables.attempt, call.variables.max_attempts])).toEqual([
      [3, 4],
    ]);
    expect(h.agent.callsOf('RED_FIX')).toEqual([]);
    const test = h.workspace.commitWithSubject('test: adds two numbers');
    expect(h.workspace.noteOn(test.sha)).toMatchObject({ phase: 'RED', retryCount: 2 });
  });

  it('ignores what was left of other cycles and stages, and of any stage once a checkpoint is made', async () => {
    const files = addOnlyFiles({ [ADD.testFile]: redTestFile(ADD), [ADD.implFile]: stubImpl(ADD) });
    const h = await setUp({ files, script: { GREEN: [greenTurn(ADD)], REFACTOR: [{}], PLAN: [planTurn(null, null)] } });
    const run = await resume(h, RED_NOTE, [
      { cycle: 3, stage: 'GREEN', last: 2, rejections: ['tests-failing'] },
      { cycle: 4, stage: 'REFACTOR', last: 5, rejections: [] },
    ]);

    expect(run.error).toBeUndefined();
    expect(stageLines(run)).toContain('stage-start GREEN#1');
    expect(stageLines(run)).toContain('stage-start REFACTOR#1');
  });
});
