import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
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

// A, B, C independent; D needs A; E needs B and C: two tasks with dependencies.
const TASKS = [
  letterTask('A', 'A'),
  letterTask('B', 'B'),
  letterTask('C', 'C'),
  letterTask('D', 'AD', ['A']),
  letterTask('E', 'BCE', ['B', 'C']),
];

describe('ratchet tasks run: five tasks, two with dependencies, three workers (fake Anthropic, real git, node --test)', () => {
  let server: FakeAnthropicServer;
  let repo: ProjectRepo;
  let result: CliResult;
  let updates: TaskUpdate[];
  let runId: string;
  let checkoutBefore: { status: string; hasA: boolean };
  const brain = createTasksBrain(TASKS);

  beforeAll(async () => {
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    server.setFallback((request) => brain.reply(request));
    repo = await createProjectRepo(LETTERS_PROJECT);
    result = await runTasksCli(repo, server, TASKS, { workers: 3, timeoutMs: 300_000 });
    const events = parseNdjson(result.stdout);
    updates = taskUpdatesOf(events);
    checkoutBefore = { status: repo.run('status', '--porcelain'), hasA: existsSync(join(repo.dir, 'src', 'a.js')) };
    runId = z.object({ runId: z.string() }).parse(events.find((event) => event.type === 'run-start')).runId;
  }, 320_000);

  afterAll(async () => {
    await server.close();
    await repo.cleanup();
  });

  it('completes with every task merged into the run branch, whose full suite passes', () => {
    expect(result.exitCode, describeResult(result)).toBe(0);
    expect(brain.unexpected).toEqual([]);
    const merged = updates.filter((update) => update.status === 'merged').map((update) => update.task);
    expect(merged.sort()).toEqual(['A', 'B', 'C', 'D', 'E']);
    const branch = `ratchet/${runId}`;
    for (const task of TASKS) {
      expect(repo.run('show', `${branch}:${task.implFile}`)).toBe(task.impl.trimEnd());
      expect(repo.run('show', `${branch}:${task.testFile}`)).toBe(task.test.trimEnd());
    }
    // No task's test list reaches the run branch (each task drops its own before it merges).
    expect(() => repo.run('show', `${branch}:test-list.md`)).toThrow();
    const worktree = join(repo.home, 'worktrees', runId);
    const suite = execFileSync(process.execPath, ['--test'], { cwd: worktree, encoding: 'utf8' });
    expect(suite).toMatch(/pass 6\b/);
    expect(suite).toMatch(/fail 0\b/);
  });

  it('runs three tasks at once and starts a dependent task only from a base holding its dependencies', () => {
    let running = 0;
    let most = 0;
    for (const update of updates) {
      if (update.status === 'running') running += 1;
      if (update.status === 'done' || update.status === 'failed') running -= 1;
      most = Math.max(most, running);
    }
    expect(most).toBe(3);
    const position = (task: string, status: string): number =>
      updates.findIndex((update) => update.task === task && update.status === status);
    expect(position('D', 'running')).toBeGreaterThan(position('A', 'merged'));
    expect(position('E', 'running')).toBeGreaterThan(Math.max(position('B', 'merged'), position('C', 'merged')));
    // D's branch grew from the commit A's merge made.
    const aMerge = updates.find((update) => update.task === 'A' && update.status === 'merged')?.mergeCommit ?? '';
    expect(() => repo.run('merge-base', '--is-ancestor', aMerge, `ratchet/${runId}-D-1`)).not.toThrow();
  });

  it('tells per task what happened (tasks status, report), and accept brings the run into the branch', async () => {
    const env = ratchetEnv(repo, server);
    const status = await runCli(['tasks', 'status', runId], { cwd: repo.dir, env });
    expect(status.exitCode, describeResult(status)).toBe(0);
    for (const task of TASKS)
      expect(status.stdout).toMatch(new RegExp(`^${task.key}\\s+merged\\s+attempts 1 merged as [0-9a-f]{8}`, 'm'));
    // Each task's stage attempts, from the ledger's task_attempts: plan, red, the review of its test, green, verify, plan.
    expect(status.stdout).toContain('plan✓ red✓ review✓ green✓ verify✓ plan✓');
    const report = await runCli(['report', runId], { cwd: repo.dir, env });
    expect(report.exitCode, describeResult(report)).toBe(0);
    const accept = await runCli(['accept', runId, '--yes'], { cwd: repo.dir, env });
    expect(accept.exitCode, describeResult(accept)).toBe(0);
    for (const task of TASKS) expect(existsSync(join(repo.dir, task.implFile))).toBe(true);
  });

  it("left the user's checkout as it was while the run ran", () => {
    expect(checkoutBefore).toEqual({ status: '', hasA: false });
  });
});
