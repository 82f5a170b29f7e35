/**
 * A tasks run that does not finish: a task that fails stops only its dependents (the run ends
 * `partial`, exit 1), `tasks retry` and `ratchet resume` finish it; and a coordinator killed with
 * SIGKILL after a merge is resumed to the end with every task merged exactly once.
 */
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { ANTHROPIC_FLAGS, createProjectRepo, E2E_API_KEY, ratchetEnv, type ProjectRepo } from '../support/e2e-run.js';
import { startCli } from '../support/resume-harness.js';
import { describeResult, parseNdjson, runCli } from '../support/run-cli.js';
import {
  createTasksBrain,
  letterTask,
  LETTERS_PROJECT,
  tasksFile,
  taskUpdatesOf,
  TaskUpdateSchema,
} from '../support/tasks-brain.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

// The runs opt out of the sandbox where bubblewrap is missing (their subject is not the sandbox).
const sandbox = sandboxForThisMachine();

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(
  tasks: ReturnType<typeof letterTask>[],
  delayMs = 0,
): Promise<{ repo: ProjectRepo; server: FakeAnthropicServer; env: Record<string, string>; file: string }> {
  const server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
  const brain = createTasksBrain(tasks, { delayMs });
  server.setFallback((request) => brain.reply(request));
  const repo = await createProjectRepo(LETTERS_PROJECT);
  cleanups.push(
    () => server.close(),
    () => repo.cleanup(),
  );
  const file = join(repo.root, 'tasks.json');
  await writeFile(file, tasksFile(tasks));
  return { repo, server, env: ratchetEnv(repo, server), file };
}

const RUN_FLAGS = ['--refactor', 'never', '--max-attempts', '1', ...ANTHROPIC_FLAGS, ...sandbox.flags];

/** The subjects of the run branch's merges, oldest first (first parents only). */
function merges(repo: ProjectRepo, runId: string): string[] {
  return repo
    .run('log', '--first-parent', '--reverse', '--format=%s', `ratchet/${runId}`)
    .split('\n')
    .filter((subject) => subject.startsWith('merge:'));
}

function suitePasses(repo: ProjectRepo, runId: string): string {
  return execFileSync(process.execPath, ['--test'], { cwd: join(repo.home, 'worktrees', runId), encoding: 'utf8' });
}

const StatusSchema = z.object({
  tasks: z.array(
    z.object({ key: z.string(), status: z.string(), attempts: z.number(), reason: z.string().nullable() }),
  ),
});

describe('ratchet tasks run that does not finish', () => {
  it('keeps going past a failed task, blocks only its dependent, ends partial; retry and resume finish it', async () => {
    const broken = { ...letterTask('B', 'B'), brokenImpl: "export function b() {\n  return 'not B';\n}\n" };
    const tasks = [letterTask('A', 'A'), broken, letterTask('C', 'BC', ['B'])];
    const { repo, env, file, server } = await setUp(tasks);
    const first = await runCli(['tasks', 'run', file, '--workers', '2', ...RUN_FLAGS, '--json'], {
      cwd: repo.dir,
      env,
      timeoutMs: 240_000,
    });
    expect(first.exitCode, describeResult(first)).toBe(1);
    const runId = z.object({ runId: z.string() }).parse(parseNdjson(first.stdout)[0]).runId;
    const end = parseNdjson(first.stdout).find((event) => event.type === 'run-end');
    expect(JSON.stringify(end)).toContain('partial: 1 of 3 tasks merged');
    // The ledger keeps it as partial, not failed: `tasks status`, `status` and `history` say so.
    expect(end).toMatchObject({ status: 'partial' });
    const stored = z
      .object({ run: z.object({ status: z.string() }) })
      .parse(JSON.parse((await runCli(['tasks', 'status', runId, '--json'], { cwd: repo.dir, env })).stdout));
    expect(stored.run.status).toBe('partial');
    const history = await runCli(['history'], { cwd: repo.dir, env });
    expect(history.stdout.split('\n').find((line) => line.includes(runId))).toContain('partial');
    const status = StatusSchema.parse(
      JSON.parse((await runCli(['tasks', 'status', runId, '--json'], { cwd: repo.dir, env })).stdout),
    );
    expect(status.tasks.map((task) => [task.key, task.status])).toEqual([
      ['A', 'merged'],
      ['B', 'failed'],
      ['C', 'blocked'],
    ]);
    expect(merges(repo, runId)).toEqual(['merge: A Letter A']);

    // The model gets it right this time: retry B (C waits again with it), then resume.
    server.reset();
    const fixed = createTasksBrain([letterTask('A', 'A'), letterTask('B', 'B'), letterTask('C', 'BC', ['B'])]);
    server.setFallback((request) => fixed.reply(request));
    const retry = await runCli(['tasks', 'retry', 'B', '--run', runId, '--json'], { cwd: repo.dir, env });
    expect(retry.exitCode, describeResult(retry)).toBe(0);
    expect(JSON.parse(retry.stdout)).toEqual({ task: 'B', status: 'pending', freed: ['C'] });
    const resumed = await runCli(['resume', runId, ...ANTHROPIC_FLAGS, ...sandbox.flags, '--json'], {
      cwd: repo.dir,
      env,
      timeoutMs: 240_000,
    });
    expect(resumed.exitCode, describeResult(resumed)).toBe(0);
    expect(merges(repo, runId)).toEqual(['merge: A Letter A', 'merge: B Letter B', 'merge: C Letter C']);
    expect(suitePasses(repo, runId)).toMatch(/pass 4\b/);
    const after = StatusSchema.parse(
      JSON.parse((await runCli(['tasks', 'status', runId, '--json'], { cwd: repo.dir, env })).stdout),
    );
    expect(after.tasks.map((task) => [task.key, task.status, task.attempts])).toEqual([
      ['A', 'merged', 1],
      ['B', 'merged', 2],
      ['C', 'merged', 1],
    ]);
  }, 600_000);

  it('says once that it is partial, and when no task merged points to what failed, not to accept --force', async () => {
    const broken = { ...letterTask('A', 'A'), brokenImpl: "export function a() {\n  return 'not A';\n}\n" };
    const { repo, env, file } = await setUp([broken]);
    const run = await runCli(['tasks', 'run', file, ...RUN_FLAGS], { cwd: repo.dir, env, timeoutMs: 240_000 });
    expect(run.exitCode, describeResult(run)).toBe(1);
    const said = `${run.stdout}\n${run.stderr}`;
    expect(said).toMatch(/Run \S+ partial: 0 of 1 tasks merged\./);
    expect(said).not.toContain('partial: partial');
    expect(said).toContain('hint: No task merged: `ratchet tasks status` and `ratchet report`');
    expect(said).not.toContain('accept --force');
  });

  it('re-runs a task whose merge conflicts on the new base, and merges it then', async () => {
    // Both tasks also write src/shared.js, differently: whichever merges second conflicts.
    const a = { ...letterTask('A', 'A'), extraFiles: { 'src/shared.js': "export const OWNER = 'A';\n" } };
    const b = { ...letterTask('B', 'B'), extraFiles: { 'src/shared.js': "export const OWNER = 'B';\n" } };
    const { repo, env, file } = await setUp([a, b]);
    const result = await runCli(['tasks', 'run', file, '--workers', '2', ...RUN_FLAGS, '--json'], {
      cwd: repo.dir,
      env,
      timeoutMs: 240_000,
    });
    expect(result.exitCode, describeResult(result)).toBe(0);
    const updates = taskUpdatesOf(parseNdjson(result.stdout));
    const requeued = updates.filter((update) => update.status === 'pending');
    expect(requeued).toHaveLength(1);
    expect(requeued[0]?.reason).toMatch(/conflicted in src\/shared\.js: re-run on the new base/);
    const second = requeued[0]?.task ?? '';
    expect(
      updates.filter((update) => update.task === second && update.status === 'running').map((u) => u.attempt),
    ).toEqual([1, 2]);
    const runId = z.object({ runId: z.string() }).parse(parseNdjson(result.stdout)[0]).runId;
    expect(merges(repo, runId)).toHaveLength(2);
    expect(repo.run('show', `ratchet/${runId}:src/shared.js`)).toBe(`export const OWNER = '${second}';`);
  }, 600_000);

  it('resumes a coordinator killed with SIGKILL after a merge to the end, every task merged exactly once', async () => {
    const tasks = [
      letterTask('A', 'A'),
      letterTask('B', 'B'),
      letterTask('C', 'AC', ['A']),
      letterTask('D', 'BD', ['B']),
    ];
    // Slower replies (the delay applies between streamed events too): B is still in its pipeline
    // when A's merge is recorded, so the kill cuts an attempt short.
    const { repo, env, file } = await setUp(tasks, 40);
    const project = { repo, home: repo.home, env, cleanup: () => repo.cleanup() };
    const cli = startCli(project, ['tasks', 'run', file, '--workers', '2', ...RUN_FLAGS, '--json']);
    const merged = await cli.waitForEvent(
      (event) => event.type === 'task-update' && TaskUpdateSchema.parse(event).status === 'merged',
      'the first merge',
    );
    cli.kill('SIGKILL');
    await cli.exited;
    const runId = merged.runId;
    const resumed = await runCli(['resume', runId, ...ANTHROPIC_FLAGS, ...sandbox.flags, '--json'], {
      cwd: repo.dir,
      env,
      timeoutMs: 300_000,
    });
    expect(resumed.exitCode, describeResult(resumed)).toBe(0);
    const subjects = merges(repo, runId);
    expect([...subjects].sort()).toEqual([
      'merge: A Letter A',
      'merge: B Letter B',
      'merge: C Letter C',
      'merge: D Letter D',
    ]);
    expect(suitePasses(repo, runId)).toMatch(/pass 5\b/);
    // Each task's implementation arrived once: one commit adding it on the run branch's history.
    for (const task of tasks) {
      const adds = repo
        .run('log', '--format=%H', '--diff-filter=A', `ratchet/${runId}`, '--', task.implFile)
        .split('\n')
        .filter(Boolean);
      expect(adds, task.implFile).toHaveLength(1);
    }
  }, 600_000);
});
