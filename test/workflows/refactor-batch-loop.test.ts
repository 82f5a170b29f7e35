import { describe, expect, it } from 'vitest';
import { isRatchetError, RatchetError } from '../../src/core/errors.js';
import type { EventInput } from '../../src/core/events.js';
import { admitPatch } from '../../src/edit/admission.js';
import { runBatchLoop } from '../../src/workflows/refactor/batch-loop.js';
import type { RefactorPolicy } from '../../src/workflows/refactor/ports.js';
import { FORMAT_OPERATION } from '../../src/workflows/refactor/plan.js';
import type { PlannedBatch } from '../../src/workflows/refactor/schemas.js';
import {
  DEFAULT_POLICY,
  batch,
  createRefactorDeps,
  criticTurn,
  drive,
  patchTurn,
  rewriteTurn,
  statusTurn,
  wholeFileDiff,
  FakeClock,
  type FakeFormatter,
  type FakeRefactorDeps,
  type LoopRun,
  type RefactorScript,
  type RefactorTurn,
} from '../support/fake-refactor-ports.js';

const FILES: Record<string, string> = {
  'src/a.ts': 'export function a() {\n  return 1;\n}\n',
  'src/b.ts': 'export function b() {\n  return 2;\n}\n',
  'src/c.ts': 'export function c() {\n  return 3;\n}\n',
  'src/d.ts': 'export function d() {\n  return 4;\n}\n',
  'src/e.ts': 'export function e() {\n  return 5;\n}\n',
};

const source = (path: string): string => FILES[path] ?? '';

/** A patch turn rewriting one of FILES (as in the baseline) to `after`. */
function edit(path: string, after: string, rationale?: string): RefactorTurn {
  return rewriteTurn(path, source(path), after, rationale);
}

/** A behaviour-preserving edit of `path`: adds a comment line. */
function tidy(path: string): RefactorTurn {
  return edit(path, `// tidied\n${source(path)}`, `tidied ${path}`);
}

/** An edit of `path` that the fast verifier rejects. */
function broken(path: string): RefactorTurn {
  return edit(path, `${source(path)}// BROKEN\n`);
}

async function runLoop(
  batches: PlannedBatch[],
  script: RefactorScript,
  policy: Partial<RefactorPolicy> = {},
  signal?: AbortSignal,
  clock?: FakeClock,
  formatter?: FakeFormatter,
): Promise<{ deps: FakeRefactorDeps; run: LoopRun }> {
  const deps = createRefactorDeps(FILES, script, clock, formatter);
  const run = await drive(runBatchLoop(batches, deps, { ...DEFAULT_POLICY, ...policy }, signal));
  expectWellFormed(run.events, run.error === undefined);
  return { deps, run };
}

/**
 * The real admission (`admitPatch`) over the fake workspace, with the settings and the mapping of
 * the workflow's `admit` port (src/workflows/refactor/batch-ports.ts).
 */
function admitAsTheEngineDoes(deps: FakeRefactorDeps): FakeRefactorDeps['admit'] {
  return async (planned, patch, declared) => {
    const admission = await admitPatch({
      patchText: patch,
      declaredFiles: declared,
      scopeGlobs: planned.scope_globs,
      scopeExcludes: [],
      diffBudgetLoc: planned.diff_budget_loc,
      allowBinary: false,
      allowLockfiles: false,
      applyCheck: (text) => deps.workspace.applyCheck(text),
    });
    return admission.admitted
      ? { admitted: true, patchText: admission.patchText, files: admission.files, loc: admission.loc, violations: [] }
      : {
          admitted: false,
          patchText: patch,
          files: [],
          loc: 0,
          violations: admission.violations.map((v) => v.message),
        };
  };
}

function ofType<K extends EventInput['type']>(events: EventInput[], type: K): Array<Extract<EventInput, { type: K }>> {
  return events.filter((event): event is Extract<EventInput, { type: K }> => event.type === type);
}

/**
 * Stage events nest (every stage-start is closed by a stage-end of the same stage, cycle and
 * attempt, innermost first); a batch's batch-starts count its attempts 1, 2, ... and its single
 * batch-end reports that many attempts; a checkpoint-create belongs to the committed batch-end.
 */
function expectWellFormed(events: EventInput[], finished: boolean): void {
  const stages: string[] = [];
  const attempts = new Map<string, number>();
  let openBatch: string | null = null;
  let lastCheckpoint: string | null = null;
  for (const event of events) {
    if (event.type === 'stage-start') stages.push(`${event.stage}/${event.cycle}/${event.attempt}`);
    if (event.type === 'stage-end')
      expect(stages.pop(), `stage-end ${event.stage}`).toBe(`${event.stage}/${event.cycle}/${event.attempt}`);
    if (event.type === 'batch-start') {
      if (openBatch !== null) expect(event.batch, 'a batch starts before the previous one ended').toBe(openBatch);
      openBatch = event.batch;
      const count = (attempts.get(event.batch) ?? 0) + 1;
      attempts.set(event.batch, count);
      expect(event.attempt).toBe(count);
      expect(stages, 'a batch attempt starts inside a stage').toEqual([]);
    }
    if (event.type === 'checkpoint-create') lastCheckpoint = event.commit;
    if (event.type === 'batch-end') {
      expect(openBatch).toBe(event.batch);
      expect(event.attempts).toBe(attempts.get(event.batch));
      // A rolled-back batch names the commit it had made, which the full verifier then dropped.
      if (event.outcome === 'committed' || event.outcome === 'rolled-back') expect(event.commit).toBe(lastCheckpoint);
      else expect(event.commit).toBeNull();
      expect(stages, 'a batch ends inside a stage').toEqual([]);
      openBatch = null;
    }
  }
  if (finished) {
    expect(stages).toEqual([]);
    expect(openBatch).toBeNull();
  }
}

/** Compact trace of the loop's own events (tool calls left out). */
function trace(events: EventInput[]): string[] {
  return events.flatMap((event) => {
    switch (event.type) {
      case 'batch-start':
        return [`batch-start ${event.batch} #${event.attempt}`];
      case 'batch-end':
        return [`batch-end ${event.batch} ${event.outcome}`];
      case 'stage-start':
        return [`stage-start ${event.stage}`];
      case 'stage-end':
        return [`stage-end ${event.stage} ${event.outcome}`];
      case 'patch-check':
        return [`patch-check ${event.admitted ? 'admitted' : 'rejected'}`];
      case 'checkpoint-create':
        return [`checkpoint-create ${event.commit}`];
      case 'checkpoint-rollback':
        return [`checkpoint-rollback ${event.to}`];
      case 'contract-check':
        return [`contract-check ${event.allowed ? 'allowed' : 'refused'}`];
      case 'verify-end':
        return [`verify-end ${event.stage} ${event.result.exitCode === 0 ? 'ok' : 'failed'}`];
      default:
        return [];
    }
  });
}

describe('runBatchLoop: committed batches', () => {
  it('commits each batch as "checkpoint: batch-NNN <goal>" and records it in TASK_LEDGER', async () => {
    const { deps, run } = await runLoop([batch('batch-001', 'src/a.ts'), batch('batch-002', 'src/b.ts')], {
      PATCHER: { 'batch-001': [tidy('src/a.ts')], 'batch-002': [tidy('src/b.ts')] },
    });

    expect(run.error).toBeUndefined();
    expect(run.result).toEqual({
      batches: [
        { batch: 'batch-001', outcome: 'committed', attempts: 1, commit: 'c002', reason: null },
        { batch: 'batch-002', outcome: 'committed', attempts: 1, commit: 'c003', reason: null },
      ],
      stopped: null,
      lastCheckpoint: 'c003',
      lastFullVerified: 'c001',
      fullVerifierFailed: false,
    });
    expect(deps.workspace.log().map((commit) => commit.subject)).toEqual([
      'checkpoint: batch-002 Tidy src/b.ts',
      'checkpoint: batch-001 Tidy src/a.ts',
      'baseline',
    ]);
    expect(deps.workspace.log()[1]?.body).toBe('tidied src/a.ts\n\nRatchet-Batch: batch-001');
    expect(deps.workspace.file('src/a.ts')).toBe(`// tidied\n${source('src/a.ts')}`);
    expect(deps.workspace.file('src/b.ts')).toBe(`// tidied\n${source('src/b.ts')}`);
    expect(deps.taskLedger).toEqual([
      { batch: 'batch-001', goal: 'Tidy src/a.ts', outcome: 'committed', attempts: 1, commit: 'c002', reason: null },
      { batch: 'batch-002', goal: 'Tidy src/b.ts', outcome: 'committed', attempts: 1, commit: 'c003', reason: null },
    ]);
    expect(deps.apiAccepted).toEqual(['c002', 'c003']);
    expect(trace(run.events)).toEqual([
      'batch-start batch-001 #1',
      'stage-start PATCHER',
      'patch-check admitted',
      'stage-start FAST_VERIFY',
      'verify-end FAST_VERIFY ok',
      'stage-end FAST_VERIFY accepted',
      'checkpoint-create c002',
      'stage-end PATCHER accepted',
      'batch-end batch-001 committed',
      'batch-start batch-002 #1',
      'stage-start PATCHER',
      'patch-check admitted',
      'stage-start FAST_VERIFY',
      'verify-end FAST_VERIFY ok',
      'stage-end FAST_VERIFY accepted',
      'checkpoint-create c003',
      'stage-end PATCHER accepted',
      'batch-end batch-002 committed',
    ]);
    expect(ofType(run.events, 'checkpoint-create')[0]).toMatchObject({
      stage: 'PATCHER',
      phase: 'BATCH',
      subject: 'checkpoint: batch-001 Tidy src/a.ts',
    });
    expect(ofType(run.events, 'batch-start').map((event) => [event.index, event.total, event.goal])).toEqual([
      [1, 2, 'Tidy src/a.ts'],
      [2, 2, 'Tidy src/b.ts'],
    ]);
    expect(deps.agent.unusedTurns()).toEqual({});
  });

  it('asks the patcher read-only, with the role prompt, the turn limit and the PatchResponse schema', async () => {
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts')],
      { PATCHER: { 'batch-001': [tidy('src/a.ts')] } },
      { maxTurnsPatcher: 7 },
    );

    expect(run.error).toBeUndefined();
    const [call] = deps.agent.calls;
    expect(call).toMatchObject({
      stage: 'PATCHER',
      batch: 'batch-001',
      maxTurns: 7,
      hasOutputSchema: true,
      headAtStart: 'c001',
    });
    expect(call?.systemPrompt).toMatch(/^Role: PATCHER/);
    expect(call?.paths.write).toEqual([]);
    expect(call?.paths.denyWrite).toEqual(['**']);
    expect(deps.contextCalls).toEqual([{ batch: 'batch-001', feedback: null }]);
    // Events the runtime emits reach the loop's stream.
    expect(ofType(run.events, 'tool-call')).toHaveLength(1);
  });

  it('drops what the patcher changed in place: only the returned patch is applied', async () => {
    const sneaky: RefactorTurn = {
      ...tidy('src/a.ts'),
      act: (workspace) => workspace.write('src/b.ts', 'export const hacked = true;\n'),
    };
    const { deps, run } = await runLoop([batch('batch-001', 'src/a.ts')], { PATCHER: { 'batch-001': [sneaky] } });

    expect(run.result?.batches[0]?.outcome).toBe('committed');
    expect(deps.workspace.file('src/b.ts')).toBe(source('src/b.ts'));
    expect(deps.workspace.treeAt('c002')['src/b.ts']).toBe(source('src/b.ts'));
  });

  it('rolls back an attempt whose verified tree holds a nested repository (made by the tests it ran), with the reason', async () => {
    const { deps, run } = await runLoop([batch('batch-001', 'src/a.ts')], {
      PATCHER: {
        'batch-001': [edit('src/a.ts', `// GIT_INIT_IN_TESTS\n${source('src/a.ts')}`), tidy('src/a.ts')],
      },
    });

    expect(run.result?.batches[0]).toMatchObject({ outcome: 'committed', attempts: 2 });
    expect(ofType(run.events, 'checkpoint-rollback')).toMatchObject([
      { to: 'c001', reason: 'batch-001 left fixture (a nested git repository: fixture/.git exists)' },
    ]);
    expect(ofType(run.events, 'stage-end').find((event) => event.outcome === 'rejected')?.reason).toBe(
      'unsafe entries',
    );
    expect(deps.contextCalls[1]?.feedback).toMatch(/^After your patch was applied and verified, the work tree held/);
    expect(deps.workspace.file('src/a.ts')).toBe(`// tidied\n${source('src/a.ts')}`);
  });

  it('runs the full verifier for a batch whose verifier_level is full', async () => {
    const { deps, run } = await runLoop([batch('batch-001', 'src/a.ts', { verifier_level: 'full', risk_score: 70 })], {
      PATCHER: { 'batch-001': [tidy('src/a.ts')] },
    });

    expect(run.result?.batches[0]?.outcome).toBe('committed');
    expect(deps.verifier.calls.map((call) => [call.level, call.stage])).toEqual([['full', 'FULL_VERIFY']]);
  });
});

describe('runBatchLoop: noop and blocked', () => {
  it('records noop and blocked batches without a commit and carries on', async () => {
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts'), batch('batch-002', 'src/b.ts'), batch('batch-003', 'src/c.ts')],
      {
        PATCHER: {
          'batch-001': [statusTurn('noop', 'nothing worth changing')],
          'batch-002': [statusTurn('blocked', 'needs a design decision')],
          'batch-003': [tidy('src/c.ts')],
        },
      },
    );

    expect(run.result?.stopped).toBeNull();
    expect(run.result?.batches).toEqual([
      { batch: 'batch-001', outcome: 'noop', attempts: 1, commit: null, reason: 'nothing worth changing' },
      { batch: 'batch-002', outcome: 'blocked', attempts: 1, commit: null, reason: 'needs a design decision' },
      { batch: 'batch-003', outcome: 'committed', attempts: 1, commit: 'c002', reason: null },
    ]);
    expect(deps.taskLedger.map((entry) => [entry.batch, entry.outcome, entry.reason])).toEqual([
      ['batch-001', 'noop', 'nothing worth changing'],
      ['batch-002', 'blocked', 'needs a design decision'],
      ['batch-003', 'committed', null],
    ]);
    expect(deps.workspace.log()).toHaveLength(2);
    expect(
      ofType(run.events, 'stage-end')
        .slice(0, 2)
        .map((event) => [event.outcome, event.reason]),
    ).toEqual([
      ['skipped', 'noop: nothing worth changing'],
      ['skipped', 'blocked: needs a design decision'],
    ]);
    expect(ofType(run.events, 'batch-end')[1]).toMatchObject({ outcome: 'blocked', reason: 'needs a design decision' });
    expect(deps.verifier.calls).toHaveLength(1);
  });
});

describe('runBatchLoop: retries', () => {
  it('retries a patch the admission checks reject, with the violations as feedback', async () => {
    const outOfScope = patchTurn(wholeFileDiff('src/b.ts', source('src/b.ts'), '// moved\n'), ['src/b.ts']);
    const { deps, run } = await runLoop([batch('batch-001', 'src/a.ts')], {
      PATCHER: { 'batch-001': [outOfScope, tidy('src/a.ts')] },
    });

    expect(run.result?.batches).toEqual([
      { batch: 'batch-001', outcome: 'committed', attempts: 2, commit: 'c002', reason: null },
    ]);
    const [rejected] = ofType(run.events, 'patch-check');
    expect(rejected).toMatchObject({
      batch: 'batch-001',
      attempt: 1,
      admitted: false,
      violations: ['src/b.ts is outside the batch scope (src/a.ts)'],
    });
    expect(deps.contextCalls[1]?.feedback).toBe(
      'Your patch was rejected by the admission checks:\n- src/b.ts is outside the batch scope (src/a.ts)',
    );
    expect(deps.agent.callsOf('PATCHER')[1]?.prompt).toContain('src/b.ts is outside the batch scope');
    expect(deps.workspace.file('src/b.ts')).toBe(source('src/b.ts'));
    expect(trace(run.events).slice(0, 4)).toEqual([
      'batch-start batch-001 #1',
      'stage-start PATCHER',
      'patch-check rejected',
      'stage-end PATCHER rejected',
    ]);
    // Nothing was applied, so nothing was verified.
    expect(deps.verifier.calls).toHaveLength(1);
  });

  it('rejects a patch over the diff budget', async () => {
    const big = edit('src/a.ts', `${'// line\n'.repeat(10)}${source('src/a.ts')}`);
    const deps = createRefactorDeps(FILES, { PATCHER: { 'batch-001': [big, tidy('src/a.ts')] } });
    // The budget is the admission's (src/edit/admission.ts), wired as the engine wires it.
    deps.admit = admitAsTheEngineDoes(deps);
    const run = await drive(
      runBatchLoop([batch('batch-001', 'src/a.ts', { diff_budget_loc: 8 })], deps, DEFAULT_POLICY),
    );
    expectWellFormed(run.events, run.error === undefined);

    const overBudget =
      "The diff touches 16 lines (added + deleted), over this batch's budget of 8. Make a smaller change that still reaches the goal, or do part of it and leave the rest for a later batch. Largest files: src/a.ts (16).";
    expect(ofType(run.events, 'patch-check').map((check) => [check.admitted, check.violations])).toEqual([
      [false, [overBudget]],
      [true, []],
    ]);
    expect(deps.contextCalls[1]?.feedback).toContain(overBudget);
    expect(run.result?.batches[0]).toMatchObject({ outcome: 'committed', attempts: 2 });
    expect(deps.workspace.file('src/a.ts')).toBe(`// tidied\n${source('src/a.ts')}`);
  });

  it('rolls a patch that fails the fast verifier back to the last checkpoint and retries with the output', async () => {
    const { deps, run } = await runLoop([batch('batch-001', 'src/a.ts'), batch('batch-002', 'src/b.ts')], {
      PATCHER: { 'batch-001': [tidy('src/a.ts')], 'batch-002': [broken('src/b.ts'), tidy('src/b.ts')] },
    });

    expect(run.result?.batches.map((entry) => [entry.batch, entry.outcome, entry.attempts])).toEqual([
      ['batch-001', 'committed', 1],
      ['batch-002', 'committed', 2],
    ]);
    const rollback = ofType(run.events, 'checkpoint-rollback');
    expect(rollback).toEqual([
      { type: 'checkpoint-rollback', stage: 'FAST_VERIFY', to: 'c002', reason: 'batch-002 failed the fast verifier' },
    ]);
    const feedback = deps.contextCalls[2]?.feedback ?? '';
    expect(feedback).toMatch(
      /^Your patch applied, but the fast verifier failed, so it was rolled back:\n\$ npm test -- --fast \(exit 1\)\n/,
    );
    expect(feedback).toContain('FAIL src/b.ts: marker found');
    // The retry starts from the checkpoint, not from the broken tree.
    expect(deps.agent.callsOf('PATCHER', 'batch-002')[1]?.headAtStart).toBe('c002');
    expect(deps.verifier.calls[2]?.tree['src/b.ts']).toBe(`// tidied\n${source('src/b.ts')}`);
    expect(deps.workspace.file('src/b.ts')).not.toContain('BROKEN');
    expect(trace(run.events).slice(9, 17)).toEqual([
      'batch-start batch-002 #1',
      'stage-start PATCHER',
      'patch-check admitted',
      'stage-start FAST_VERIFY',
      'verify-end FAST_VERIFY failed',
      'stage-end FAST_VERIFY rejected',
      'checkpoint-rollback c002',
      'stage-end PATCHER rejected',
    ]);
  });

  it('fails the batch after retry_per_batch retries and stops the run at the last checkpoint', async () => {
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts'), batch('batch-002', 'src/b.ts'), batch('batch-003', 'src/c.ts')],
      {
        PATCHER: {
          'batch-001': [tidy('src/a.ts')],
          'batch-002': [broken('src/b.ts'), broken('src/b.ts'), broken('src/b.ts')],
          'batch-003': [tidy('src/c.ts')],
        },
      },
      { retryPerBatch: 2 },
    );

    expect(run.error).toBeUndefined();
    expect(run.result?.stopped).toBe('batch-002 failed after 3 attempts');
    expect(run.result?.lastCheckpoint).toBe('c002');
    expect(run.result?.batches.map((entry) => [entry.batch, entry.outcome, entry.attempts])).toEqual([
      ['batch-001', 'committed', 1],
      ['batch-002', 'failed', 3],
    ]);
    expect(run.result?.batches[1]?.reason).toContain('the fast verifier failed');
    expect(await deps.workspace.head()).toBe('c002');
    expect(deps.workspace.tree()).toEqual(deps.workspace.treeAt('c002'));
    expect(deps.taskLedger.map((entry) => [entry.batch, entry.outcome, entry.reason])).toEqual([
      ['batch-001', 'committed', null],
      ['batch-002', 'failed', expect.stringContaining('verifier failed') as unknown],
      ['batch-003', 'not-started', 'batch-002 failed after 3 attempts'],
    ]);
    expect(ofType(run.events, 'batch-end').at(-1)).toMatchObject({
      batch: 'batch-002',
      outcome: 'failed',
      attempts: 3,
      commit: null,
    });
    // batch-003 is never attempted.
    expect(deps.agent.callsOf('PATCHER', 'batch-003')).toEqual([]);
    expect(deps.agent.unusedTurns()).toEqual({ 'PATCHER batch-003': 1 });
  });

  it('stops when a patch keeps violating its scope (seed 002, section 19)', async () => {
    const outOfScope = patchTurn(wholeFileDiff('src/b.ts', source('src/b.ts'), '// moved\n'), ['src/b.ts']);
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts'), batch('batch-002', 'src/c.ts')],
      { PATCHER: { 'batch-001': [outOfScope, outOfScope] } },
      { retryPerBatch: 1 },
    );

    expect(run.result?.stopped).toBe('batch-001 failed after 2 attempts');
    expect(run.result?.lastCheckpoint).toBe('c001');
    expect(run.result?.batches[0]?.reason).toContain('rejected by the admission checks');
    expect(deps.workspace.log()).toHaveLength(1);
  });

  it('retries when the patcher hits its turn limit or returns an invalid PatchResponse', async () => {
    const { deps, run } = await runLoop([batch('batch-001', 'src/a.ts')], {
      PATCHER: {
        'batch-001': [
          { status: 'turn-limit', message: 'stopped after 8 turns' },
          { output: { status: 'ok', rationale: 'no patch field' } },
          tidy('src/a.ts'),
        ],
      },
    });

    expect(run.result?.batches).toEqual([
      { batch: 'batch-001', outcome: 'committed', attempts: 3, commit: 'c002', reason: null },
    ]);
    expect(deps.contextCalls.map((call) => call.feedback)).toEqual([
      null,
      'Your previous answer could not be used: stopped after 8 turns',
      expect.stringMatching(/^Your previous answer could not be used: Invalid structured output/),
    ]);
    expect(
      ofType(run.events, 'stage-end')
        .slice(0, 2)
        .map((event) => [event.stage, event.outcome]),
    ).toEqual([
      ['PATCHER', 'rejected'],
      ['PATCHER', 'rejected'],
    ]);
    expect(ofType(run.events, 'patch-check')).toHaveLength(1);
  });

  it('treats a completed run without a PatchResponse as unusable', async () => {
    const { deps, run } = await runLoop([batch('batch-001', 'src/a.ts')], {
      PATCHER: { 'batch-001': [{}, tidy('src/a.ts')] },
    });

    expect(run.result?.batches[0]?.attempts).toBe(2);
    expect(deps.contextCalls[1]?.feedback).toBe(
      'Your previous answer could not be used: the patcher returned no PatchResponse',
    );
  });
});

describe('runBatchLoop: the full verifier', () => {
  it('runs every N committed batches (noops do not count)', async () => {
    const { deps, run } = await runLoop(
      [
        batch('batch-001', 'src/a.ts'),
        batch('batch-002', 'src/b.ts'),
        batch('batch-003', 'src/c.ts'),
        batch('batch-004', 'src/d.ts'),
        batch('batch-005', 'src/e.ts'),
      ],
      {
        PATCHER: {
          'batch-001': [tidy('src/a.ts')],
          'batch-002': [statusTurn('noop', 'fine as it is')],
          'batch-003': [tidy('src/c.ts')],
          'batch-004': [tidy('src/d.ts')],
          'batch-005': [tidy('src/e.ts')],
        },
      },
      { runFullVerifierEvery: 2 },
    );

    expect(run.result?.stopped).toBeNull();
    expect(deps.verifier.calls.map((call) => call.level)).toEqual(['fast', 'fast', 'full', 'fast', 'fast', 'full']);
    const fullStarts = ofType(run.events, 'stage-start').filter((event) => event.stage === 'FULL_VERIFY');
    expect(fullStarts.map((event) => event.cycle)).toEqual([3, 5]);
    expect(deps.verifier.calls[2]?.tree).toEqual(deps.workspace.treeAt('c003'));
  });

  it('resets to the last fully verified checkpoint and stops when the full verifier fails', async () => {
    const { deps, run } = await runLoop(
      [
        batch('batch-001', 'src/a.ts'),
        batch('batch-002', 'src/b.ts'),
        batch('batch-003', 'src/c.ts'),
        batch('batch-004', 'src/d.ts'),
        batch('batch-005', 'src/e.ts'),
      ],
      {
        PATCHER: {
          'batch-001': [tidy('src/a.ts')],
          'batch-002': [tidy('src/b.ts')],
          // The fast verifier does not see this bug; the full one does.
          'batch-003': [edit('src/c.ts', `${source('src/c.ts')}// FULL_BUG\n`)],
          'batch-004': [tidy('src/d.ts')],
          'batch-005': [tidy('src/e.ts')],
        },
      },
      { runFullVerifierEvery: 2 },
    );

    expect(run.error).toBeUndefined();
    expect(run.result?.lastCheckpoint).toBe('c003');
    expect(run.result?.stopped).toBe('the full verifier failed after batch-004; reset to c003');
    expect(await deps.workspace.head()).toBe('c003');
    expect(deps.workspace.tree()).toEqual(deps.workspace.treeAt('c003'));
    expect(deps.workspace.file('src/c.ts')).not.toContain('FULL_BUG');
    expect(ofType(run.events, 'checkpoint-rollback')).toEqual([
      { type: 'checkpoint-rollback', stage: 'FULL_VERIFY', to: 'c003', reason: 'the full verifier failed' },
    ]);
    expect(run.result?.batches.map((entry) => [entry.batch, entry.outcome])).toEqual([
      ['batch-001', 'committed'],
      ['batch-002', 'committed'],
      ['batch-003', 'rolled-back'],
      ['batch-004', 'rolled-back'],
    ]);
    expect(deps.agent.callsOf('PATCHER', 'batch-005')).toEqual([]);
    expect(trace(run.events).slice(-6)).toEqual([
      'stage-end PATCHER accepted',
      'stage-start FULL_VERIFY',
      'verify-end FULL_VERIFY failed',
      'stage-end FULL_VERIFY rejected',
      'checkpoint-rollback c003',
      'batch-end batch-004 rolled-back',
    ]);
    expect(run.result).toMatchObject({ lastFullVerified: 'c003', fullVerifierFailed: true });
    // Every batch is in the task ledger: those that reached a verdict, then those never started;
    // batch-003, committed before the failing full verifier, gets a later line that drops it.
    expect(deps.taskLedger.map((entry) => [entry.batch, entry.outcome])).toEqual([
      ['batch-001', 'committed'],
      ['batch-002', 'committed'],
      ['batch-003', 'committed'],
      ['batch-003', 'rolled-back'],
      ['batch-004', 'rolled-back'],
      ['batch-005', 'not-started'],
    ]);
    expect(deps.taskLedger[3]).toMatchObject({
      commit: 'c004',
      reason: 'the full verifier failed after batch-004; reset to c003',
    });
    expect(deps.taskLedger.at(-2)).toMatchObject({
      outcome: 'rolled-back',
      commit: 'c005',
      reason: 'the full verifier failed after this batch; reset to c003',
    });
    expect(deps.taskLedger.at(-1)).toEqual({
      batch: 'batch-005',
      goal: 'Tidy src/e.ts',
      outcome: 'not-started',
      attempts: 0,
      commit: null,
      reason: 'the full verifier failed after batch-004; reset to c003',
    });
    expect(ofType(run.events, 'batch-end').at(-1)?.reason).toBe(
      'the full verifier failed after this batch; reset to c003',
    );
  });

  it('counts a batch verified at the full level as fully verified', async () => {
    const { deps, run } = await runLoop(
      [
        batch('batch-001', 'src/a.ts', { verifier_level: 'full', risk_score: 80 }),
        batch('batch-002', 'src/b.ts'),
        batch('batch-003', 'src/c.ts'),
      ],
      {
        PATCHER: {
          'batch-001': [tidy('src/a.ts')],
          'batch-002': [edit('src/b.ts', `${source('src/b.ts')}// FULL_BUG\n`)],
          'batch-003': [tidy('src/c.ts')],
        },
      },
      { runFullVerifierEvery: 3 },
    );

    expect(run.result?.lastCheckpoint).toBe('c002');
    expect(deps.workspace.file('src/a.ts')).toBe(`// tidied\n${source('src/a.ts')}`);
    expect(deps.workspace.file('src/b.ts')).toBe(source('src/b.ts'));
  });
});

describe('runBatchLoop: public API', () => {
  const removesExport = (): RefactorTurn => edit('src/a.ts', 'function a() {\n  return 1;\n}\n');

  it('rejects a patch that removes an export, rolls back and retries with the removed names', async () => {
    const { deps, run } = await runLoop([batch('batch-001', 'src/a.ts')], {
      PATCHER: { 'batch-001': [removesExport(), tidy('src/a.ts')] },
    });

    expect(run.result?.batches).toEqual([
      { batch: 'batch-001', outcome: 'committed', attempts: 2, commit: 'c002', reason: null },
    ]);
    expect(ofType(run.events, 'contract-check')).toEqual([
      { type: 'contract-check', batch: 'batch-001', removed: ['src/a.ts#a'], changed: [], added: [], allowed: false },
    ]);
    expect(ofType(run.events, 'checkpoint-rollback')).toEqual([
      { type: 'checkpoint-rollback', stage: 'PATCHER', to: 'c001', reason: 'batch-001 changed the public API' },
    ]);
    expect(deps.contextCalls[1]?.feedback).toBe(
      'Your patch changed the public API, which this run does not allow. Removed: src/a.ts#a. Changed: none. Keep every export and signature.',
    );
    expect(deps.workspace.file('src/a.ts')).toMatch(/^\/\/ tidied\nexport function a/);
    expect(deps.apiAccepted).toEqual(['c002']);
  });

  it('accepts the removal when public API changes are allowed', async () => {
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts')],
      { PATCHER: { 'batch-001': [removesExport()] } },
      { allowPublicApiChanges: true },
    );

    expect(run.result?.batches[0]).toMatchObject({ outcome: 'committed', attempts: 1 });
    expect(ofType(run.events, 'contract-check')[0]).toMatchObject({ removed: ['src/a.ts#a'], allowed: true });
    expect(deps.workspace.file('src/a.ts')).toBe('function a() {\n  return 1;\n}\n');
  });

  it('allows a patch that only adds exports', async () => {
    const { run } = await runLoop([batch('batch-001', 'src/a.ts')], {
      PATCHER: { 'batch-001': [edit('src/a.ts', `${source('src/a.ts')}export const extra = 1;\n`)] },
    });

    expect(run.result?.batches[0]?.outcome).toBe('committed');
    expect(ofType(run.events, 'contract-check')).toEqual([
      {
        type: 'contract-check',
        batch: 'batch-001',
        removed: [],
        changed: [],
        added: ['src/a.ts#extra'],
        allowed: true,
      },
    ]);
  });

  it('fails the batch when every attempt breaks the public API', async () => {
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts')],
      { PATCHER: { 'batch-001': [removesExport(), removesExport()] } },
      { retryPerBatch: 1 },
    );

    expect(run.result?.stopped).toBe('batch-001 failed after 2 attempts');
    expect(deps.workspace.file('src/a.ts')).toBe(source('src/a.ts'));
  });
});

describe('runBatchLoop: the critic', () => {
  it('retries with the objection when the critic does not accept, and commits once it does', async () => {
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts')],
      {
        PATCHER: { 'batch-001': [tidy('src/a.ts'), tidy('src/a.ts')] },
        CRITIC: { 'batch-001': [criticTurn('shrink_diff', ['too many lines', 'split it']), criticTurn('accept')] },
      },
      { useCritic: true, maxTurnsPatcher: 8 },
    );

    expect(run.result?.batches).toEqual([
      { batch: 'batch-001', outcome: 'committed', attempts: 2, commit: 'c002', reason: null },
    ]);
    expect(deps.contextCalls[1]?.feedback).toBe('The critic answered "shrink_diff": too many lines; split it');
    const [critic] = deps.agent.callsOf('CRITIC');
    expect(critic).toMatchObject({ batch: 'batch-001', maxTurns: 4, hasOutputSchema: true });
    expect(critic?.systemPrompt).toMatch(/^Role: CRITIC/);
    expect(critic?.paths.write).toEqual([]);
    expect(critic?.prompt).toContain('Rationale: tidied src/a.ts');
    expect(critic?.prompt).toContain('+// tidied');
    // The rejected patch was never applied or verified.
    expect(deps.verifier.calls).toHaveLength(1);
    expect(ofType(run.events, 'stage-end')[0]).toMatchObject({
      stage: 'PATCHER',
      outcome: 'rejected',
      reason: 'The critic answered "shrink_diff": too many lines; split it',
    });
  });

  it('drops what the critic changed in place: only the admitted patch lands', async () => {
    const sneaky: RefactorTurn = {
      ...criticTurn('accept'),
      act: (workspace) => workspace.write('src/b.ts', 'export const hacked = true;\n'),
    };
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts')],
      { PATCHER: { 'batch-001': [tidy('src/a.ts')] }, CRITIC: { 'batch-001': [sneaky] } },
      { useCritic: true },
    );

    expect(run.result?.batches[0]?.outcome).toBe('committed');
    expect(deps.workspace.treeAt('c002')['src/b.ts']).toBe(source('src/b.ts'));
    expect(deps.workspace.treeAt('c002')['src/a.ts']).toBe(`// tidied\n${source('src/a.ts')}`);
  });

  it('does not let the patch land when the critic hits its turn limit: a failed review is an objection', async () => {
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts'), batch('batch-002', 'src/b.ts')],
      {
        PATCHER: { 'batch-001': [tidy('src/a.ts'), tidy('src/a.ts')], 'batch-002': [tidy('src/b.ts')] },
        CRITIC: {
          'batch-001': [
            { status: 'turn-limit', message: 'stopped after 4 turns' },
            { status: 'turn-limit', message: 'stopped after 4 turns' },
          ],
        },
      },
      { useCritic: true, retryPerBatch: 1 },
    );

    expect(run.error).toBeUndefined();
    // Counted against retry_per_batch like any rejected patch; the batch fails and the run stops.
    expect(run.result?.batches).toEqual([
      {
        batch: 'batch-001',
        outcome: 'failed',
        attempts: 2,
        commit: null,
        reason: 'The critic gave no verdict: stopped after 4 turns',
      },
    ]);
    expect(run.result?.stopped).toBe('batch-001 failed after 2 attempts');
    expect(deps.contextCalls[1]?.feedback).toBe('The critic gave no verdict: stopped after 4 turns');
    // Nothing was applied, verified or committed.
    expect(deps.verifier.calls).toEqual([]);
    expect(deps.workspace.log()).toHaveLength(1);
    expect(deps.workspace.tree()).toEqual(FILES);
    expect(ofType(run.events, 'checkpoint-create')).toEqual([]);
    expect(ofType(run.events, 'stage-end').map((event) => [event.stage, event.outcome, event.reason])).toEqual([
      ['PATCHER', 'rejected', 'The critic gave no verdict: stopped after 4 turns'],
      ['PATCHER', 'rejected', 'The critic gave no verdict: stopped after 4 turns'],
    ]);
    expect(deps.agent.callsOf('PATCHER', 'batch-002')).toEqual([]);
  });

  it('retries after an invalid or missing CriticResponse and commits once the critic accepts', async () => {
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts')],
      {
        PATCHER: { 'batch-001': [tidy('src/a.ts'), tidy('src/a.ts'), tidy('src/a.ts')] },
        CRITIC: { 'batch-001': [{ output: { decision: 'maybe', reasons: [] } }, {}, criticTurn('accept')] },
      },
      { useCritic: true, retryPerBatch: 2 },
    );

    expect(run.result?.batches).toEqual([
      { batch: 'batch-001', outcome: 'committed', attempts: 3, commit: 'c002', reason: null },
    ]);
    expect(deps.contextCalls.map((call) => call.feedback)).toEqual([
      null,
      expect.stringMatching(/^The critic gave no verdict: Invalid structured output/),
      'The critic gave no verdict: it returned no CriticResponse',
    ]);
    // Only the accepted patch was applied and verified.
    expect(deps.verifier.calls).toHaveLength(1);
  });

  it('stops the run on a provider error of the critic, as on one of the patcher, and lands nothing', async () => {
    const failing: RefactorTurn = {
      act: () => {
        throw new RatchetError('provider', 'the provider answered 500');
      },
    };
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts')],
      { PATCHER: { 'batch-001': [tidy('src/a.ts')] }, CRITIC: { 'batch-001': [failing] } },
      { useCritic: true },
    );

    expect(isRatchetError(run.error, 'provider')).toBe(true);
    expect(run.result).toBeUndefined();
    expect(deps.verifier.calls).toEqual([]);
    expect(deps.workspace.log()).toHaveLength(1);
    expect(deps.workspace.tree()).toEqual(FILES);
  });

  it('is not consulted when useCritic is off', async () => {
    const { deps } = await runLoop([batch('batch-001', 'src/a.ts')], { PATCHER: { 'batch-001': [tidy('src/a.ts')] } });

    expect(deps.agent.callsOf('CRITIC')).toEqual([]);
  });
});

describe('runBatchLoop: max runtime (seed 002, section 19)', () => {
  const MINUTE = 60_000;
  /** A turn that, like a slow agent, lets `minutes` pass on the clock. */
  const slow = (clock: FakeClock, turn: RefactorTurn, minutes: number): RefactorTurn => ({
    ...turn,
    act: () => clock.advance(minutes * MINUTE),
  });

  it('finishes the batch that runs over the limit, then stops before the next one, keeping the checkpoints', async () => {
    const clock = new FakeClock();
    const { deps, run } = await runLoop(
      [
        batch('batch-001', 'src/a.ts'),
        batch('batch-002', 'src/b.ts'),
        batch('batch-003', 'src/c.ts'),
        batch('batch-004', 'src/d.ts'),
      ],
      {
        PATCHER: {
          'batch-001': [slow(clock, tidy('src/a.ts'), 10)],
          // The limit passes during the first attempt: the retry still runs (never stopped mid-batch).
          'batch-002': [slow(clock, broken('src/b.ts'), 25), tidy('src/b.ts')],
          'batch-003': [tidy('src/c.ts')],
          'batch-004': [tidy('src/d.ts')],
        },
      },
      { maxRuntimeMs: 30 * MINUTE },
      undefined,
      clock,
    );

    expect(run.error).toBeUndefined();
    const reason =
      'the max runtime of 30 minutes was exceeded (35 minutes elapsed): stopped before batch-003 (2 of 4 batches not started)';
    expect(run.result?.stopped).toBe(reason);
    expect(run.result?.batches.map((entry) => [entry.batch, entry.outcome, entry.attempts])).toEqual([
      ['batch-001', 'committed', 1],
      ['batch-002', 'committed', 2],
    ]);
    expect(run.result?.lastCheckpoint).toBe('c003');
    expect(await deps.workspace.head()).toBe('c003');
    expect(deps.workspace.log().map((commit) => commit.subject)).toEqual([
      'checkpoint: batch-002 Tidy src/b.ts',
      'checkpoint: batch-001 Tidy src/a.ts',
      'baseline',
    ]);
    expect(ofType(run.events, 'warning')).toEqual([{ type: 'warning', message: reason }]);
    expect(run.events.at(-1)).toEqual({ type: 'warning', message: reason });
    expect(ofType(run.events, 'batch-start').map((event) => event.batch)).not.toContain('batch-003');
    expect(deps.agent.unusedTurns()).toEqual({ 'PATCHER batch-003': 1, 'PATCHER batch-004': 1 });
    // The batches never started are in the task ledger too; the checkpoints passed the fast verifier only.
    expect(deps.taskLedger.slice(2)).toEqual([
      { batch: 'batch-003', goal: 'Tidy src/c.ts', outcome: 'not-started', attempts: 0, commit: null, reason },
      { batch: 'batch-004', goal: 'Tidy src/d.ts', outcome: 'not-started', attempts: 0, commit: null, reason },
    ]);
    expect(run.result).toMatchObject({ lastFullVerified: 'c001', fullVerifierFailed: false });
  });

  it('does not stop after the last batch, nor without a limit', async () => {
    const limited = new FakeClock();
    const last = await runLoop(
      [batch('batch-001', 'src/a.ts'), batch('batch-002', 'src/b.ts')],
      { PATCHER: { 'batch-001': [tidy('src/a.ts')], 'batch-002': [slow(limited, tidy('src/b.ts'), 90)] } },
      { maxRuntimeMs: 30 * MINUTE },
      undefined,
      limited,
    );
    expect(last.run.result?.stopped).toBeNull();
    expect(last.run.result?.batches.map((entry) => entry.outcome)).toEqual(['committed', 'committed']);

    const unlimited = new FakeClock();
    const free = await runLoop(
      [batch('batch-001', 'src/a.ts'), batch('batch-002', 'src/b.ts')],
      { PATCHER: { 'batch-001': [slow(unlimited, tidy('src/a.ts'), 10_000)], 'batch-002': [tidy('src/b.ts')] } },
      { maxRuntimeMs: null },
      undefined,
      unlimited,
    );
    expect(free.run.result?.stopped).toBeNull();
    expect(free.run.result?.batches.map((entry) => entry.outcome)).toEqual(['committed', 'committed']);
    expect(ofType(free.run.events, 'warning')).toEqual([]);
  });
});

describe('runBatchLoop: formatting-only batches (seed 002, 17.3)', () => {
  const formatBatch = (): PlannedBatch =>
    batch('batch-001', 'src/**', {
      goal: 'Format the code',
      scope_globs: ['src/a.ts', 'src/b.ts', 'src/c.ts'],
      allowed_operations: [FORMAT_OPERATION],
    });
  /** Reformats (re-indents) every file, renames a function in c.ts, and writes a file out of scope. */
  const sloppyFormatter: FakeFormatter = {
    rewrite: (tree) => ({
      ...Object.fromEntries(
        Object.entries(tree).map(([path, text]) => [path, text.replace('\n  return', '\n    return')]),
      ),
      'src/c.ts': (tree['src/c.ts'] ?? '').replace('function c', 'function c2'),
    }),
  };

  it('runs the formatter instead of the patcher, keeps formatting-only changes in scope, restores the rest, and commits', async () => {
    const { deps, run } = await runLoop(
      [formatBatch(), batch('batch-002', 'src/d.ts')],
      { PATCHER: { 'batch-002': [tidy('src/d.ts')] } },
      {},
      undefined,
      undefined,
      sloppyFormatter,
    );

    expect(run.error).toBeUndefined();
    expect(run.result?.batches.map((entry) => [entry.batch, entry.outcome, entry.attempts])).toEqual([
      ['batch-001', 'committed', 1],
      ['batch-002', 'committed', 1],
    ]);
    expect(deps.agent.callsOf('PATCHER', 'batch-001')).toEqual([]);
    expect(deps.workspace.treeAt('c002')).toEqual({
      ...FILES,
      'src/a.ts': 'export function a() {\n    return 1;\n}\n',
      'src/b.ts': 'export function b() {\n    return 2;\n}\n',
    });
    const [check] = ofType(run.events, 'patch-check');
    // (The fake counts whole-file diffs: 3 lines out and 3 in per file.)
    expect(check).toMatchObject({ batch: 'batch-001', admitted: true, files: ['src/a.ts', 'src/b.ts'], loc: 12 });
    expect(check?.violations).toEqual([
      expect.stringMatching(/^src\/c\.ts: not formatting-only: the syntax changed at line 1/) as unknown,
      'src/d.ts: outside the batch scope',
      'src/e.ts: outside the batch scope',
    ]);
    expect(deps.workspace.log().at(-2)?.body).toMatch(
      /^Formatting only: 2 files reformatted by the configured formatter\.\n\nRestored .*\n- src\/c\.ts: not formatting-only/,
    );
    expect(trace(run.events).slice(0, 10)).toEqual([
      'batch-start batch-001 #1',
      'stage-start FORMAT',
      'verify-end FORMAT ok',
      'patch-check admitted',
      'stage-start FAST_VERIFY',
      'verify-end FAST_VERIFY ok',
      'stage-end FAST_VERIFY accepted',
      'checkpoint-create c002',
      'stage-end FORMAT accepted',
      'batch-end batch-001 committed',
    ]);
    expect(ofType(run.events, 'verify-end')[0]).toMatchObject({ stage: 'FORMAT', kind: 'format' });
  });

  it('is a noop when the formatter changes nothing it may keep', async () => {
    const { deps, run } = await runLoop([formatBatch()], {}, {}, undefined, undefined, {
      rewrite: (tree) => ({ ...tree, 'src/e.ts': 'x' }),
    });

    expect(run.result?.batches).toEqual([
      {
        batch: 'batch-001',
        outcome: 'noop',
        attempts: 1,
        commit: null,
        reason: 'no formatting-only change within scope (1 restored)',
      },
    ]);
    expect(run.result?.stopped).toBeNull();
    expect(deps.workspace.log()).toHaveLength(1);
    expect(deps.verifier.calls).toEqual([]);
  });

  it('stops the run, once, when the formatter fails, leaving the tree at the last checkpoint', async () => {
    const { deps, run } = await runLoop(
      [formatBatch(), batch('batch-002', 'src/d.ts')],
      { PATCHER: { 'batch-002': [tidy('src/d.ts')] } },
      {},
      undefined,
      undefined,
      { fails: true },
    );

    expect(run.result?.stopped).toBe('batch-001 (formatting) failed');
    expect(run.result?.batches).toEqual([
      {
        batch: 'batch-001',
        outcome: 'failed',
        attempts: 1,
        commit: null,
        reason: expect.stringContaining('fake-format: syntax error') as unknown,
      },
    ]);
    expect(deps.workspace.tree()).toEqual(FILES);
    expect(ofType(run.events, 'stage-end')[0]).toMatchObject({ stage: 'FORMAT', outcome: 'error' });
    expect(deps.taskLedger.map((entry) => [entry.batch, entry.outcome])).toEqual([
      ['batch-001', 'failed'],
      ['batch-002', 'not-started'],
    ]);
  });

  it('rolls the formatting back when the fast verifier fails, without retrying it, and stops', async () => {
    // Whitespace inside a comment is layout: "BRO KEN" -> "BROKEN" passes as formatting, and the
    // fake verifier fails on the marker it makes.
    const files = { ...FILES, 'src/a.ts': `// BRO KEN\n${source('src/a.ts')}` };
    const deps = createRefactorDeps(files, {}, undefined, {
      rewrite: (tree) => ({ ...tree, 'src/a.ts': (tree['src/a.ts'] ?? '').replace('BRO KEN', 'BROKEN') }),
    });
    const run = await drive(runBatchLoop([formatBatch(), batch('batch-002', 'src/d.ts')], deps, DEFAULT_POLICY));
    expectWellFormed(run.events, true);

    expect(run.result?.batches).toEqual([
      {
        batch: 'batch-001',
        outcome: 'failed',
        attempts: 1,
        commit: null,
        reason: expect.stringContaining('fast verifier failed') as unknown,
      },
    ]);
    expect(run.result?.stopped).toBe('batch-001 (formatting) failed');
    expect(deps.workspace.tree()).toEqual(files);
    expect(ofType(run.events, 'checkpoint-rollback')).toEqual([
      { type: 'checkpoint-rollback', stage: 'FAST_VERIFY', to: 'c001', reason: 'batch-001 failed the fast verifier' },
    ]);
    expect(ofType(run.events, 'batch-start')).toHaveLength(1);
  });
});

describe('runBatchLoop: interruption', () => {
  it('throws an interrupted error when aborted, keeping the checkpoints made so far', async () => {
    const controller = new AbortController();
    const aborting: RefactorTurn = { ...tidy('src/b.ts'), act: () => controller.abort() };
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts'), batch('batch-002', 'src/b.ts'), batch('batch-003', 'src/c.ts')],
      { PATCHER: { 'batch-001': [tidy('src/a.ts')], 'batch-002': [aborting], 'batch-003': [tidy('src/c.ts')] } },
      {},
      controller.signal,
    );

    expect(isRatchetError(run.error, 'interrupted')).toBe(true);
    expect(run.result).toBeUndefined();
    expect(deps.workspace.log().map((commit) => commit.sha)).toEqual(['c002', 'c001']);
    expect(deps.agent.callsOf('PATCHER', 'batch-003')).toEqual([]);
    expect(ofType(run.events, 'batch-end').map((event) => event.batch)).toEqual(['batch-001']);
    // Every planned batch has its line in TASK_LEDGER.jsonl, the interrupted one included.
    expect(
      deps.taskLedger.map((entry) => `${String(entry.batch)} ${String(entry.outcome)} ${String(entry.attempts)}`),
    ).toEqual(['batch-001 committed 1', 'batch-002 interrupted 1', 'batch-003 not-started 0']);
  });

  it('drops what the batch under way changed when an error ends the run, and still lists every batch in the task ledger', async () => {
    const failing: RefactorTurn = {
      act: (workspace) => {
        workspace.write('src/b.ts', 'half-written\n');
        throw new RatchetError('overloaded', 'anthropic is overloaded (HTTP 529)\nretried 3 times');
      },
    };
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts'), batch('batch-002', 'src/b.ts'), batch('batch-003', 'src/c.ts')],
      { PATCHER: { 'batch-001': [tidy('src/a.ts')], 'batch-002': [failing] } },
    );

    expect(isRatchetError(run.error, 'overloaded')).toBe(true);
    expect(deps.workspace.tree()).toEqual(deps.workspace.treeAt('c002'));
    expect(
      deps.taskLedger.map((entry) => `${String(entry.batch)} ${String(entry.outcome)} ${String(entry.attempts)}`),
    ).toEqual(['batch-001 committed 1', 'batch-002 failed 1', 'batch-003 not-started 0']);
    expect(deps.taskLedger[1]?.reason).toBe(
      'stopped by an error (anthropic is overloaded (HTTP 529)) before it was committed; its changes were dropped',
    );
  });

  it('does not start a batch once the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const { deps, run } = await runLoop(
      [batch('batch-001', 'src/a.ts')],
      { PATCHER: { 'batch-001': [tidy('src/a.ts')] } },
      {},
      controller.signal,
    );

    expect(isRatchetError(run.error, 'interrupted')).toBe(true);
    expect(run.events).toEqual([]);
    expect(deps.agent.calls).toEqual([]);
  });
});
