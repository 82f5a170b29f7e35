import { describe, expect, it } from 'vitest';
import type { AgentScript, AgentTurn } from '../support/fake-tdd-ports.js';
import { judgePlan } from '../../src/workflows/tdd/plan-stage.js';
import { parseTestList } from '../../src/workflows/tdd/test-list.js';
import {
  ADD,
  LIST,
  LIST_ADD_DONE,
  LIST_TEXT,
  SUB,
  eventsOf,
  greenTurn,
  happyScript,
  planTurn,
  redTurn,
  trace,
} from '../support/fake-tdd-harness.js';
import { useHarness } from '../support/fake-tdd-suite.js';

const setUp = useHarness();

interface RejectionCase {
  name: string;
  /** The list committed before the run (none: PLAN must create it). */
  list: string | null;
  bad: AgentTurn;
  reason: string;
  feedback: RegExp;
  /** The rest of the run once PLAN gets it right. */
  script: AgentScript;
}

const fromScratch = happyScript();
const withList: AgentScript = {
  ...happyScript(),
  PLAN: [planTurn(ADD, null), planTurn(SUB, null), planTurn(null, null)],
};
const afterAdd: AgentScript = {
  PLAN: [planTurn(SUB, null), planTurn(null, null)],
  RED: [redTurn(SUB)],
  GREEN: [greenTurn(SUB)],
  REFACTOR: [{}],
};

const CASES: RejectionCase[] = [
  {
    name: 'no test list',
    list: null,
    bad: planTurn(ADD, null),
    reason: 'no-test-list',
    feedback: /test-list\.md does not exist\. Create it/,
    script: fromScratch,
  },
  {
    name: 'a list without checkboxes',
    list: null,
    bad: planTurn(ADD, '# Calculator\n\n- adds two numbers\n'),
    reason: 'empty-test-list',
    feedback: /has no "- \[ \] \.\.\." checkbox items/,
    script: fromScratch,
  },
  {
    name: 'an item checked by the agent',
    list: LIST_TEXT,
    bad: planTurn(SUB, LIST_ADD_DONE),
    reason: 'checked-by-agent',
    feedback: /Do not mark items \[x\].*Uncheck: adds two numbers/,
    script: withList,
  },
  {
    name: 'a done item unchecked by the agent',
    list: LIST_ADD_DONE,
    bad: planTurn(ADD, LIST_TEXT),
    reason: 'done-items-changed',
    feedback: /Restore: - \[x\] adds two numbers/,
    script: afterAdd,
  },
  {
    name: 'a done item deleted by the agent',
    list: LIST_ADD_DONE,
    bad: planTurn(SUB, `- [ ] ${SUB.description}\n`),
    reason: 'done-items-changed',
    feedback: /Restore: - \[x\] adds two numbers/,
    script: afterAdd,
  },
  {
    name: 'null while items are pending',
    list: LIST_TEXT,
    bad: planTurn(null, null),
    reason: 'pending-items-remain',
    feedback: /currentTest is null but these items are unchecked: adds two numbers; subtracts two numbers/,
    script: withList,
  },
  {
    name: 'an unknown item',
    list: LIST_TEXT,
    bad: planTurn({ ...ADD, description: 'multiplies two numbers' }, null),
    reason: 'unknown-item',
    feedback: /exact text of an unchecked item.*"adds two numbers", "subtracts two numbers"/,
    script: withList,
  },
  {
    name: 'a test path outside the repository',
    list: LIST_TEXT,
    bad: planTurn({ ...ADD, testFile: '../x.test.ts' }, null),
    reason: 'bad-paths',
    feedback: /relative to the repository root, without "\.\."/,
    script: withList,
  },
  {
    name: 'an absolute implementation path',
    list: LIST_TEXT,
    bad: planTurn({ ...ADD, implFile: '/etc/add.ts' }, null),
    reason: 'bad-paths',
    feedback: /without "\.\."/,
    script: withList,
  },
  {
    name: 'a nested `..` segment',
    list: LIST_TEXT,
    bad: planTurn({ ...ADD, implFile: 'src/../../add.ts' }, null),
    reason: 'bad-paths',
    feedback: /without "\.\."/,
    script: withList,
  },
  {
    name: 'the test in the implementation file (Rust inline tests): GREEN could never change it',
    list: LIST_TEXT,
    bad: planTurn({ ...ADD, testFile: 'src/lib.rs', implFile: './src/lib.rs' }, null),
    reason: 'bad-paths',
    feedback: /same file \(src\/lib\.rs\).*integration test under tests\//,
    script: withList,
  },
  {
    name: 'no structured output',
    list: LIST_TEXT,
    bad: {},
    reason: 'no-output',
    feedback: /StructuredOutput/,
    script: withList,
  },
  {
    name: 'output not matching the schema',
    list: LIST_TEXT,
    bad: { output: { currentTest: { description: '' } } },
    reason: 'invalid-output',
    feedback: /Invalid structured output/,
    script: withList,
  },
  {
    name: 'a change outside the test list',
    list: LIST_TEXT,
    bad: { ...planTurn(ADD, null), shell: { 'src/add.ts': 'export const add = (a, b) => a + b;\n' } },
    reason: 'path-violation',
    feedback: /^PLAN may not change src\/add\.ts \(writable: test-list\.md\)\. Those changes were undone/,
    script: withList,
  },
  {
    name: 'the turn limit',
    list: LIST_TEXT,
    bad: { status: 'turn-limit', message: 'Stopped after 7 model turns' },
    reason: 'turn-limit',
    feedback: /Stopped after 7 model turns/,
    script: withList,
  },
];

describe('PLAN: the deterministic judge', () => {
  it.each(CASES)(
    'rejects $name, discards the attempt and retries with feedback',
    async ({ list, bad, reason, feedback, script }) => {
      const files = { 'README.md': '# calculator\n', ...(list === null ? {} : { [LIST]: list }) };
      const { PLAN = [], ...rest } = script;
      const harness = await setUp({ files, script: { ...rest, PLAN: [bad, ...PLAN] } });
      const run = await harness.run();

      expect(run.error).toBeUndefined();
      expect(trace(run.events).slice(0, 4)).toEqual([
        'cycle-start 1',
        'verify-end PLAN baseline',
        'stage-start PLAN#1',
        `stage-end PLAN#1 rejected (${reason})`,
      ]);
      const [first, second] = harness.agent.callsOf('PLAN');
      expect(second?.variables.attempt).toBe(2);
      expect(String(second?.variables.feedback)).toMatch(feedback);
      // The rejected attempt's edits are gone: the retry starts from the committed list.
      expect(second?.treeAtStart).toEqual(first?.treeAtStart);
      // The accepted PLAN records its retry.
      const plan = harness.workspace.commits[1];
      expect(plan?.subject).toMatch(/^plan: /);
      expect(harness.workspace.noteOn(plan?.sha ?? '')).toMatchObject({
        phase: 'PLAN',
        nextPhase: 'RED',
        cycleNumber: 1,
        retryCount: 1,
      });
      expect(harness.agent.unusedTurns()).toEqual({});
    },
  );

  it('commits what was already changed before PLAN started (output of a test run, say) without blaming the agent', async () => {
    const harness = await setUp({ files: { 'README.md': '# calculator\n', [LIST]: LIST_TEXT }, script: withList });
    await harness.workspace.writeFile('coverage/last-run.json', '{}\n');
    const run = await harness.run();

    expect(run.error).toBeUndefined();
    expect(trace(run.events).slice(0, 4)).toEqual([
      'cycle-start 1',
      'verify-end PLAN baseline',
      'stage-start PLAN#1',
      'plan-select adds two numbers',
    ]);
    expect(harness.workspace.commits[1]?.subject).toMatch(/^plan: /);
    expect(harness.workspace.commits[1]?.files.get('coverage/last-run.json')).toBe('{}\n');
  });

  it('accepts a description that differs only in case, spacing and emphasis, and records the list`s text', async () => {
    const script = happyScript();
    const harness = await setUp({
      script: {
        ...script,
        PLAN: [planTurn({ ...ADD, description: '  Adds  **two** numbers.' }), ...(script.PLAN ?? []).slice(1)],
      },
    });
    const run = await harness.run();
    expect(run.error).toBeUndefined();
    expect(eventsOf(run.events, 'plan-select')[0]?.test).toBe(ADD.description);
    expect(harness.workspace.commits[1]?.subject).toBe('plan: adds two numbers');
    expect(harness.workspace.noteOn(harness.workspace.commits[1]?.sha ?? '').currentTest).toEqual(ADD);
  });

  it('fails the run after three rejections without a note on the base commit, and starts over on resume', async () => {
    const unknown = planTurn({ ...ADD, description: 'divides by zero' });
    const harness = await setUp({ script: { PLAN: [unknown, unknown, unknown] } });
    const failed = await harness.run();

    expect(failed.error?.code).toBe('gate-failed');
    expect(failed.error?.message).toBe(
      'PLAN failed after 3 attempts: unknown-item (currentTest.description must be the exact text of an unchecked item of test-list.md. Unchecked items: "adds two numbers", "subtracts two numbers")',
    );
    expect(failed.error?.details).toEqual({ phase: 'PLAN', reason: 'unknown-item' });
    expect(harness.workspace.subjects()).toEqual(['initial']);
    expect(await harness.workspace.hasChanges()).toBe(false);
    // The base commit is the user's: no checkpoint of the run exists yet, so no note is written
    // (another run from the same commit would lose its own); the error is the ledger's.
    expect(() => harness.workspace.headNote()).toThrow();
    expect(eventsOf(failed.events, 'note-write')).toEqual([]);
    expect(trace(failed.events).filter((line) => line.startsWith('stage-end'))).toEqual([
      'stage-end PLAN#1 rejected (unknown-item)',
      'stage-end PLAN#2 rejected (unknown-item)',
      'stage-end PLAN#3 rejected (unknown-item)',
    ]);

    harness.agent.append(happyScript());
    const resumed = await harness.run();
    expect(resumed.error).toBeUndefined();
    expect(eventsOf(resumed.events, 'cycle-start').map((event) => event.cycle)).toEqual([1, 2, 3]);
    const plan = harness.workspace.commitWithSubject('plan: adds two numbers');
    expect(harness.workspace.noteOn(plan.sha)).toMatchObject({
      cycleNumber: 1,
      error: null,
      errorDetails: null,
      retryCount: 0,
    });
  });
});

describe('PLAN: a failure before the first checkpoint', () => {
  it('keeps what was wrong with the model`s output in the error (no note can keep it)', async () => {
    const invalid = (problem: string): AgentTurn => ({
      status: 'invalid-output',
      message: `The agent finished without a valid structured result. ${problem}`,
    });
    const harness = await setUp({
      script: {
        PLAN: [
          invalid('Your reply contains no JSON result.'),
          invalid('Your reply contains no JSON result.'),
          invalid('The JSON in your reply does not match the schema:\n- currentTest.testFile: expected string'),
        ],
      },
    });
    const failed = await harness.run();

    expect(failed.error?.code).toBe('gate-failed');
    // The last attempt's problem, on one line.
    expect(failed.error?.message).toBe(
      'PLAN failed after 3 attempts: invalid-output (The agent finished without a valid structured result. The JSON in your reply does not match the schema: - currentTest.testFile: expected string)',
    );
    expect(failed.error?.details).toEqual({ phase: 'PLAN', reason: 'invalid-output' });
    expect(harness.workspace.subjects()).toEqual(['initial']);
    expect(eventsOf(failed.events, 'note-write')).toEqual([]);
  });

  it('cuts a long explanation short', async () => {
    const long = `The agent finished without a valid structured result. ${'x'.repeat(1000)}`;
    const turn: AgentTurn = { status: 'turn-limit', message: long };
    const harness = await setUp({ script: { PLAN: [turn, turn, turn] } });
    const failed = await harness.run();
    const message = failed.error?.message ?? '';
    expect(message.startsWith('PLAN failed after 3 attempts: turn-limit (The agent finished without')).toBe(true);
    expect(message.endsWith('x…)')).toBe(true);
    expect(message.length).toBeLessThan(400);
  });
});

describe('judgePlan', () => {
  const before = parseTestList(LIST_ADD_DONE);

  it('accepts the next pending item and returns the parsed list', () => {
    const verdict = judgePlan(before, LIST_ADD_DONE, { currentTest: SUB });
    expect(verdict).toEqual({ ok: true, test: SUB, items: parseTestList(LIST_ADD_DONE) });
  });

  it('accepts null once every item is checked', () => {
    const all = `- [x] ${ADD.description}\n- [x] ${SUB.description}\n`;
    expect(judgePlan(parseTestList(all), all, { currentTest: null })).toMatchObject({ ok: true, test: null });
  });

  it('lets the agent append and split pending items', () => {
    const grown = `${LIST_ADD_DONE}- [ ] subtracts negative numbers\n`;
    expect(judgePlan(before, grown, { currentTest: SUB })).toMatchObject({ ok: true, test: SUB });
    // The pending SUB item gives way to two narrower ones, and PLAN picks one of them.
    const split = `# Calculator\n\n- [x] ${ADD.description}\n- [ ] subtracts a smaller number\n- [ ] subtracts a larger number\n`;
    const narrower = { ...SUB, description: 'subtracts a larger number' };
    expect(judgePlan(before, split, { currentTest: narrower })).toEqual({
      ok: true,
      test: narrower,
      items: parseTestList(split),
    });
    expect(parseTestList(split).map((item) => item.text)).not.toContain(SUB.description);
  });

  it('checks the list before the output: a bad list is reported even without an answer', () => {
    expect(judgePlan(before, LIST_TEXT, undefined)).toMatchObject({ ok: false, reason: 'done-items-changed' });
    expect(judgePlan([], null, undefined)).toMatchObject({ ok: false, reason: 'no-test-list' });
  });
});

describe('PLAN in a task of a tasks run: the task owns its files', () => {
  const taskFiles = {
    task: 'ADD',
    testFile: ADD.testFile,
    implFile: ADD.implFile,
    ownedByOthers: { [SUB.implFile]: 'SUB', [SUB.testFile]: 'SUB' },
  };

  it('refuses a PLAN that names a file another task owns, says whose, and accepts the task`s own files next', async () => {
    const h = await setUp({
      script: {
        ...happyScript(),
        PLAN: [planTurn({ ...ADD, implFile: SUB.implFile }), planTurn(ADD), planTurn(SUB, null), planTurn(null, null)],
      },
      taskFiles,
    });
    const run = await h.run();

    const rejected = eventsOf(run.events, 'stage-end').find(
      (event) => event.stage === 'PLAN' && event.outcome === 'rejected',
    );
    expect(rejected).toMatchObject({ attempt: 1, reason: 'not-task-files' });
    expect(String(h.agent.callsOf('PLAN')[1]?.variables.feedback)).toBe(
      `Task ADD owns ${ADD.testFile} (its tests) and ${ADD.implFile} (its implementation): answer with exactly these files. implFile is ${SUB.implFile}, which task SUB owns; it must be ${ADD.implFile}.`,
    );
    expect(eventsOf(run.events, 'plan-select')[0]).toMatchObject({ testFile: ADD.testFile, implFile: ADD.implFile });
    expect(h.workspace.subjects()).toContain(`plan: ${ADD.description}`);
  });

  it('refuses files of its own choosing too, and fails PLAN after its attempts', async () => {
    const elsewhere = planTurn({ ...ADD, testFile: 'test/other.test.ts' });
    const h = await setUp({
      script: {
        PLAN: [elsewhere, elsewhere, elsewhere],
      },
      taskFiles,
    });
    const run = await h.run();

    expect(run.error?.message).toMatch(
      /^PLAN failed after 3 attempts: not-task-files \(Task ADD owns .*testFile is test\/other\.test\.ts; it must be src\/add\.test\.ts\.\)$/,
    );
    expect(h.agent.callsOf('RED')).toEqual([]);
  });
});
