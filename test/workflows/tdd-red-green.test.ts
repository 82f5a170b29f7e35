import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEnveloper } from '../../src/engine/event-stream.js';
import { openLedger } from '../../src/ledger/ledger.js';
import {
  ADD,
  LIST,
  RUN_ID,
  addOnlyFiles,
  cycleScript,
  eventsOf,
  greenTurn,
  redTestFile,
  redTurn,
  solvedImpl,
  stubImpl,
  trace,
} from '../support/fake-tdd-harness.js';
import { useHarness } from '../support/fake-tdd-suite.js';
import type { AgentTurn } from '../support/fake-tdd-ports.js';
import { testFile } from '../support/fake-tdd-verifier.js';

const setUp = useHarness({ files: addOnlyFiles() });

/** A RED turn whose test passes at once: the implementation is already there. */
const passingRed: AgentTurn = { write: { [ADD.testFile]: redTestFile(ADD), [ADD.implFile]: solvedImpl(ADD) } };
/** RED_FIX for `passingRed`: replaces the implementation with a stub. */
const stubOnly: AgentTurn = { write: { [ADD.implFile]: stubImpl(ADD) } };

/** The existing, passing test of `baseFiles`. */
const BASE_TEST = 'src/base.test.ts';
const baseFiles = addOnlyFiles({
  [BASE_TEST]: testFile({ name: 'keeps the base', impl: 'src/base.ts', contains: 'base = 1' }),
  'src/base.ts': 'export const base = 1;\n',
});

describe('RED: the gate and RED_FIX', () => {
  it('stops before PLAN when a test already fails: no cycle can pass on a red suite, so no model call is paid for', async () => {
    const files = addOnlyFiles({
      'src/base.test.ts': testFile({ name: 'was broken', impl: 'src/base.ts', contains: 'base = 2' }),
      'src/base.ts': 'export const base = 1;\n',
    });
    const h = await setUp({ files, script: { PLAN: cycleScript().PLAN?.slice(0, 1) ?? [] } });
    const run = await h.run();

    expect(run.error?.code).toBe('gate-failed');
    expect(run.error?.details).toEqual({ phase: 'PLAN', reason: 'red-baseline' });
    expect(run.error?.message).toMatch(
      /^The test suite fails before any change of this cycle: src\/base\.test\.ts::was broken\.$/,
    );
    expect(h.agent.calls).toEqual([]);
    expect(h.workspace.subjects()).toEqual(['initial']);
  });

  it('warns when the new test passes immediately and asks RED_FIX for an assertion that checks', async () => {
    const h = await setUp({ script: cycleScript({ RED: [passingRed], RED_FIX: [stubOnly] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(trace(run.events).slice(6, 15)).toEqual([
      'stage-end PLAN#1 accepted',
      'stage-start RED#1',
      'verify-end RED test',
      'warning RED',
      'stage-end RED#1 rejected (passed-immediately)',
      'stage-start RED_FIX#2',
      'verify-end RED_FIX test',
      'checkpoint-create test: adds two numbers',
      'note-write RED->GREEN',
    ]);
    expect(eventsOf(run.events, 'warning')[0]?.message).toMatch(/"adds two numbers" passed immediately/);
    const [fix] = h.agent.callsOf('RED_FIX');
    expect(fix?.systemPrompt).toMatch(/^Stage: RED_FIX/);
    expect(fix?.variables).toMatchObject({ attempt: 2, max_attempts: 3 });
    expect(String(fix?.variables.feedback)).toMatch(
      /^The new test PASSED before any implementation.*Tighten the assertion/,
    );
    expect(String(fix?.variables.feedback)).toMatch(/src\/add\.test\.ts::adds two numbers/);
    // RED_FIX works on what RED left behind.
    expect(fix?.treeAtStart.get(ADD.testFile)).toBe(redTestFile(ADD));
    const red = h.workspace.commitWithSubject('test: adds two numbers');
    expect(h.workspace.noteOn(red.sha)).toMatchObject({
      phase: 'RED',
      nextPhase: 'GREEN',
      testResult: 'FAIL',
      retryCount: 1,
    });
    expect(eventsOf(run.events, 'checkpoint-create')[1]).toMatchObject({ stage: 'RED_FIX', phase: 'RED' });
  });

  it('sends a test that errors instead of failing an assertion to RED_FIX', async () => {
    const erroring: AgentTurn = {
      write: {
        [ADD.testFile]: testFile({
          name: ADD.description,
          impl: ADD.implFile,
          contains: 'return a + b',
          failWith: 'error',
        }),
        [ADD.implFile]: stubImpl(ADD),
      },
    };
    const h = await setUp({ script: cycleScript({ RED: [erroring], RED_FIX: [redTurn(ADD)] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(trace(run.events)).toContain('stage-end RED#1 rejected (not-assertion)');
    expect(eventsOf(run.events, 'warning')).toEqual([]);
    expect(String(h.agent.callsOf('RED_FIX')[0]?.variables.feedback)).toMatch(
      /must fail on an assertion, but it failed with: error/,
    );
  });

  it('sends a test that cannot be collected (missing module) to RED_FIX', async () => {
    const h = await setUp({
      script: cycleScript({ RED: [{ write: { [ADD.testFile]: redTestFile(ADD) } }], RED_FIX: [stubOnly] }),
    });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(trace(run.events)).toContain('stage-end RED#1 rejected (collection-error)');
    expect(String(h.agent.callsOf('RED_FIX')[0]?.variables.feedback)).toMatch(
      /could not be collected[\s\S]*Cannot find module 'src\/add\.ts'/,
    );
  });

  it('puts back a test list that RED changed through its shell and sends the attempt to RED_FIX', async () => {
    const listBefore = addOnlyFiles()[LIST];
    const ticking: AgentTurn = { ...redTurn(ADD), shell: { [LIST]: '- [x] adds two numbers\n' } };
    const h = await setUp({ files: addOnlyFiles(), script: cycleScript({ RED: [ticking], RED_FIX: [{}] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(trace(run.events)).toContain('stage-end RED#1 rejected (path-violation)');
    const [fix] = h.agent.callsOf('RED_FIX');
    expect(String(fix?.variables.feedback)).toMatch(
      /^RED may not change test-list\.md \(writable: \*\*, except test-list\.md\)/,
    );
    // RED_FIX starts from RED's test, with the list as it was.
    expect(fix?.treeAtStart.get(ADD.testFile)).toBe(redTestFile(ADD));
    expect(fix?.treeAtStart.get(LIST)).toBe(listBefore);
    expect(h.workspace.commitWithSubject('test: adds two numbers').files.get(LIST)).toBe(listBefore);
  });

  it('removes a symbolic link RED made through its shell that leads outside the repository, and sends the attempt to RED_FIX', async () => {
    const linking: AgentTurn = {
      ...redTurn(ADD),
      link: {
        'docs/key.txt': '/home/user/.ssh/id_ed25519',
        'docs/up.txt': '../../outside.txt',
        'docs/ok.txt': '../README.md',
      },
    };
    const h = await setUp({ files: addOnlyFiles(), script: cycleScript({ RED: [linking], RED_FIX: [{}] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(trace(run.events)).toContain('stage-end RED#1 rejected (path-violation)');
    const [fix] = h.agent.callsOf('RED_FIX');
    expect(String(fix?.variables.feedback)).toMatch(
      /^Symbolic links that lead outside the repository are not allowed: docs\/key\.txt, docs\/up\.txt \(removed\)/,
    );
    expect(await h.workspace.isLinkOnDisk('docs/key.txt')).toBe(false);
    expect(await h.workspace.isLinkOnDisk('docs/up.txt')).toBe(false);
    // A link that stays inside the worktree is an ordinary thing for a repository to have.
    expect(await h.workspace.isLinkOnDisk('docs/ok.txt')).toBe(true);
  });

  it('takes out a chain of links RED made that leads outside, and a nested repository, with the reasons for RED_FIX', async () => {
    const planting: AgentTurn = {
      ...redTurn(ADD),
      // mkdir d && ln -s .. d/x && ln -s d/x/.. docs/a: each target alone stays inside.
      link: { 'd/x': '..', a: 'd/x/..' },
      act: async ({ workspace }) => {
        await mkdir(join(workspace.root, 'vendor', 'sub', '.git'), { recursive: true });
        await writeFile(join(workspace.root, 'vendor', 'sub', '.git', 'config'), '[core]\n\tfsmonitor = true\n');
      },
    };
    const h = await setUp({ files: addOnlyFiles(), script: cycleScript({ RED: [planting], RED_FIX: [{}] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(trace(run.events)).toContain('stage-end RED#1 rejected (path-violation)');
    const [fix] = h.agent.callsOf('RED_FIX');
    expect(String(fix?.variables.feedback)).toBe(
      'Symbolic links that lead outside the repository are not allowed: a (removed). Make regular files instead. ' +
        'Nested git repositories are not allowed: vendor/sub (removed). Do not run git init or git clone inside the repository; write plain files.',
    );
    expect(await h.workspace.isLinkOnDisk('a')).toBe(false);
    expect(existsSync(join(h.workspace.root, 'vendor', 'sub'))).toBe(false);
  });

  it('sends a RED that breaks a passing test to RED_FIX', async () => {
    const breaking: AgentTurn = { write: { ...redTurn(ADD).write, 'src/base.ts': 'export const base = 2;\n' } };
    const h = await setUp({
      files: baseFiles,
      script: cycleScript({ RED: [breaking], RED_FIX: [{ write: { 'src/base.ts': 'export const base = 1;\n' } }] }),
    });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(trace(run.events)).toContain('stage-end RED#1 rejected (regression)');
    const [fix] = h.agent.callsOf('RED_FIX');
    expect(String(fix?.variables.feedback)).toMatch(
      /passed before no longer pass[\s\S]*src\/base\.test\.ts::keeps the base/,
    );
    expect(fix?.treeAtStart.get('src/base.ts')).toBe('export const base = 2;\n');
    expect(h.workspace.commitWithSubject('test: adds two numbers').files.get('src/base.ts')).toBe(
      'export const base = 1;\n',
    );
  });

  it('fails the run after three rejected attempts, records the error on HEAD, and resumes at RED', async () => {
    const h = await setUp({
      script: { PLAN: cycleScript().PLAN?.slice(0, 1) ?? [], RED: [passingRed], RED_FIX: [{}, {}] },
    });
    const failed = await h.run();

    expect(failed.error?.code).toBe('gate-failed');
    expect(failed.error?.message).toBe('RED failed after 3 attempts: passed-immediately');
    expect(eventsOf(failed.events, 'warning')).toHaveLength(3);
    const plan = h.workspace.commitWithSubject('plan: adds two numbers');
    expect(h.workspace.headCommit().sha).toBe(plan.sha);
    expect(await h.workspace.hasChanges()).toBe(false);
    expect(h.workspace.file(ADD.testFile)).toBeUndefined();
    const recorded = h.workspace.noteOn(plan.sha);
    expect(recorded).toMatchObject({
      phase: 'PLAN',
      nextPhase: 'RED',
      currentTest: ADD,
      error: 'RED failed after 3 attempts: passed-immediately',
      errorDetails: { type: 'passed-immediately', message: expect.stringMatching(/^The new test PASSED/) as unknown },
      retryCount: 2,
    });
    expect(eventsOf(failed.events, 'note-write').at(-1)).toEqual({
      type: 'note-write',
      commit: plan.sha,
      state: recorded,
    });

    h.agent.append({
      RED: [redTurn(ADD)],
      GREEN: [greenTurn(ADD)],
      REFACTOR: [{}],
      PLAN: cycleScript().PLAN?.slice(1) ?? [],
    });
    const resumed = await h.run(recorded);
    expect(resumed.error).toBeUndefined();
    expect(trace(resumed.events).slice(0, 3)).toEqual([
      'verify-end RED baseline',
      'stage-start RED#1',
      'verify-end RED test',
    ]);
    expect(h.agent.callsOf('RED').at(-1)?.variables.feedback).toBe('(none)');
    expect(h.workspace.subjects()).toEqual([
      'initial',
      'plan: adds two numbers',
      'test: adds two numbers',
      'feat: adds two numbers',
      'refactor: no changes needed',
      'plan: all tests done',
    ]);
    expect(h.workspace.noteOn(h.workspace.commitWithSubject('test: adds two numbers').sha)).toMatchObject({
      error: null,
      errorDetails: null,
      retryCount: 0,
    });
  });
});

describe('GREEN: the gate and retries', () => {
  it('retries with the failing output after discarding the failed attempt', async () => {
    const wrong: AgentTurn = {
      write: { [ADD.implFile]: solvedImpl(ADD).replace('a + b', 'a * b'), 'src/helper.ts': 'export {};\n' },
    };
    const h = await setUp({ script: cycleScript({ GREEN: [wrong, greenTurn(ADD)] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(trace(run.events)).toContain('stage-end GREEN#1 rejected (tests-failing)');
    // The rejection names the tests it is about, for the terminal and the ledger.
    const rejected = run.events.find((event) => event.type === 'stage-end' && event.outcome === 'rejected');
    expect(rejected).toMatchObject({ stage: 'GREEN', subjects: [expect.stringContaining('add')] });
    const [, retry] = h.agent.callsOf('GREEN');
    expect(retry?.variables.attempt).toBe(2);
    expect(String(retry?.variables.feedback)).toMatch(
      /Failing tests:\n- src\/add\.test\.ts::adds two numbers \[assertion\]/,
    );
    expect(String(retry?.variables.feedback)).toMatch(
      /Test output \(last lines\):\nFAIL src\/add\.test\.ts::adds two numbers/,
    );
    expect(retry?.treeAtStart.get(ADD.implFile)).toBe(stubImpl(ADD));
    expect(retry?.treeAtStart.has('src/helper.ts')).toBe(false);
    const feat = h.workspace.commitWithSubject('feat: adds two numbers');
    expect(h.workspace.noteOn(feat.sha)).toMatchObject({ phase: 'GREEN', testResult: 'PASS', retryCount: 1 });
    expect(feat.files.has('src/helper.ts')).toBe(false);
  });

  it('rejects a GREEN that changes a test file (through the shell), putting the file back', async () => {
    const cheat: AgentTurn = {
      shell: { [ADD.testFile]: testFile({ name: ADD.description, impl: ADD.implFile, contains: 'return 0' }) },
    };
    const h = await setUp({ script: cycleScript({ GREEN: [cheat, greenTurn(ADD)] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(trace(run.events)).toContain('stage-end GREEN#1 rejected (path-violation)');
    const [, retry] = h.agent.callsOf('GREEN');
    expect(String(retry?.variables.feedback)).toMatch(
      /^GREEN may not change src\/add\.test\.ts \(writable: \*\*, except \*\*\/\*\.test\.ts, src\/add\.test\.ts, test-list\.md\)\. Those changes were undone/,
    );
    expect(retry?.treeAtStart.get(ADD.testFile)).toBe(redTestFile(ADD));
    expect(h.workspace.commitWithSubject('feat: adds two numbers').files.get(ADD.testFile)).toBe(redTestFile(ADD));
  });

  it('stops a GREEN attempt at the stage time limit and retries it with that as feedback', async () => {
    const hanging: AgentTurn = {
      act: ({ request }) =>
        new Promise<void>((resolve) => request.signal?.addEventListener('abort', () => resolve(), { once: true })),
    };
    const h = await setUp({ timeoutMs: 200, script: cycleScript({ GREEN: [hanging, greenTurn(ADD)] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(trace(run.events)).toContain('stage-end GREEN#1 rejected (timeout)');
    expect(String(h.agent.callsOf('GREEN')[1]?.variables.feedback)).toMatch(
      /^GREEN did not finish within its time limit of 0.2 s and was stopped/,
    );
    expect(h.workspace.commitWithSubject('feat: adds two numbers').files.get(ADD.implFile)).toBe(solvedImpl(ADD));
  });

  it('rejects a GREEN that adds a test file', async () => {
    const extra: AgentTurn = {
      ...greenTurn(ADD),
      shell: { 'src/extra.test.ts': testFile({ name: 'extra', impl: ADD.implFile, contains: 'a + b' }) },
    };
    const h = await setUp({ script: cycleScript({ GREEN: [extra, greenTurn(ADD)] }) });
    const run = await h.run();
    expect(run.error).toBeUndefined();
    expect(String(h.agent.callsOf('GREEN')[1]?.variables.feedback)).toMatch(
      /^GREEN may not change src\/extra\.test\.ts /,
    );
    expect(h.workspace.file('src/extra.test.ts')).toBeUndefined();
  });

  it('gives GREEN a path policy that denies the test globs and the test list', async () => {
    const tries: AgentTurn = {
      write: { [ADD.testFile]: 'weakened', [LIST]: '- [x] adds two numbers\n', [ADD.implFile]: solvedImpl(ADD) },
    };
    const h = await setUp({ script: cycleScript({ GREEN: [tries] }) });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    const [green] = h.agent.callsOf('GREEN');
    expect(green?.paths).toEqual({ read: ['**'], write: ['**'], denyWrite: ['**/*.test.ts', ADD.testFile, LIST] });
    expect(green?.refused).toEqual([ADD.testFile, LIST]);
    const refusals = eventsOf(run.events, 'tool-call').filter((event) => event.isError);
    expect(refusals.map((event) => event.stage)).toEqual(['GREEN', 'GREEN']);
    expect(h.workspace.commitWithSubject('feat: adds two numbers').files.get(ADD.testFile)).toBe(redTestFile(ADD));
  });

  it('uses the configured test globs for the policy and the lock', async () => {
    const h = await setUp({ testGlobs: ['src/*.test.ts', 'spec/**'], script: cycleScript() });
    await h.run();
    expect(h.agent.callsOf('GREEN')[0]?.paths.denyWrite).toEqual(['src/*.test.ts', 'spec/**', ADD.testFile, LIST]);
    expect(h.agent.callsOf('REFACTOR')[0]?.paths.denyWrite).toEqual(['src/*.test.ts', 'spec/**', ADD.testFile, LIST]);
  });

  it('fails after three failing GREEN attempts with the last failure in the note on the RED commit', async () => {
    const h = await setUp({ script: cycleScript({ GREEN: [{}, {}, {}] }) });
    const run = await h.run();

    expect(run.error?.code).toBe('gate-failed');
    const red = h.workspace.commitWithSubject('test: adds two numbers');
    expect(h.workspace.headCommit().sha).toBe(red.sha);
    expect(h.workspace.noteOn(red.sha)).toMatchObject({
      phase: 'RED',
      nextPhase: 'GREEN',
      error: 'GREEN failed after 3 attempts: tests-failing',
      errorDetails: { type: 'tests-failing' },
      retryCount: 2,
    });
  });
});

describe('VERIFY, FIX and RE_VERIFY', () => {
  it('sends a lint failure to FIX and accepts the cycle when RE_VERIFY passes', async () => {
    const h = await setUp({
      script: cycleScript({ GREEN: [greenTurn(ADD, '// LINT-ERROR\n')], FIX: [greenTurn(ADD)] }),
    });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    const lines = trace(run.events);
    const from = lines.indexOf('stage-start GREEN#1');
    expect(lines.slice(from, from + 17)).toEqual([
      'stage-start GREEN#1',
      'verify-end GREEN test',
      'stage-end GREEN#1 accepted (All 1 tests pass)',
      'stage-start VERIFY#1',
      'verify-end VERIFY lint',
      'verify-end VERIFY typecheck',
      'stage-end VERIFY#1 rejected (lint-failed)',
      'stage-start FIX#1',
      'stage-start RE_VERIFY#1',
      'verify-end RE_VERIFY test',
      'verify-end RE_VERIFY lint',
      'verify-end RE_VERIFY typecheck',
      'stage-end RE_VERIFY#1 accepted (All 1 tests pass; lint ok, typecheck ok)',
      // FIX ends as RE_VERIFY judged it.
      'stage-end FIX#1 accepted (All 1 tests pass; lint ok, typecheck ok)',
      'checkpoint-create feat: adds two numbers',
      'note-write GREEN->REFACTOR',
      'stage-start REFACTOR#1',
    ]);
    const [fix] = h.agent.callsOf('FIX');
    expect(fix?.systemPrompt).toMatch(/^Stage: FIX/);
    expect(fix?.paths.denyWrite).toEqual(['**/*.test.ts', ADD.testFile, LIST]);
    expect(String(fix?.variables.feedback)).toBe('$ fake-lint (exit 1)\nsrc/add.ts: LINT-ERROR');
    expect(fix?.variables.changed_files).toBe(`${ADD.testFile}\n${ADD.implFile}`);
    expect(h.workspace.commitWithSubject('feat: adds two numbers').files.get(ADD.implFile)).toBe(solvedImpl(ADD));
  });

  it('numbers FIX attempts from 1 whichever GREEN attempt passed: the stage rows of the ledger', async () => {
    // GREEN #1 fails the tests, GREEN #2 passes them but not lint; one FIX repairs it.
    const script = cycleScript({ GREEN: [{}, greenTurn(ADD, '// LINT-ERROR\n')], FIX: [greenTurn(ADD)] });
    const h = await setUp({ script });
    const run = await h.run();
    expect(run.error).toBeUndefined();

    const dir = await mkdtemp(join(tmpdir(), 'ratchet-fix-ledger-'));
    const ledger = await openLedger(join(dir, 'ledger.db'), { secrets: [] });
    try {
      await ledger.createRun({ id: RUN_ID, workflow: 'tdd', repoRoot: dir, feature: 'a calculator' });
      const clock = { now: () => new Date('2026-01-01T00:00:00.000Z'), sleep: () => Promise.resolve() };
      const envelope = createEnveloper(RUN_ID, clock);
      await ledger.recordMany(run.events.map(envelope));
      const rows = (await ledger.stages(RUN_ID)).map(
        (row) => `${row.cycle} ${row.stage}#${row.attempt} ${row.outcome ?? 'open'}`,
      );
      expect(rows).toEqual([
        '1 PLAN#1 accepted',
        '1 RED#1 accepted',
        '1 GREEN#1 rejected',
        '1 GREEN#2 accepted',
        '1 VERIFY#1 rejected',
        '1 FIX#1 accepted',
        '1 RE_VERIFY#1 accepted',
        '1 REFACTOR#1 accepted',
        '2 PLAN#1 accepted',
      ]);
    } finally {
      await ledger.close();
      await rm(dir, { recursive: true, force: true });
    }
    // The number in the ledger is the attempt FIX's prompt names.
    expect(h.agent.callsOf('FIX').map((call) => call.variables.attempt)).toEqual([1]);
  });

  it('fails the cycle when FIX runs out of attempts, reporting every failing check', async () => {
    const broken = greenTurn(ADD, '// LINT-ERROR TYPE-ERROR\n');
    const h = await setUp({ script: cycleScript({ GREEN: [broken], FIX: [{}, {}, {}] }) });
    const run = await h.run();

    expect(run.error?.code).toBe('gate-failed');
    expect(run.error?.message).toBe('FIX failed after 3 attempts: lint+typecheck-failed');
    expect(run.error?.hint).toMatch(/fix the cause, then `ratchet resume`/);
    expect(trace(run.events).filter((line) => line.startsWith('stage-end RE_VERIFY'))).toEqual([
      'stage-end RE_VERIFY#1 rejected (lint+typecheck-failed)',
      'stage-end RE_VERIFY#2 rejected (lint+typecheck-failed)',
      'stage-end RE_VERIFY#3 rejected (lint+typecheck-failed)',
    ]);
    expect(h.agent.callsOf('GREEN')).toHaveLength(1);
    const red = h.workspace.commitWithSubject('test: adds two numbers');
    expect(h.workspace.headCommit().sha).toBe(red.sha);
    expect(h.workspace.file(ADD.implFile)).toBe(stubImpl(ADD));
    expect(h.workspace.noteOn(red.sha)).toMatchObject({
      nextPhase: 'GREEN',
      errorDetails: {
        type: 'lint+typecheck-failed',
        message: expect.stringMatching(/fake-lint[\s\S]*fake-typecheck/) as unknown,
      },
      retryCount: 2,
    });
  });

  it('records a FIX attempt whose RE_VERIFY rejects it as rejected, like REFACTOR, not as accepted', async () => {
    // FIX #1 leaves the lint error, FIX #2 fixes it: only FIX #2 is accepted.
    const h = await setUp({
      script: cycleScript({ GREEN: [greenTurn(ADD, '// LINT-ERROR\n')], FIX: [{}, greenTurn(ADD)] }),
    });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    const ends = eventsOf(run.events, 'stage-end').filter(
      (event) => event.stage === 'FIX' || event.stage === 'RE_VERIFY',
    );
    expect(ends.map((event) => [event.stage, event.attempt, event.outcome, event.reason?.split(' (')[0]])).toEqual([
      ['RE_VERIFY', 1, 'rejected', 'lint-failed'],
      ['FIX', 1, 'rejected', 'lint-failed'],
      ['RE_VERIFY', 2, 'accepted', 'All 1 tests pass; lint ok, typecheck ok'],
      ['FIX', 2, 'accepted', 'All 1 tests pass; lint ok, typecheck ok'],
    ]);
    // Each FIX attempt ends after the RE_VERIFY that gates it.
    expect(trace(run.events).filter((line) => /^stage-(start|end) (FIX|RE_VERIFY)/.test(line))).toEqual([
      'stage-start FIX#1',
      'stage-start RE_VERIFY#1',
      'stage-end RE_VERIFY#1 rejected (lint-failed)',
      'stage-end FIX#1 rejected (lint-failed)',
      'stage-start FIX#2',
      'stage-start RE_VERIFY#2',
      'stage-end RE_VERIFY#2 accepted (All 1 tests pass; lint ok, typecheck ok)',
      'stage-end FIX#2 accepted (All 1 tests pass; lint ok, typecheck ok)',
    ]);
  });

  it('fails the run with three rejected FIX attempts, none of them shown accepted', async () => {
    const h = await setUp({
      script: cycleScript({ GREEN: [greenTurn(ADD, '// LINT-ERROR\n')], FIX: [{}, {}, {}] }),
    });
    const run = await h.run();

    expect(run.error?.message).toBe('FIX failed after 3 attempts: lint-failed');
    const fixes = eventsOf(run.events, 'stage-end').filter((event) => event.stage === 'FIX');
    expect(fixes.map((event) => `${event.attempt} ${event.outcome} ${event.reason ?? ''}`)).toEqual([
      '1 rejected lint-failed',
      '2 rejected lint-failed',
      '3 rejected lint-failed',
    ]);
  });

  it('says that only RED can fix a check that fails in the locked test file, and how to get back to RED', async () => {
    const typedTest = testFile({ name: 'adds two numbers TYPE-ERROR', impl: ADD.implFile, contains: 'a + b' });
    const red: AgentTurn = { write: { [ADD.testFile]: typedTest, [ADD.implFile]: stubImpl(ADD) } };
    const h = await setUp({ script: cycleScript({ RED: [red], GREEN: [greenTurn(ADD)], FIX: [{}, {}, {}] }) });
    const run = await h.run();

    expect(run.error?.message).toBe('FIX failed after 3 attempts: typecheck-failed');
    expect(run.error?.hint).toMatch(
      /^The checks fail in src\/add\.test\.ts, the test RED wrote, which GREEN and FIX may not change\. .*ratchet rollback <commit>.*RED writes the test again/,
    );
  });

  it('runs FIX on tests that VERIFY finds failing only after a FIX broke them', async () => {
    // FIX may break the tests; RE_VERIFY runs the suite again rather than trusting GREEN's run.
    const breaksTests: AgentTurn = { write: { [ADD.implFile]: stubImpl(ADD) } };
    const h = await setUp({
      script: cycleScript({ GREEN: [greenTurn(ADD, '// LINT-ERROR\n')], FIX: [breaksTests, greenTurn(ADD)] }),
    });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(trace(run.events)).toContain('stage-end RE_VERIFY#1 rejected (tests-failing)');
    expect(String(h.agent.callsOf('FIX')[1]?.variables.feedback)).toMatch(/Failing tests/);
  });
});
