/**
 * The documented flows that start a run from a file Ratchet itself just wrote into the checkout:
 * `tasks plan spec.md` then `tasks run tasks.json` then `accept` (on a Python package with a
 * `src/` layout, as tomli has), the specification uncommitted too, and `plan --output plan.json` then `solve --plan plan.json`. The
 * file, untracked, is an input of the run, not a change of the user's: neither the start nor the
 * accept may refuse it, while an untracked file at a path the run writes still stops `accept`.
 * Accept and reject also leave none of the task branches and worktree folders behind.
 */
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { NOTES_REF } from '../../src/core/handoff.js';
import { bodySchema, textOf } from '../support/anthropic-request.js';
import {
  startFakeAnthropicServer,
  type AnthropicReply,
  type FakeAnthropicServer,
  type RecordedRequest,
} from '../support/fake-anthropic-server.js';
import { ANTHROPIC_FLAGS, checkoutState, createProjectRepo, E2E_API_KEY, ratchetEnv } from '../support/e2e-run.js';
import type { ProjectRepo } from '../support/e2e-run.js';
import { describeResult, parseNdjson, runCli } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { anthropicSolveBrain, SOLVE_FILES, SOLVE_TASK } from '../support/solve-fixture.js';
import { createTasksBrain, type BrainTask } from '../support/tasks-brain.js';
import { toolchain } from '../support/toolchains.js';

const pytest = toolchain('pytest');
const sandbox = sandboxForThisMachine();

/** A dependency-free package under `src/`, importable by its tests through pytest's `pythonpath`. */
const PACKAGE = {
  'pyproject.toml':
    '[project]\nname = "minitoml"\nversion = "1.0"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\n',
  'src/minitoml/__init__.py': 'from minitoml._parse import loads\n\n__all__ = ["loads"]\n',
  'src/minitoml/_parse.py':
    'def loads(text: str) -> dict:\n    key, _, value = text.partition("=")\n    return {key.strip(): int(value)}\n',
  'tests/__init__.py': '',
  'tests/test_parse.py':
    'from minitoml import loads\n\n\ndef test_loads_one_integer():\n    assert loads("a = 1") == {"a": 1}\n',
};
/** The specification, written by the user and not committed (as the tasks file planned from it). */
const SPEC =
  '# Writing\n1. format_key(key): bare keys as they are, others quoted.\n2. dumps(table), using format_key.\n';

type PlannedTask = BrainTask & { dependsOn: string[] };

function pythonTask(key: string, name: string, test: string, impl: string, dependsOn: string[] = []): PlannedTask {
  return {
    key,
    dependsOn,
    testFile: `tests/test_${name}.py`,
    implFile: `src/minitoml/_${name}.py`,
    // RED's stub, so the new test fails by assertion rather than by a missing module.
    weakStub: `def ${name}(value):\n    return ""\n`,
    test,
    impl,
  };
}

const FORMAT_KEY = pythonTask(
  'KEY',
  'format_key',
  'from minitoml._format_key import format_key\n\n\ndef test_bare_and_quoted():\n    assert format_key("a-1") == "a-1"\n    assert format_key("a b") == \'"a b"\'\n',
  'import re\n\n\ndef format_key(value):\n    return value if re.fullmatch(r"[A-Za-z0-9_-]+", value) else \'"\' + value + \'"\'\n',
);
const DUMPS = pythonTask(
  'DUMPS',
  'dumps',
  'from minitoml._dumps import dumps\n\n\ndef test_one_line_a_key():\n    assert dumps({"a b": 1, "c": 2}) == \'"a b" = 1\\nc = 2\\n\'\n',
  'from minitoml._format_key import format_key\n\n\ndef dumps(value):\n    return "".join(f"{format_key(k)} = {v}\\n" for k, v in value.items())\n',
  ['KEY'],
);
const TASKS = [FORMAT_KEY, DUMPS];
/** The task of a second run. */
const QUOTE = pythonTask(
  'QUOTE',
  'quote',
  'from minitoml._quote import quote\n\n\ndef test_quotes():\n    assert quote("a") == \'"a"\'\n',
  "def quote(value):\n    return '\"' + value + '\"'\n",
);

/** A tasks file of `tasks`, as `tasks plan` writes it. */
function tasksJson(tasks: readonly PlannedTask[]): string {
  return `${JSON.stringify(
    {
      tasks: tasks.map((task) => ({
        key: task.key,
        title: `The ${task.key} function`,
        goal: `Write ${task.implFile}`,
        acceptanceCriteria: ['its test passes'],
        testFile: task.testFile,
        implFile: task.implFile,
        dependsOn: task.dependsOn,
        exports: [],
      })),
    },
    null,
    2,
  )}\n`;
}

/** DECOMPOSE answers with the two tasks; every other stage is the tasks brain's. */
function plannerAndTasksBrain(): { reply: (request: RecordedRequest) => AnthropicReply; unexpected: string[] } {
  const tasks = createTasksBrain([...TASKS, QUOTE]);
  return {
    unexpected: tasks.unexpected,
    reply(request) {
      if (!textOf(bodySchema.parse(request.body).system).startsWith('Stage: DECOMPOSE')) return tasks.reply(request);
      const answer: unknown = JSON.parse(tasksJson(TASKS));
      return { kind: 'message', content: [{ type: 'tool_use', name: 'StructuredOutput', input: answer }] };
    },
  };
}

const runIdOf = (stdout: string): string =>
  z.object({ runId: z.string() }).parse(parseNdjson(stdout).find((event) => event.type === 'run-start')).runId;

/** What a run may leave once accepted or rejected: its task branches and their worktree folder are gone. */
function leftovers(repo: ProjectRepo, runId: string): { branches: string; tasksFolder: boolean; worktrees: string[] } {
  return {
    branches: repo.run('branch', '--list', `ratchet/${runId}*`),
    tasksFolder: existsSync(join(repo.home, 'worktrees', `${runId}-tasks`)),
    worktrees: repo
      .run('worktree', 'list', '--porcelain')
      .split('\n')
      .filter((line) => line.startsWith('worktree ')),
  };
}

describe.skipIf(pytest.missing)(
  `tasks plan -> tasks run -> accept with the planned tasks file uncommitted (Python src/ layout)${pytest.note}${sandbox.note}`,
  () => {
    let server: FakeAnthropicServer;
    let repo: ProjectRepo;
    let env: Record<string, string>;
    const brain = plannerAndTasksBrain();

    beforeAll(async () => {
      server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
      server.setFallback((request) => brain.reply(request));
      repo = await createProjectRepo(PACKAGE);
      await writeFile(join(repo.dir, 'spec.md'), SPEC);
      env = ratchetEnv(repo, server);
    });
    afterAll(async () => {
      await server.close();
      await repo.cleanup();
    });

    const tasksRun = (file: string) =>
      runCli(
        ['tasks', 'run', file, '--workers', '2', '--refactor', 'never', ...ANTHROPIC_FLAGS, ...sandbox.flags, '--json'],
        {
          cwd: repo.dir,
          env,
          timeoutMs: 240_000,
        },
      );

    it('starts from the tasks file it just wrote, and accepts beside it, but not over an untracked file the run writes', async () => {
      const planned = await runCli(['tasks', 'plan', 'spec.md', ...ANTHROPIC_FLAGS], { cwd: repo.dir, env });
      expect(planned.exitCode, describeResult(planned)).toBe(0);
      const tasksFile = await readFile(join(repo.dir, 'tasks.json'), 'utf8');
      // The tasks file names the specification it came from, so the run exempts both.
      expect(JSON.parse(tasksFile)).toMatchObject({ spec: 'spec.md' });
      expect(repo.run('status', '--porcelain')).toBe('?? spec.md\n?? tasks.json');

      const run = await tasksRun('tasks.json');
      expect(run.exitCode, describeResult(run)).toBe(0);
      expect(brain.unexpected).toEqual([]);
      const runId = runIdOf(run.stdout);
      expect(leftovers(repo, runId).branches).toContain(`ratchet/${runId}-KEY-1`);

      // An untracked file where the run adds one would be overwritten, or stop git half-way: refused.
      const before = checkoutState(repo);
      await writeFile(join(repo.dir, FORMAT_KEY.implFile), '# mine\n');
      const refused = await runCli(['accept', runId, '--yes'], { cwd: repo.dir, env });
      expect(refused.exitCode, describeResult(refused)).toBe(2);
      expect(refused.stderr).toContain(`would mix with: ${FORMAT_KEY.implFile}`);
      expect(refused.stderr).toContain('git stash -u');
      expect(repo.run('rev-parse', 'HEAD')).toBe(before.head);
      expect(await readFile(join(repo.dir, FORMAT_KEY.implFile), 'utf8')).toBe('# mine\n');
      await rm(join(repo.dir, FORMAT_KEY.implFile));

      const accepted = await runCli(['accept', runId, '--yes'], { cwd: repo.dir, env });
      expect(accepted.exitCode, describeResult(accepted)).toBe(0);
      for (const task of TASKS) expect(await readFile(join(repo.dir, task.implFile), 'utf8')).toBe(task.impl);
      // The project ignores nothing: no bytecode cache a test run wrote was committed (nor stopped a merge).
      expect(repo.run('ls-tree', '-r', '--name-only', 'HEAD')).not.toContain('__pycache__');
      // The tasks file and the specification are still there, as they were, still untracked.
      expect(repo.run('status', '--porcelain')).toBe('?? spec.md\n?? tasks.json');
      expect(await readFile(join(repo.dir, 'spec.md'), 'utf8')).toBe(SPEC);
      expect(await readFile(join(repo.dir, 'tasks.json'), 'utf8')).toBe(tasksFile);
      // The task branches are merged into the accepted history: none is left, nor their worktrees' folder.
      expect(leftovers(repo, runId)).toEqual({ branches: '', tasksFolder: false, worktrees: [`worktree ${repo.dir}`] });
    }, 300_000);

    it('reject drops the task branches, their worktrees folder and the handoff notes of their commits', async () => {
      await rm(join(repo.dir, 'tasks.json'));
      // A hand-written tasks file may name its (still uncommitted) specification too.
      await writeFile(
        join(repo.dir, 'more.json'),
        JSON.stringify({ spec: 'spec.md', ...JSON.parse(tasksJson([QUOTE])) }),
      );
      const head = repo.run('rev-parse', 'HEAD');
      const run = await tasksRun('more.json');
      expect(run.exitCode, describeResult(run)).toBe(0);
      const runId = runIdOf(run.stdout);
      const taskCommits = repo.run('rev-list', `${head}..ratchet/${runId}-QUOTE-1`).split('\n');
      const noted = (): string[] =>
        repo
          .run('notes', `--ref=${NOTES_REF}`, 'list')
          .split('\n')
          .map((line) => line.split(' ')[1] ?? '')
          .filter((sha) => taskCommits.includes(sha));
      expect(noted()).not.toEqual([]);

      const rejected = await runCli(['reject', runId, '--yes'], { cwd: repo.dir, env });
      expect(rejected.exitCode, describeResult(rejected)).toBe(0);
      expect(leftovers(repo, runId)).toEqual({ branches: '', tasksFolder: false, worktrees: [`worktree ${repo.dir}`] });
      expect(noted()).toEqual([]);
      expect(repo.run('rev-parse', 'HEAD')).toBe(head);
    }, 300_000);
  },
);

describe(`ratchet plan --output plan.json, then solve --plan plan.json with the plan uncommitted${sandbox.note}`, () => {
  let server: FakeAnthropicServer;
  let repo: ProjectRepo;

  beforeAll(async () => {
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    server.setFallback(anthropicSolveBrain);
    repo = await createProjectRepo(SOLVE_FILES);
  });
  afterAll(async () => {
    await server.close();
    await repo.cleanup();
  });

  it('starts the solve run from the plan it just wrote in the checkout, and leaves it there', async () => {
    const env = ratchetEnv(repo, server);
    const flags = [...ANTHROPIC_FLAGS, '--stages', 'scope', ...sandbox.flags];
    const planned = await runCli(['plan', SOLVE_TASK, '--output', 'plan.json', ...flags], { cwd: repo.dir, env });
    expect(planned.exitCode, describeResult(planned)).toBe(0);
    expect(repo.run('status', '--porcelain')).toBe('?? plan.json');
    const plan = await readFile(join(repo.dir, 'plan.json'), 'utf8');

    const solved = await runCli(['solve', SOLVE_TASK, '--plan', 'plan.json', ...flags, '--json'], {
      cwd: repo.dir,
      env,
    });
    expect(solved.exitCode, describeResult(solved)).toBe(0);
    const runId = runIdOf(solved.stdout);
    expect(repo.run('show', `ratchet/${runId}:src/stats.js`)).toContain('export function median');
    // The plan is no part of the run: not on its branch, and still in the checkout as it was.
    expect(() => repo.run('show', `ratchet/${runId}:plan.json`)).toThrow();
    expect(await readFile(join(repo.dir, 'plan.json'), 'utf8')).toBe(plan);

    // Another untracked file still refuses a start, naming only it.
    await writeFile(join(repo.dir, 'notes.txt'), 'mine\n');
    const refused = await runCli(['solve', SOLVE_TASK, '--plan', 'plan.json', ...flags], { cwd: repo.dir, env });
    expect(refused.exitCode, describeResult(refused)).toBe(2);
    expect(refused.stderr).toContain('The working tree has 1 uncommitted change (1 untracked).');
    expect(refused.stderr).toContain('Commit or stash them (notes.txt)');
  }, 240_000);
});
