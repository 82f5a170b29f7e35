import { describe, expect, it } from 'vitest';
import { RatchetError } from '../../src/core/errors.js';
import {
  ADD,
  addOnlyFiles,
  breakingRefactorTurn,
  cycleScript,
  eventsOf,
  goodRefactorTurn,
  greenTurn,
  happyScript,
  solvedImpl,
  trace,
} from '../support/fake-tdd-harness.js';
import { useHarness } from '../support/fake-tdd-suite.js';
import type { AgentTurn } from '../support/fake-tdd-ports.js';

const setUp = useHarness({ files: addOnlyFiles() });

function refactorLines(lines: string[]): string[] {
  const from = lines.indexOf('stage-start REFACTOR#1');
  const to = lines.findIndex((line) => line.startsWith('checkpoint-create refactor'));
  return lines.slice(from, to + 2);
}

describe('REFACTOR', () => {
  it('commits an empty `refactor: no changes needed` when the agent changes nothing', async () => {
    const h = await setUp({ script: cycleScript() });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    const refactor = h.workspace.commitWithSubject('refactor: no changes needed');
    expect(refactor.files).toEqual(h.workspace.commitWithSubject('feat: adds two numbers').files);
    expect(h.workspace.noteOn(refactor.sha)).toMatchObject({
      phase: 'REFACTOR',
      nextPhase: 'PLAN',
      testResult: 'PASS',
      retryCount: 0,
    });
    // No changes, so nothing to verify again.
    expect(h.verifier.runsByStage().RE_VERIFY).toBeUndefined();
  });

  it('commits a refactoring that RE_VERIFY accepts', async () => {
    const h = await setUp({ script: cycleScript({ REFACTOR: [goodRefactorTurn(ADD)] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(refactorLines(trace(run.events))).toEqual([
      'stage-start REFACTOR#1',
      'stage-start RE_VERIFY#1',
      'verify-end RE_VERIFY test',
      'verify-end RE_VERIFY lint',
      'verify-end RE_VERIFY typecheck',
      'stage-end RE_VERIFY#1 accepted (All 1 tests pass; lint ok, typecheck ok)',
      'stage-end REFACTOR#1 accepted (All 1 tests pass; lint ok, typecheck ok)',
      'checkpoint-create refactor: adds two numbers',
      'note-write REFACTOR->PLAN',
    ]);
    expect(h.workspace.commitWithSubject('refactor: adds two numbers').files.get(ADD.implFile)).toMatch(
      /^\/\/ refactored\n/,
    );
  });

  it('rolls a breaking refactoring back to the pre-refactor commit and tries again', async () => {
    const h = await setUp({ script: cycleScript({ REFACTOR: [breakingRefactorTurn(ADD), goodRefactorTurn(ADD)] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    const feat = h.workspace.commitWithSubject('feat: adds two numbers');
    expect(refactorLines(trace(run.events))).toEqual([
      'stage-start REFACTOR#1',
      'stage-start RE_VERIFY#1',
      'verify-end RE_VERIFY test',
      'stage-end RE_VERIFY#1 rejected (tests-failing)',
      'stage-end REFACTOR#1 rejected (tests-failing)',
      'checkpoint-rollback tests-failing',
      'stage-start REFACTOR#2',
      'stage-start RE_VERIFY#2',
      'verify-end RE_VERIFY test',
      'verify-end RE_VERIFY lint',
      'verify-end RE_VERIFY typecheck',
      'stage-end RE_VERIFY#2 accepted (All 1 tests pass; lint ok, typecheck ok)',
      'stage-end REFACTOR#2 accepted (All 1 tests pass; lint ok, typecheck ok)',
      'checkpoint-create refactor: adds two numbers',
      'note-write REFACTOR->PLAN',
    ]);
    expect(eventsOf(run.events, 'checkpoint-rollback')).toEqual([
      { type: 'checkpoint-rollback', stage: 'REFACTOR', to: feat.sha, reason: 'tests-failing' },
    ]);
    expect(h.workspace.operations).toContain('reset feat: adds two numbers');
    const [, second] = h.agent.callsOf('REFACTOR');
    expect(second?.headAtStart).toBe(feat.sha);
    expect(second?.treeAtStart).toEqual(feat.files);
    expect(String(second?.variables.feedback)).toMatch(
      /^Your previous refactoring was rolled back because it broke verification:\nFailing tests/,
    );
    expect(h.workspace.noteOn(h.workspace.commitWithSubject('refactor: adds two numbers').sha)).toMatchObject({
      phase: 'REFACTOR',
      nextPhase: 'PLAN',
      retryCount: 1,
    });
  });

  it('rolls back a refactoring that only breaks lint', async () => {
    const h = await setUp({ script: cycleScript({ REFACTOR: [greenTurn(ADD, '// LINT-ERROR\n'), {}] }) });
    const run = await h.run();
    expect(run.error).toBeUndefined();
    expect(eventsOf(run.events, 'checkpoint-rollback').map((event) => event.reason)).toEqual(['lint-failed']);
    expect(h.workspace.commitWithSubject('refactor: no changes needed').files.get(ADD.implFile)).toBe(solvedImpl(ADD));
  });

  it('rolls back a refactoring that edits a test file', async () => {
    const cheat: AgentTurn = { shell: { [ADD.testFile]: '{"name":"x","impl":"src/add.ts","contains":"add"}\n' } };
    const h = await setUp({ script: cycleScript({ REFACTOR: [cheat, {}] }) });
    const run = await h.run();
    expect(run.error).toBeUndefined();
    expect(eventsOf(run.events, 'checkpoint-rollback').map((event) => event.reason)).toEqual(['path-violation']);
    expect(String(h.agent.callsOf('REFACTOR')[1]?.variables.feedback)).toMatch(
      /rolled back: REFACTOR may not change src\/add\.test\.ts/,
    );
  });

  it('keeps the cycle when every attempt breaks verification: `refactor: no changes kept` and a warning', async () => {
    const breaking = breakingRefactorTurn(ADD);
    const h = await setUp({ script: cycleScript({ REFACTOR: [breaking, breaking, breaking] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(eventsOf(run.events, 'checkpoint-rollback')).toHaveLength(3);
    expect(eventsOf(run.events, 'warning')).toEqual([
      {
        type: 'warning',
        stage: 'REFACTOR',
        message: expect.stringMatching(/every attempt broke verification/) as unknown,
      },
    ]);
    const subject = 'refactor: no changes kept (3 attempts broke verification)';
    expect(h.workspace.subjects()).toEqual([
      'initial',
      'plan: adds two numbers',
      'test: adds two numbers',
      'feat: adds two numbers',
      subject,
      'plan: all tests done',
    ]);
    const kept = h.workspace.commitWithSubject(subject);
    expect(kept.files).toEqual(h.workspace.commitWithSubject('feat: adds two numbers').files);
    expect(h.workspace.noteOn(kept.sha)).toMatchObject({
      phase: 'REFACTOR',
      nextPhase: 'PLAN',
      testResult: 'PASS',
      error: null,
      retryCount: 2,
    });
    expect(run.result?.state.nextPhase).toBe('COMPLETE');
  });

  it('accepts a REFACTOR that hit its turn limit without changing anything', async () => {
    const h = await setUp({
      script: cycleScript({ REFACTOR: [{ status: 'turn-limit', message: 'Stopped after 7 model turns' }] }),
    });
    const run = await h.run();
    expect(run.error).toBeUndefined();
    expect(trace(run.events)).toContain('stage-end REFACTOR#1 accepted (Stopped after 7 model turns)');
    expect(h.workspace.subjects()).toContain('refactor: no changes needed');
  });
});

describe('REFACTOR: agent failures (best effort)', () => {
  it('keeps the cycle when the model fails after its retries, dropping the partial refactoring', async () => {
    const overloaded = new RatchetError('overloaded', 'Overloaded (529)', { retryable: true });
    const partial: AgentTurn = {
      act: ({ workspace }) => workspace.writeFile(ADD.implFile, 'half a refactoring'),
      throws: overloaded,
    };
    const h = await setUp({ script: cycleScript({ REFACTOR: [partial] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(refactorLines(trace(run.events))).toEqual([
      'stage-start REFACTOR#1',
      'stage-end REFACTOR#1 error (overloaded)',
      'warning REFACTOR',
      'checkpoint-create refactor: no changes kept (the agent failed: overloaded)',
      'note-write REFACTOR->PLAN',
    ]);
    expect(eventsOf(run.events, 'warning')[0]?.message).toMatch(/the agent failed \(Overloaded \(529\)\)/);
    const feat = h.workspace.commitWithSubject('feat: adds two numbers');
    const kept = h.workspace.commitWithSubject('refactor: no changes kept (the agent failed: overloaded)');
    expect(kept.files).toEqual(feat.files);
    expect(h.workspace.noteOn(kept.sha)).toMatchObject({
      phase: 'REFACTOR',
      nextPhase: 'PLAN',
      error: null,
      retryCount: 0,
    });
    expect(h.agent.callsOf('REFACTOR')).toHaveLength(1);
    expect(run.result?.state.nextPhase).toBe('COMPLETE');
  });

  it('still fails the run on an authentication error, resumable at REFACTOR', async () => {
    const auth = new RatchetError('auth', 'Invalid API key');
    const h = await setUp({ script: cycleScript({ REFACTOR: [{ throws: auth }] }) });
    const run = await h.run();

    expect(run.error).toBe(auth);
    const feat = h.workspace.commitWithSubject('feat: adds two numbers');
    expect(h.workspace.headCommit().sha).toBe(feat.sha);
    expect(h.workspace.noteOn(feat.sha)).toMatchObject({
      phase: 'GREEN',
      nextPhase: 'REFACTOR',
      error: 'Invalid API key',
      errorDetails: { type: 'auth' },
    });
  });

  it('stops on an interruption during REFACTOR without a refactor commit', async () => {
    const controller = new AbortController();
    const h = await setUp({ script: cycleScript({ REFACTOR: [{ act: () => controller.abort() }] }) });
    const run = await h.run(undefined, controller.signal);

    expect(run.error?.code).toBe('interrupted');
    expect(h.workspace.subjects().at(-1)).toBe('feat: adds two numbers');
    expect(h.workspace.noteWrites.every((write) => write.state.error === null)).toBe(true);
  });
});

describe('refactor modes', () => {
  it("'never' goes from GREEN straight to the next PLAN", async () => {
    const h = await setUp({ files: undefined, refactor: 'never', script: happyScript({ refactor: false }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(h.workspace.subjects().filter((subject) => subject.startsWith('refactor'))).toEqual([]);
    expect(trace(run.events).filter((line) => line.includes('REFACTOR'))).toEqual([]);
    const feat = h.workspace.commitWithSubject('feat: adds two numbers');
    expect(h.workspace.noteOn(feat.sha)).toMatchObject({ phase: 'GREEN', nextPhase: 'PLAN', cycleNumber: 1 });
    expect(h.workspace.noteOn(h.workspace.commitWithSubject('plan: subtracts two numbers').sha).cycleNumber).toBe(2);
    expect(h.refactorCheck.calls).toEqual([]);
    expect(run.result?.cycles).toBe(2);
  });

  it("'when-needed' skips REFACTOR when the size checker finds nothing", async () => {
    const h = await setUp({ refactor: 'when-needed', maxLines: 10, script: cycleScript({ REFACTOR: [] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(h.refactorCheck.calls).toEqual([[ADD.implFile]]);
    expect(h.workspace.noteOn(h.workspace.commitWithSubject('feat: adds two numbers').sha).nextPhase).toBe('PLAN');
    expect(h.agent.callsOf('REFACTOR')).toEqual([]);
  });

  it("'when-needed' runs REFACTOR with the checker's reasons when a file is too big", async () => {
    const h = await setUp({
      refactor: 'when-needed',
      maxLines: 2,
      script: cycleScript({ REFACTOR: [goodRefactorTurn(ADD)] }),
    });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(h.workspace.noteOn(h.workspace.commitWithSubject('feat: adds two numbers').sha).nextPhase).toBe('REFACTOR');
    expect(h.agent.callsOf('REFACTOR')[0]?.variables.reasons).toBe('- src/add.ts: 3 lines (limit 2)');
    expect(h.workspace.subjects()).toContain('refactor: adds two numbers');
  });
});
