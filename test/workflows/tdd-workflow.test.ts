import { describe, expect, it } from 'vitest';
import { RatchetError } from '../../src/core/errors.js';
import type { EventInput } from '../../src/core/events.js';
import type { HandoffState } from '../../src/core/handoff.js';
import {
  ADD,
  LIST,
  LIST_ADD_DONE,
  LIST_ALL_DONE,
  LIST_TEXT,
  RUN_ID,
  SUB,
  addOnlyFiles,
  cycleScript,
  eventsOf,
  greenTurn,
  happyScript,
  planTurn,
  redTestFile,
  solvedImpl,
  stubImpl,
  trace,
  type Harness,
} from '../support/fake-tdd-harness.js';
import { useHarness } from '../support/fake-tdd-suite.js';

const setUp = useHarness();

/** The expected note: every field, so a stray one fails the comparison. */
function note(
  fields: Pick<
    HandoffState,
    'phase' | 'nextPhase' | 'cycleNumber' | 'currentTest' | 'completedTests' | 'pendingTests' | 'testResult'
  > &
    Partial<HandoffState>,
): HandoffState {
  return { error: null, errorDetails: null, retryCount: 0, runId: RUN_ID, ...fields };
}

// The first cycle measures RED's baseline; later cycles reuse the run that verified the last
// checkpoint, since PLAN changed only the test list.
const CYCLE_TRACE = (test: string, passing: number): string[] => [
  // The first cycle's baseline runs before PLAN (a red suite stops the run before any model
  // call) and RED reuses it: PLAN changes only the test list. Later cycles reuse RE_VERIFY's run.
  ...(passing === 1 ? ['verify-end PLAN baseline'] : []),
  'stage-start PLAN#1',
  `plan-select ${test}`,
  `checkpoint-create plan: ${test}`,
  'note-write PLAN->RED',
  'stage-end PLAN#1 accepted',
  'stage-start RED#1',
  'verify-end RED test',
  `checkpoint-create test: ${test}`,
  'note-write RED->GREEN',
  'stage-end RED#1 accepted (1 new failing test(s) by assertion)',
  'stage-start GREEN#1',
  'verify-end GREEN test',
  `stage-end GREEN#1 accepted (All ${passing} tests pass)`,
  'stage-start VERIFY#1',
  'verify-end VERIFY lint',
  'verify-end VERIFY typecheck',
  `stage-end VERIFY#1 accepted (All ${passing} tests pass; lint ok, typecheck ok)`,
  `checkpoint-create feat: ${test}`,
  'note-write GREEN->REFACTOR',
  'stage-start REFACTOR#1',
  'stage-end REFACTOR#1 accepted (no changes)',
  'checkpoint-create refactor: no changes needed',
  'note-write REFACTOR->PLAN',
];

describe('runTdd: a happy two-cycle run', () => {
  it('commits every accepted stage and ends with `plan: all tests done`', async () => {
    const h = await setUp({ script: happyScript() });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(h.workspace.subjects()).toEqual([
      'initial',
      'plan: adds two numbers',
      'test: adds two numbers',
      'feat: adds two numbers',
      'refactor: no changes needed',
      'plan: subtracts two numbers',
      'test: subtracts two numbers',
      'feat: subtracts two numbers',
      'refactor: no changes needed',
      'plan: all tests done',
    ]);
    expect(run.result).toEqual({
      cycles: 2,
      state: note({
        phase: 'PLAN',
        nextPhase: 'COMPLETE',
        cycleNumber: 3,
        currentTest: null,
        completedTests: [ADD.description, SUB.description],
        pendingTests: [],
        testResult: null,
      }),
    });
    expect(h.agent.unusedTurns()).toEqual({});
    expect(h.workspace.file(LIST)).toBe(LIST_ALL_DONE);
    expect(await h.workspace.hasChanges()).toBe(false);
  });

  it('writes the handoff note on every checkpoint', async () => {
    const h = await setUp({ script: happyScript() });
    await h.run();

    const both = [ADD.description, SUB.description];
    const expected: HandoffState[] = [
      note({
        phase: 'PLAN',
        nextPhase: 'RED',
        cycleNumber: 1,
        currentTest: ADD,
        completedTests: [],
        pendingTests: both,
        testResult: null,
      }),
      note({
        phase: 'RED',
        nextPhase: 'GREEN',
        cycleNumber: 1,
        currentTest: ADD,
        completedTests: [],
        pendingTests: both,
        testResult: 'FAIL',
      }),
      note({
        phase: 'GREEN',
        nextPhase: 'REFACTOR',
        cycleNumber: 1,
        currentTest: ADD,
        completedTests: [ADD.description],
        pendingTests: [SUB.description],
        testResult: 'PASS',
      }),
      note({
        phase: 'REFACTOR',
        nextPhase: 'PLAN',
        cycleNumber: 1,
        currentTest: ADD,
        completedTests: [ADD.description],
        pendingTests: [SUB.description],
        testResult: 'PASS',
      }),
      note({
        phase: 'PLAN',
        nextPhase: 'RED',
        cycleNumber: 2,
        currentTest: SUB,
        completedTests: [ADD.description],
        pendingTests: [SUB.description],
        testResult: null,
      }),
      note({
        phase: 'RED',
        nextPhase: 'GREEN',
        cycleNumber: 2,
        currentTest: SUB,
        completedTests: [ADD.description],
        pendingTests: [SUB.description],
        testResult: 'FAIL',
      }),
      note({
        phase: 'GREEN',
        nextPhase: 'REFACTOR',
        cycleNumber: 2,
        currentTest: SUB,
        completedTests: both,
        pendingTests: [],
        testResult: 'PASS',
      }),
      note({
        phase: 'REFACTOR',
        nextPhase: 'PLAN',
        cycleNumber: 2,
        currentTest: SUB,
        completedTests: both,
        pendingTests: [],
        testResult: 'PASS',
      }),
      note({
        phase: 'PLAN',
        nextPhase: 'COMPLETE',
        cycleNumber: 3,
        currentTest: null,
        completedTests: both,
        pendingTests: [],
        testResult: null,
      }),
    ];
    const checkpoints = h.workspace.commits.slice(1);
    expect(checkpoints.map((commit) => h.workspace.noteOn(commit.sha))).toEqual(expected);
    // One note per checkpoint, written once, nothing else.
    expect(h.workspace.noteWrites.map((write) => write.commit)).toEqual(checkpoints.map((commit) => commit.sha));
    expect(h.workspace.notes.has(h.workspace.commits[0]?.sha ?? '')).toBe(false);
  });

  it('keeps the files of each checkpoint: test, stub, implementation, then the list marked done by the orchestrator', async () => {
    const h = await setUp({ script: happyScript() });
    await h.run();
    const at = (subject: string, path: string): string | undefined =>
      h.workspace.commitWithSubject(subject).files.get(path);

    expect(at('plan: adds two numbers', LIST)).toBe(LIST_TEXT);
    expect(at('plan: adds two numbers', ADD.testFile)).toBeUndefined();
    expect(at('test: adds two numbers', ADD.testFile)).toBe(redTestFile(ADD));
    expect(at('test: adds two numbers', ADD.implFile)).toBe(stubImpl(ADD));
    expect(at('test: adds two numbers', LIST)).toBe(LIST_TEXT);
    expect(at('feat: adds two numbers', ADD.implFile)).toBe(solvedImpl(ADD));
    expect(at('feat: adds two numbers', LIST)).toBe(LIST_ADD_DONE);
    expect(at('feat: subtracts two numbers', LIST)).toBe(LIST_ALL_DONE);
    // GREEN's agent never saw (nor could write) the checked item: the orchestrator checked it.
    const green = h.agent.callsOf('GREEN')[0];
    expect(green?.treeAtStart.get(LIST)).toBe(LIST_TEXT);
    expect(green?.paths.denyWrite).toContain(LIST);
    // An empty refactor commit: same tree as GREEN's.
    const feat = h.workspace.commitWithSubject('feat: adds two numbers');
    const refactor = h.workspace.commits[h.workspace.commits.indexOf(feat) + 1];
    expect(refactor?.subject).toBe('refactor: no changes needed');
    expect(refactor?.files).toEqual(feat.files);
  });

  it('yields events in order: cycles, paired stages, a note after each checkpoint', async () => {
    const h = await setUp({ script: happyScript() });
    const { events } = await h.run();

    expect(trace(events)).toEqual([
      'cycle-start 1',
      ...CYCLE_TRACE(ADD.description, 1),
      'cycle-start 2',
      ...CYCLE_TRACE(SUB.description, 2),
      'cycle-start 3',
      'stage-start PLAN#1',
      'plan-select null',
      'checkpoint-create plan: all tests done',
      'note-write PLAN->COMPLETE',
      'stage-end PLAN#1 accepted',
    ]);
    expectPairedStages(events);
    events.forEach((event, index) => {
      if (event.type !== 'checkpoint-create') return;
      expect(events[index + 1]).toMatchObject({ type: 'note-write', commit: event.commit });
    });
    expect(eventsOf(events, 'checkpoint-create').map((event) => [event.stage, event.phase])).toEqual([
      ['PLAN', 'PLAN'],
      ['RED', 'RED'],
      ['GREEN', 'GREEN'],
      ['REFACTOR', 'REFACTOR'],
      ['PLAN', 'PLAN'],
      ['RED', 'RED'],
      ['GREEN', 'GREEN'],
      ['REFACTOR', 'REFACTOR'],
      ['PLAN', 'PLAN'],
    ]);
    expect(eventsOf(events, 'plan-select')[0]).toEqual({
      type: 'plan-select',
      cycle: 1,
      test: ADD.description,
      testFile: ADD.testFile,
      implFile: ADD.implFile,
    });
    // The agent's tool calls are piped through inside their stage.
    const writes = eventsOf(events, 'tool-call').filter((event) => event.stage === 'GREEN');
    expect(writes.map((event) => (event.input as { file_path: string }).file_path)).toEqual([
      ADD.implFile,
      SUB.implFile,
    ]);
    const firstWrite = events.findIndex((event) => event.type === 'tool-call' && event.stage === 'GREEN');
    expect(trace(events.slice(0, firstWrite)).at(-1)).toBe('stage-start GREEN#1');
  });

  it('runs the suite for the baseline (before PLAN), RED`s gate and GREEN; RED and VERIFY reuse runs', async () => {
    const h = await setUp({ script: happyScript() });
    await h.run();
    expect(h.verifier.runsByStage()).toEqual({ PLAN: 1, RED: 2, GREEN: 2 });
    expect(h.verifier.checkRuns.map((run) => run.stage)).toEqual(['VERIFY', 'VERIFY']);
    const baseline = h.verifier.testRuns[0]?.result;
    expect(baseline?.counts).toEqual({ passed: 0, failed: 0, skipped: 0, total: 0 });
  });

  it('sends each stage its prompt, path policy and settings', async () => {
    const h = await setUp({ script: happyScript() });
    await h.run();
    const calls = h.agent.calls;
    expect(calls.map((call) => call.stage)).toEqual([
      'PLAN',
      'RED',
      'GREEN',
      'REFACTOR',
      'PLAN',
      'RED',
      'GREEN',
      'REFACTOR',
      'PLAN',
    ]);
    expect(h.agentRequests).toEqual(calls.map((call) => call.stage));
    for (const call of calls) {
      expect(call.systemPrompt.split('\n')[0]).toBe(`Stage: ${call.stage}`);
      expect(call).toMatchObject({
        worktree: h.workspace.root,
        maxTurns: 7,
        bashTimeoutMs: 5_000,
        hasOutputSchema: call.stage === 'PLAN',
      });
      expect(call.variables).toMatchObject({
        feature: 'a calculator',
        attempt: 1,
        max_attempts: 3,
        feedback: '(none)',
        test_command: 'fake-test --all',
      });
    }
    const [plan, red, green, refactor, plan2] = calls;
    expect(plan?.paths).toEqual({ read: ['**'], write: [LIST], denyWrite: [] });
    expect(plan?.variables).toMatchObject({ cycle: 1, completed_tests: '(none)', pending_tests: '(none)' });
    expect(String(plan?.variables.test_list)).toMatch(/does not exist/);
    expect(red?.paths).toEqual({ read: ['**'], write: ['**'], denyWrite: [LIST] });
    expect(red?.variables).toMatchObject({
      cycle: 1,
      current_test: `${ADD.description} (test: ${ADD.testFile}, implementation: ${ADD.implFile})`,
      test_file: ADD.testFile,
      impl_file: ADD.implFile,
      test_list: LIST_TEXT,
      pending_tests: `${ADD.description}\n${SUB.description}`,
    });
    expect(green?.paths).toEqual({ read: ['**'], write: ['**'], denyWrite: ['**/*.test.ts', ADD.testFile, LIST] });
    expect(green?.variables.changed_files).toBe(`${ADD.testFile}\n${ADD.implFile}`);
    expect(refactor?.paths).toEqual(green?.paths);
    expect(refactor?.variables.reasons).toMatch(/static checker found nothing/);
    expect(plan2?.variables).toMatchObject({
      cycle: 2,
      test_list: LIST_ADD_DONE,
      completed_tests: ADD.description,
      pending_tests: SUB.description,
    });
  });
});

/** Every stage-start is closed by one stage-end of the same stage, attempt and cycle. */
function expectPairedStages(events: readonly EventInput[]): void {
  const open: string[] = [];
  for (const event of events) {
    if (event.type === 'stage-start') open.push(`${event.cycle}/${event.stage}#${event.attempt}`);
    if (event.type === 'stage-end') {
      const key = `${event.cycle}/${event.stage}#${event.attempt}`;
      expect(open).toContain(key);
      open.splice(open.lastIndexOf(key), 1);
    }
  }
  expect(open).toEqual([]);
}

describe('runTdd: agents, interruption and provider errors', () => {
  it('undoes a commit the agent made by itself, keeps its changes and warns', async () => {
    const h = await setUp({
      files: addOnlyFiles(),
      script: cycleScript({ GREEN: [{ ...greenTurn(ADD), commit: 'wip: sneaky' }] }),
    });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(h.workspace.subjects()).toEqual([
      'initial',
      'plan: adds two numbers',
      'test: adds two numbers',
      'feat: adds two numbers',
      'refactor: no changes needed',
      'plan: all tests done',
    ]);
    expect(h.workspace.operations).toContain('uncommit test: adds two numbers');
    expect(h.workspace.commitWithSubject('feat: adds two numbers').files.get(ADD.implFile)).toBe(solvedImpl(ADD));
    const warnings = eventsOf(run.events, 'warning');
    expect(warnings).toEqual([
      { type: 'warning', stage: 'GREEN', message: expect.stringMatching(/committed by itself/) as unknown },
    ]);
  });

  it('stops with `interrupted` and writes no error note when the signal fires during a stage', async () => {
    const controller = new AbortController();
    // Abort in the middle of GREEN, after the agent has written part of its work.
    const aborting = await setUp({
      files: addOnlyFiles(),
      script: cycleScript({
        GREEN: [
          {
            act: async ({ workspace }) => {
              await workspace.writeFile(ADD.implFile, 'half done');
              controller.abort();
            },
          },
        ],
      }),
    });
    const run = await aborting.run(undefined, controller.signal);

    expect(run.error?.code).toBe('interrupted');
    expect(aborting.workspace.subjects().at(-1)).toBe('test: adds two numbers');
    expect(aborting.workspace.noteWrites.every((write) => write.state.error === null)).toBe(true);
    expect(aborting.workspace.headNote().nextPhase).toBe('GREEN');
    expect(eventsOf(run.events, 'note-write').at(-1)?.state.phase).toBe('RED');

    // The last checkpoint is the resume point (the engine drops the leftovers first).
    await aborting.workspace.discardChanges();
    aborting.agent.append({ GREEN: [greenTurn(ADD)] });
    const resumed = await aborting.run(aborting.workspace.headNote());
    expect(resumed.error).toBeUndefined();
    expect(aborting.workspace.subjects().slice(-3)).toEqual([
      'feat: adds two numbers',
      'refactor: no changes needed',
      'plan: all tests done',
    ]);
  });

  it('does nothing when the signal has fired before the run starts', async () => {
    const h = await setUp({ files: addOnlyFiles(), script: cycleScript() });
    const run = await h.run(undefined, AbortSignal.abort());
    expect(run.error?.code).toBe('interrupted');
    expect(run.events).toEqual([]);
    expect(h.agent.calls).toEqual([]);
    expect(h.workspace.noteWrites).toEqual([]);
  });

  it('records a provider error in the note on HEAD, drops the stage`s changes and rethrows it', async () => {
    const failure = new RatchetError('rate-limit', 'Too many requests', {
      retryable: true,
      hint: 'Wait a minute, then `ratchet resume`.',
    });
    const h = await setUp({
      files: addOnlyFiles(),
      script: cycleScript({
        GREEN: [{ act: ({ workspace }) => workspace.writeFile(ADD.implFile, solvedImpl(ADD)), throws: failure }],
      }),
    });
    const run = await h.run();

    expect(run.error).toBe(failure);
    const red = h.workspace.commitWithSubject('test: adds two numbers');
    expect(h.workspace.headCommit().sha).toBe(red.sha);
    expect(await h.workspace.hasChanges()).toBe(false);
    expect(h.workspace.file(ADD.implFile)).toBe(stubImpl(ADD));
    expect(h.workspace.noteOn(red.sha)).toEqual(
      note({
        phase: 'RED',
        nextPhase: 'GREEN',
        cycleNumber: 1,
        currentTest: ADD,
        completedTests: [],
        pendingTests: [ADD.description],
        testResult: 'FAIL',
        error: 'Too many requests',
        errorDetails: { type: 'rate-limit', message: 'Wait a minute, then `ratchet resume`.' },
      }),
    );
    expect(trace(run.events).slice(-2)).toEqual(['stage-start GREEN#1', 'note-write RED->GREEN error']);
  });

  it('writes the error note on the last checkpoint, not on a commit the agent made before failing', async () => {
    const failure = new RatchetError('network', 'socket hang up');
    const sneaky = async ({ workspace }: { workspace: Harness['workspace'] }): Promise<void> => {
      await workspace.writeFile(ADD.implFile, solvedImpl(ADD));
      await workspace.checkpoint('wip: half of GREEN');
    };
    const h = await setUp({
      files: addOnlyFiles(),
      script: cycleScript({ GREEN: [{ act: sneaky, throws: failure }] }),
    });
    const run = await h.run();

    expect(run.error).toBe(failure);
    const red = h.workspace.commitWithSubject('test: adds two numbers');
    expect(h.workspace.headCommit().sha).toBe(red.sha);
    expect(h.workspace.subjects()).not.toContain('wip: half of GREEN');
    expect(h.workspace.file(ADD.implFile)).toBe(stubImpl(ADD));
    expect(h.workspace.noteOn(red.sha)).toMatchObject({
      nextPhase: 'GREEN',
      error: 'socket hang up',
      errorDetails: { type: 'network' },
    });
  });

  it('records an unexpected exception as `internal`', async () => {
    const h = await setUp({ files: addOnlyFiles(), script: cycleScript({ RED: [{ throws: new TypeError('boom') }] }) });
    const run = await h.run();
    expect(run.error?.code).toBe('internal');
    expect(run.error?.message).toBe('boom');
    expect(h.workspace.headNote()).toMatchObject({
      phase: 'PLAN',
      nextPhase: 'RED',
      error: 'boom',
      errorDetails: { type: 'internal', message: 'boom' },
    });
  });
});

describe('runTdd: resuming', () => {
  it('continues from a mid-cycle note (RED accepted, GREEN next)', async () => {
    const files = addOnlyFiles({ [ADD.testFile]: redTestFile(ADD), [ADD.implFile]: stubImpl(ADD) });
    const h = await setUp({ files, script: { GREEN: [greenTurn(ADD)], REFACTOR: [{}], PLAN: [planTurn(null, null)] } });
    const start: HandoffState = {
      ...note({
        phase: 'RED',
        nextPhase: 'GREEN',
        cycleNumber: 4,
        currentTest: ADD,
        completedTests: [],
        pendingTests: [ADD.description],
        testResult: 'FAIL',
      }),
      retryCount: 2,
      runId: 'an-older-run-id',
    };
    const run = await h.run(start);

    expect(run.error).toBeUndefined();
    expect(h.workspace.subjects()).toEqual([
      'initial',
      'feat: adds two numbers',
      'refactor: no changes needed',
      'plan: all tests done',
    ]);
    expect(h.workspace.noteOn(h.workspace.commitWithSubject('feat: adds two numbers').sha)).toEqual(
      note({
        phase: 'GREEN',
        nextPhase: 'REFACTOR',
        cycleNumber: 4,
        currentTest: ADD,
        completedTests: [ADD.description],
        pendingTests: [],
        testResult: 'PASS',
      }),
    );
    expect(run.result?.state).toMatchObject({ phase: 'PLAN', nextPhase: 'COMPLETE', cycleNumber: 5, runId: RUN_ID });
    expect(trace(run.events)[0]).toBe('stage-start GREEN#1');
    expect(eventsOf(run.events, 'cycle-start').map((event) => event.cycle)).toEqual([5]);
    // Without the cycle's PLAN checkpoint, the prompt names the test's own files.
    expect(h.agent.callsOf('GREEN')[0]?.variables.changed_files).toBe(`${ADD.testFile}\n${ADD.implFile}`);
  });

  it('refuses a note that names a phase but no test', async () => {
    const h = await setUp({ files: addOnlyFiles(), script: {} });
    const run = await h.run(
      note({
        phase: 'PLAN',
        nextPhase: 'RED',
        cycleNumber: 1,
        currentTest: null,
        completedTests: [],
        pendingTests: [],
        testResult: null,
      }),
    );
    expect(run.error?.code).toBe('internal');
    expect(run.error?.hint).toMatch(/rollback/);
  });

  it('does nothing for a note whose next phase is COMPLETE', async () => {
    const h = await setUp({ files: addOnlyFiles(), script: {} });
    const done = note({
      phase: 'PLAN',
      nextPhase: 'COMPLETE',
      cycleNumber: 3,
      currentTest: null,
      completedTests: [ADD.description],
      pendingTests: [],
      testResult: null,
    });
    const run = await h.run(done);
    expect(run.result).toEqual({ cycles: 0, state: done });
    expect(run.events).toEqual([]);
  });
});
