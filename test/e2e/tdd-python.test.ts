/**
 * End to end: the built CLI runs `ratchet tdd` on a pytest project through the REAL Anthropic
 * adapter and the scripted brain (test/support/tdd-script-python.ts). Without pytest on PATH the
 * suite is skipped and named in the run's summary (it fails under RATCHET_TEST_REQUIRE_ALL=1).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANTHROPIC_FLAGS,
  checkoutState,
  createProjectRepo,
  E2E_API_KEY,
  E2E_MODEL,
  filesContaining,
  modelCallRequests,
  ratchetEnv,
  startScriptedModel,
  type ProjectRepo,
  type ScriptedModel,
} from '../support/e2e-run.js';
import { assertFreshBuild } from '../support/run-cli.js';
import {
  comparedNote,
  cycleSubjects,
  expectPlayedAsScripted,
  noteBuilder,
  runTdd,
  stageLine,
  testListItems,
  type TddRun,
} from '../support/tdd-e2e-run.js';
import {
  PY_FEATURE,
  PY_FINAL_IMPL,
  PY_IMPL_FILE,
  PY_ITEMS,
  PY_PROJECT_FILES,
  PY_SCRIPT,
  PY_TEST_FILE,
} from '../support/tdd-script-python.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { toolchain } from '../support/toolchains.js';

const [SUBTRACT, DIVIDE] = PY_ITEMS;

/**
 * The project uses no pytest plugins; plugins installed on the machine (hypothesis, for one,
 * adds seconds to every start) stay out of its test runs.
 */
const PYTEST_ENV = { PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1' };

const pytest = toolchain('pytest');
/** The subject is the TDD loop on pytest, not the sandbox: where bubblewrap is missing the run opts out. */
const sandbox = sandboxForThisMachine();

describe.skipIf(pytest.missing)(
  `ratchet tdd on a pytest project (real Anthropic adapter, scripted model)${pytest.note}${sandbox.note}`,
  () => {
    let repo: ProjectRepo;
    let model: ScriptedModel;
    let run: TddRun;

    beforeAll(async () => {
      assertFreshBuild();
      repo = await createProjectRepo(PY_PROJECT_FILES);
      model = await startScriptedModel(PY_SCRIPT);
      // A flag, not a config file: the test checks every file of the branch.
      run = await runTdd(repo, [PY_FEATURE, ...ANTHROPIC_FLAGS, ...sandbox.flags], {
        env: { ...ratchetEnv(repo, model.server), ...PYTEST_ENV },
      });
    }, 150_000);

    afterAll(async () => {
      // Undefined when beforeAll failed early.
      await (model as ScriptedModel | undefined)?.server.close();
      await (repo as ProjectRepo | undefined)?.cleanup();
    });

    it('completes with exit code 0, playing every scripted step', () => {
      const { result, ledger } = run;
      expectPlayedAsScripted(model.brain, result);
      expect(model.brain.toolErrors.filter((error) => error.tool !== 'Bash')).toEqual([]);
      expect(ledger.run).toMatchObject({
        status: 'completed',
        provider: 'anthropic',
        model: E2E_MODEL,
        config: { testCommand: 'pytest', framework: 'pytest' },
      });
    });

    it('commits each accepted stage with a handoff note', () => {
      const { runId, commits, ledger } = run;
      expect(commits.map((commit) => commit.subject)).toEqual([
        ...cycleSubjects(SUBTRACT, true),
        ...cycleSubjects(DIVIDE, false),
        'plan: all tests done',
      ]);
      const note = noteBuilder(runId, PY_ITEMS, { testFile: PY_TEST_FILE, implFile: PY_IMPL_FILE });
      expect(commits.map((commit) => comparedNote(commit.note))).toEqual([
        note('PLAN', 'RED', 1, SUBTRACT, [], null, 0),
        note('RED', 'GREEN', 1, SUBTRACT, [], 'FAIL', 1),
        note('GREEN', 'REFACTOR', 1, SUBTRACT, [SUBTRACT], 'PASS', 0),
        note('REFACTOR', 'PLAN', 1, SUBTRACT, [SUBTRACT], 'PASS', 0),
        note('PLAN', 'RED', 2, DIVIDE, [SUBTRACT], null, 0),
        note('RED', 'GREEN', 2, DIVIDE, [SUBTRACT], 'FAIL', 1),
        note('GREEN', 'REFACTOR', 2, DIVIDE, [SUBTRACT, DIVIDE], 'PASS', 0),
        note('REFACTOR', 'PLAN', 2, DIVIDE, [SUBTRACT, DIVIDE], 'PASS', 1),
        note('PLAN', 'COMPLETE', 3, null, [SUBTRACT, DIVIDE], null, 0),
      ]);
      expect(ledger.checkpoints.map((row) => row.commitSha)).toEqual(commits.map((commit) => commit.sha));
    });

    it('ends with every item checked, the final code, and no bytecode committed', () => {
      const { runId } = run;
      const branch = `ratchet/${runId}`;
      expect(testListItems(repo, branch)).toEqual(PY_ITEMS.map((item) => `- [x] ${item}`));
      expect(`${repo.run('show', `${branch}:${PY_IMPL_FILE}`)}\n`).toBe(PY_FINAL_IMPL);
      expect(repo.run('ls-tree', '-r', '--name-only', branch).split('\n').sort()).toEqual([
        '.gitignore',
        'README.md',
        'calc.py',
        'pytest.ini',
        'test-list.md',
        'tests/test_calc.py',
      ]);
      expect(repo.run('log', '-p', branch, '--', PY_IMPL_FILE)).not.toContain('a // b');
    });

    it("leaves the user's checkout alone", () => {
      const { before } = run;
      expect(checkoutState(repo)).toEqual(before);
      expect(readFileSync(join(repo.dir, PY_IMPL_FILE), 'utf8')).toBe(PY_PROJECT_FILES[PY_IMPL_FILE]);
    });

    it('records the gate decisions, including the collection error and the rollback', () => {
      const { events, commits, ledger } = run;
      expect(ledger.stages.map(stageLine)).toEqual([
        '1 PLAN#1 accepted',
        '1 RED#1 rejected passed-immediately',
        '1 RED_FIX#2 accepted',
        '1 REVIEW_TESTS#2 accepted',
        '1 GREEN#1 accepted',
        '1 VERIFY#1 accepted',
        '1 REFACTOR#1 accepted',
        '1 RE_VERIFY#1 accepted',
        '2 PLAN#1 accepted',
        '2 RED#1 rejected collection-error',
        '2 RED_FIX#2 accepted',
        '2 REVIEW_TESTS#2 accepted',
        '2 GREEN#1 accepted',
        '2 VERIFY#1 accepted',
        '2 REFACTOR#1 rejected tests-failing',
        '2 RE_VERIFY#1 rejected tests-failing',
        '2 REFACTOR#2 accepted no changes',
        '3 PLAN#1 accepted',
      ]);
      const rollback = events.find((event) => event.type === 'checkpoint-rollback');
      expect(rollback).toMatchObject({ stage: 'REFACTOR', to: commits[6]?.sha, reason: 'tests-failing' });
    });

    it('records pytest results per test, model calls and tool calls', () => {
      const { ledger } = run;
      const collection = ledger.verifications.find((row) => row.stage === 'RED' && row.collectionErrors.length > 0);
      expect(collection?.collectionErrors.join('\n')).toMatch(/divide/);
      const divideFailure = ledger.verifications.find(
        (row) => row.stage === 'RED_FIX' && row.failingTests.some((test) => test.id.includes('test_divide')),
      );
      expect(divideFailure?.failingTests).toEqual([expect.objectContaining({ kind: 'assertion' })]);
      const lastGreen = ledger.verifications.filter((row) => row.kind === 'test' && row.stage === 'GREEN').at(-1);
      expect(lastGreen).toMatchObject({ failed: 0, passed: 3, total: 3 });
      const brokenRefactor = ledger.verifications.filter((row) => row.stage === 'RE_VERIFY').at(-1);
      expect(brokenRefactor?.failingTests).toEqual([
        expect.objectContaining({
          id: expect.stringContaining('test_divide_returns_the_quotient') as unknown,
          kind: 'assertion',
        }),
      ]);
      expect(ledger.modelCalls.length).toBe(modelCallRequests(model.server).length);
      expect(ledger.modelCalls.every((call) => call.errorCode === null && call.response !== null)).toBe(true);
      expect(ledger.toolCalls.map((call) => `${call.stage ?? '-'} ${call.tool}`)).toEqual(
        expect.arrayContaining([
          'PLAN Write',
          'RED Write',
          'RED Edit',
          'RED Bash',
          'RED_FIX Edit',
          'GREEN Edit',
          'REFACTOR Write',
          'REFACTOR Edit',
        ]),
      );
      const pytestRun = ledger.toolCalls.find((call) => call.tool === 'Bash');
      expect(pytestRun?.output).toMatch(/passed/);
    });

    it('keeps the API key out of the ledger and the run files', () => {
      const { result } = run;
      expect(filesContaining([join(repo.dir, '.ratchet'), repo.home], E2E_API_KEY)).toEqual([]);
      expect(existsSync(join(repo.dir, '.ratchet', 'ledger.db'))).toBe(true);
      expect(result.stdout).not.toContain(E2E_API_KEY);
      expect(result.stderr).not.toContain(E2E_API_KEY);
    });
  },
);
