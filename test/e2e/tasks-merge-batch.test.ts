/**
 * The batched merge's fallback: tasks that finish while the coordinator is busy merge together
 * with one run of the full suite; when that suite is red the batch is undone and its tasks merge
 * one at a time, so only the task that turns the suite red goes back (re-run on the new base,
 * then blocked), the others merge, and no commit of the run branch has a red suite.
 *
 * The project: `src/util.js` exports `upper` and `shout`. Z is a plain task whose test waits on
 * the run branch (where no task's test list is) while the harness holds it, so the coordinator is
 * still running the suite of Z's merge when A, B and X finish: the brain holds their last replies
 * until Z's merge commit exists, and the harness lets Z's suite end once all three have finished. A uses `upper`; B's first attempt rewrites `util.js` without `upper` (its own
 * tests pass, A's break once both are merged). B's re-run keeps `upper` but drops `shout`, which
 * C (after A) uses: the brain holds B's re-run until C merged, so that merge is red too. X, in
 * the same batch, rewrites `upper` (its merge conflicts with B's first attempt, not with the base):
 * once B is undone, X merges without a re-run.
 */
import { execFile as execFileCallback, spawnSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { createProjectRepo, E2E_API_KEY, ratchetEnv, type ProjectRepo } from '../support/e2e-run.js';
import { describeResult, parseNdjson, runCli, type CliResult } from '../support/run-cli.js';
import {
  createTasksBrain,
  letterTask,
  LETTERS_PROJECT,
  taskUpdatesOf,
  type TaskUpdate,
} from '../support/tasks-brain.js';
import { runTasksCli } from '../support/tasks-run-cli.js';

const execFile = promisify(execFileCallback);

const UTIL = {
  both: "export function upper(s) {\n  return s.toUpperCase();\n}\nexport function shout(s) {\n  return s.toUpperCase() + '!';\n}\n",
  shoutOnly: "export function shout(s) {\n  return s.toUpperCase() + '!';\n}\n",
  upperOnly: 'export function upper(s) {\n  return s.toUpperCase();\n}\n',
  /** X's: `upper` rewritten (a conflict with B's first attempt, which deletes it), `shout` as it was. */
  stringUpper:
    "export function upper(s) {\n  return String(s).toUpperCase();\n}\nexport function shout(s) {\n  return s.toUpperCase() + '!';\n}\n",
};

/** A letter task whose implementation is `body` (importing from util.js). */
function utilTask(key: string, value: string, body: string, dependsOn: string[] = []): ReturnType<typeof letterTask> {
  const name = key.toLowerCase();
  const imported = /\b(upper|shout)\(/.exec(body)?.[1] ?? 'upper';
  return {
    ...letterTask(key, value, dependsOn),
    impl: `import { ${imported} } from './util.js';\nexport function ${name}() {\n  return ${body};\n}\n`,
  };
}

/**
 * Z's test waits on the run branch only (no task's test list there) while `hold` exists: the
 * harness keeps the coordinator in the suite of Z's merge until A, B and X have finished. The hold
 * file is in the checkout's git directory, which the sandbox shows read-only and live.
 */
function heldZ(hold: string): ReturnType<typeof letterTask> {
  return {
    ...letterTask('Z', 'Z'),
    test: `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from '../src/z.js';
const HOLD = ${JSON.stringify(hold)};
test('z returns Z', async () => {
  if (!existsSync(new URL('../test-list.md', import.meta.url))) while (existsSync(HOLD)) await sleep(20);
  assert.equal(z(), 'Z');
});
`,
  };
}
const A = utilTask('A', 'A', "upper('a')");
const B = {
  ...letterTask('B', 'B'),
  extraFiles: (attempt: number) => ({ 'src/util.js': attempt === 1 ? UTIL.shoutOnly : UTIL.upperOnly }),
};
const X = { ...letterTask('X', 'X'), extraFiles: { 'src/util.js': UTIL.stringUpper } };
const C = utilTask('C', 'C!', "shout('c')", ['A']);

const RunEndSchema = z.object({ type: z.literal('run-end'), status: z.string() });
const SuiteSchema = z.object({
  type: z.literal('verify-end'),
  stage: z.string(),
  kind: z.string(),
  result: z.object({ exitCode: z.number().nullable() }),
});
const StatusSchema = z.object({
  run: z.object({ status: z.string() }),
  tasks: z.array(
    z.object({ key: z.string(), status: z.string(), attempts: z.number(), reason: z.string().nullable() }),
  ),
});

describe('ratchet tasks run: a batch of finished tasks whose merged suite is red', () => {
  let server: FakeAnthropicServer;
  let repo: ProjectRepo;
  let result: CliResult;
  let events: Array<Record<string, unknown>>;
  let updates: TaskUpdate[];
  let runId: string;

  /** Settles once commits with these subjects are on branches of the repository (polled: the run is another process). */
  async function committed(...subjects: string[]): Promise<void> {
    for (;;) {
      const { stdout } = await execFile('git', ['log', '--branches', '--format=%s'], { cwd: repo.dir, env: repo.env });
      const made = stdout.split('\n');
      if (subjects.every((subject) => made.includes(subject))) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  beforeAll(async () => {
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    repo = await createProjectRepo({ ...LETTERS_PROJECT, 'src/util.js': UTIL.both });
    const hold = join(repo.dir, '.git', 'ratchet-hold-merge');
    await writeFile(hold, 'held\n');
    const tasks = [heldZ(hold), A, B, X, C];
    // Z's merge suite goes on once A, B and X committed their last commit (and pushed their end,
    // a moment later): their three ends then wait together for the scheduler, which merges them as one batch.
    const dropped = (key: string) => `chore: ${key} done, its test list dropped`;
    void Promise.race([
      committed(dropped('A'), dropped('B'), dropped('X')).then(
        () => new Promise((resolve) => setTimeout(resolve, 1000)),
      ),
      new Promise((resolve) => setTimeout(resolve, 180_000)),
    ]).then(() => rm(hold, { force: true }));
    const brain = createTasksBrain(tasks, {
      holdLast(key, attempt) {
        if (['A', 'B', 'X'].includes(key) && attempt === 1) return committed('merge: Z Letter Z');
        if (key === 'B' && attempt === 2) return committed('merge: C Letter C');
        return undefined;
      },
    });
    server.setFallback((request) => brain.reply(request));
    result = await runTasksCli(repo, server, tasks, { workers: 4, timeoutMs: 400_000, flags: ['--max-attempts', '1'] });
    events = parseNdjson(result.stdout);
    updates = taskUpdatesOf(events);
    runId = z.object({ runId: z.string() }).parse(events.find((event) => event.type === 'run-start')).runId;
    expect(brain.unexpected).toEqual([]);
  }, 420_000);

  afterAll(async () => {
    await server.close();
    await repo.cleanup();
  });

  it('ends partial: Z, A, X and C merged once, B re-ran once and is blocked', async () => {
    expect(result.exitCode, describeResult(result)).toBe(1);
    const end = RunEndSchema.parse(events.find((event) => event.type === 'run-end'));
    expect(end.status).toBe('partial');
    expect(JSON.stringify(events.find((event) => event.type === 'run-end'))).toContain('partial: 4 of 5 tasks merged');
    const starts = (key: string): number[] =>
      updates.filter((update) => update.task === key && update.status === 'running').map((update) => update.attempt);
    // Only the task that turns the suite red goes back; the others of its batch run once, X too
    // (its conflict was with B's undone merge).
    expect({ Z: starts('Z'), A: starts('A'), B: starts('B'), X: starts('X'), C: starts('C') }).toEqual({
      Z: [1],
      A: [1],
      B: [1, 2],
      X: [1],
      C: [1],
    });
    const pending = updates.filter((update) => update.status === 'pending');
    expect(pending.map((update) => [update.task, update.attempt])).toEqual([['B', 1]]);
    expect(pending[0]?.reason).toMatch(/^the full suite failed after its merge .*: re-run on the new base$/);
    const blocked = updates.find((update) => update.status === 'blocked');
    expect(blocked).toMatchObject({ task: 'B', attempt: 2 });
    expect(blocked?.reason).toMatch(/^the full suite failed after its merge .*, after 2 attempts$/);

    const env = ratchetEnv(repo, server);
    const status = StatusSchema.parse(
      JSON.parse((await runCli(['tasks', 'status', runId, '--json'], { cwd: repo.dir, env })).stdout),
    );
    expect(status.run.status).toBe('partial');
    expect(status.tasks.map((task) => [task.key, task.status, task.attempts])).toEqual([
      ['Z', 'merged', 1],
      ['A', 'merged', 1],
      ['B', 'blocked', 2],
      ['X', 'merged', 1],
      ['C', 'merged', 1],
    ]);
    const plain = await runCli(['tasks', 'status', runId], { cwd: repo.dir, env });
    expect(plain.stdout).toMatch(
      /^B\s+blocked\s+attempts 2 .*\n\s+the full suite failed after its merge \(tests-failing\), after 2 attempts$/m,
    );
  });

  it('merged A, B and X together, and on the red suite undid them and merged them one at a time', () => {
    // The coordinator's full-suite runs (a task's own have its key) between B's first finish and its requeue.
    const index = (key: string, status: string): number =>
      events.findIndex((event) => event.type === 'task-update' && event.task === key && event.status === status);
    const doneA = index('A', 'done');
    const doneB = index('B', 'done');
    const doneX = index('X', 'done');
    const lastDone = Math.max(doneA, doneB, doneX);
    expect(lastDone).toBeLessThan(index('A', 'merged'));
    const suites = events
      .slice(lastDone, index('X', 'merged'))
      .flatMap((event) => (event.type === 'verify-end' && event.task === undefined ? [SuiteSchema.parse(event)] : []));
    // One run for the batch (red), then A alone (green), B alone (red), X alone (green).
    expect(suites.map((suite) => (suite.result.exitCode === 0 ? 'green' : 'red'))).toEqual([
      'red',
      'green',
      'red',
      'green',
    ]);
  });

  it('left no commit with a red suite on the run branch, and only the merges of Z, A, X and C', () => {
    const branch = `ratchet/${runId}`;
    const base = repo.run('rev-parse', 'main');
    const commits = repo.run('rev-list', '--first-parent', '--reverse', `${base}..${branch}`).split('\n');
    expect(commits.map((commit) => repo.run('log', '-1', '--format=%s', commit))).toEqual([
      'merge: Z Letter Z',
      'merge: A Letter A',
      'merge: X Letter X',
      'merge: C Letter C',
    ]);
    for (const commit of commits) {
      const tree = repo.path(`check-${commit.slice(0, 8)}`);
      repo.run('worktree', 'add', '--detach', tree, commit);
      const suite = spawnSync(process.execPath, ['--test'], { cwd: tree, encoding: 'utf8' });
      expect(suite.status, `${commit}: ${suite.stdout}`).toBe(0);
    }
    // The branch holds util.js as X left it, with both functions (neither of B's rewrites landed).
    expect(`${repo.run('show', `${branch}:src/util.js`)}\n`).toBe(UTIL.stringUpper);
  });
});
