/**
 * Issue 11, finding 8: with the checkout's `.venv` linked into the worktree and the project
 * installed there in editable mode, the worktree's tests imported the checkout's code (the
 * baseline said 15 passed, 51 failed for a clean worktree). The built CLI on a src-layout pytest
 * project with a real editable install (test/support/python-venv.ts) and a scripted model: RED's
 * test imports the function RED adds to the worktree's package, which the checkout does not
 * have. The run completes only when the code under test is the worktree's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANTHROPIC_FLAGS,
  checkoutState,
  createProjectRepo,
  describeStage,
  ratchetEnv,
  startScriptedModel,
  type ProjectRepo,
  type ScriptedModel,
} from '../support/e2e-run.js';
import { editableInstall } from '../support/python-venv.js';
import { assertFreshBuild, describeResult } from '../support/run-cli.js';
import { planSteps, say, write } from '../support/scripted-brain.js';
import { runTdd, type TddRun } from '../support/tdd-e2e-run.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { toolchain } from '../support/toolchains.js';

const ITEM = 'multiply returns the product of two numbers';
const INIT = 'src/calc/__init__.py';
const ADD = '"""A calculator."""\n\n\ndef add(a, b):\n    return a + b\n';

const FILES: Record<string, string> = {
  'pyproject.toml': `[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "1.0"

[tool.pytest.ini_options]
testpaths = ["tests"]
`,
  [INIT]: ADD,
  'tests/test_add.py': 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n',
  '.gitignore': '.venv/\n__pycache__/\n*.egg-info/\n.pytest_cache/\n',
  // The venv's own pytest (Debian's, seen through --system-site-packages), as a project runs it.
  '.ratchet/config.toml': '[test]\ncommand = ".venv/bin/python -m pytest"\n\n[tdd]\nrefactor = "never"\n',
};

/** The finding is about which code the tests import, not the sandbox: where bubblewrap is missing the run opts out. */
const sandbox = sandboxForThisMachine();

const python = toolchain('python3-venv', 'python3-pytest');

describe.skipIf(python.missing)(
  `an editable install in the shared .venv: the worktree tests its own code${python.note}${sandbox.note}`,
  () => {
    let repo: ProjectRepo;
    let model: ScriptedModel;
    let run: TddRun;

    beforeAll(async () => {
      assertFreshBuild();
      repo = await createProjectRepo(sandbox.files(FILES));
      editableInstall(repo.dir);
      const test = 'from calc import multiply\n\n\ndef test_multiply():\n    assert multiply(2, 3) == 6\n';
      model = await startScriptedModel({
        items: [ITEM],
        steps: [
          ...planSteps('calc', [{ text: ITEM, testFile: 'tests/test_multiply.py', implFile: INIT }]),
          {
            stage: 'RED',
            test: ITEM,
            turns: [
              say(
                'Test and stub.',
                write('tests/test_multiply.py', test),
                write(INIT, `${ADD}\n\ndef multiply(a, b):\n    return 0\n`),
              ),
            ],
          },
          {
            stage: 'GREEN',
            test: ITEM,
            turns: [say('Multiply.', write(INIT, `${ADD}\n\ndef multiply(a, b):\n    return a * b\n`))],
          },
        ],
      });
      run = await runTdd(repo, ['Multiply', ...ANTHROPIC_FLAGS], {
        env: { ...ratchetEnv(repo, model.server), PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1' },
      });
    }, 240_000);

    afterAll(async () => {
      await (model as ScriptedModel | undefined)?.server.close();
      await (repo as ProjectRepo | undefined)?.cleanup();
    });

    it('RED fails on the assertion of the worktree code, GREEN passes, the run completes', () => {
      expect(model.brain.unexpected).toEqual([]);
      expect(run.result.exitCode, describeResult(run.result)).toBe(0);
      expect(run.ledger.stages.map((row) => describeStage(row, true))).toEqual([
        '1 PLAN#1 accepted',
        '1 RED#1 accepted 1 new failing test(s) by assertion: tests/test_multiply.py::test_multiply; 1 passing',
        '1 REVIEW_TESTS#1 accepted',
        '1 GREEN#1 accepted All 2 tests pass',
        '1 VERIFY#1 accepted All 2 tests pass; no lint/typecheck configured',
        '2 PLAN#1 accepted',
      ]);
    });

    it("leaves the user's checkout and its editable install as they were", () => {
      expect(checkoutState(repo)).toEqual(run.before);
      expect(repo.run('show', `HEAD:${INIT}`)).not.toContain('multiply');
    });
  },
);
