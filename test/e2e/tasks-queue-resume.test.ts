/**
 * A tasks run on a Redis queue whose coordinator is killed with SIGKILL after a merge: `ratchet
 * resume` opens the same queue again (the run stored it) and finishes the run on the same worker,
 * every task merged exactly once. The attempts the kill cut short run again as their next attempt;
 * the earlier jobs' branches, if their worker still pushed them, are never merged.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { ANTHROPIC_FLAGS, createProjectRepo, E2E_API_KEY, ratchetEnv, type ProjectRepo } from '../support/e2e-run.js';
import { tasksRunOnQueueArgs } from '../support/queue-worker.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startCli } from '../support/resume-harness.js';
import { CLI, cliEnv, describeResult, parseNdjson, runCli, type CliResult } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { createTasksBrain, letterTask, LETTERS_PROJECT, tasksFile, TaskUpdateSchema } from '../support/tasks-brain.js';
import { toolchain } from '../support/toolchains.js';

const redis = toolchain('redis');
const sandbox = sandboxForThisMachine();
const TASKS = [letterTask('A', 'A'), letterTask('B', 'B'), letterTask('C', 'AC', ['A']), letterTask('D', 'BD', ['B'])];

describe.skipIf(redis.missing)(`ratchet resume of a tasks run on a Redis queue${redis.note}`, () => {
  let redisServer: RedisServer;
  let server: FakeAnthropicServer;
  let repo: ProjectRepo;
  let stopWorker: () => Promise<void>;
  let workerPid: number | undefined;
  let runId: string;
  let resumed: CliResult;

  beforeAll(async () => {
    redisServer = await startRedisServer();
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    // Slower replies: B is still in its pipeline when A's merge is recorded, so the kill cuts it short.
    const brain = createTasksBrain(TASKS, { delayMs: 40 });
    server.setFallback((request) => brain.reply(request));
    repo = await createProjectRepo(LETTERS_PROJECT);
    const file = join(repo.root, 'tasks.json');
    await writeFile(file, tasksFile(TASKS));
    const env = ratchetEnv(repo, server);
    const home = repo.path('worker-home');
    mkdirSync(home, { recursive: true });
    const worker = spawn(
      process.execPath,
      [
        CLI,
        'worker',
        '--queue',
        redisServer.url,
        '--repositories',
        join(repo.home, 'published'),
        '--concurrency',
        '2',
        ...ANTHROPIC_FLAGS,
        ...sandbox.flags,
      ],
      { cwd: home, env: cliEnv({ ...env, RATCHET_HOME: home }), stdio: 'ignore' },
    );
    workerPid = worker.pid;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    stopWorker = async () => {
      worker.kill('SIGKILL');
      await exited;
    };
    const project = { repo, home: repo.home, env, cleanup: () => repo.cleanup() };
    const cli = startCli(project, tasksRunOnQueueArgs(file, redisServer.url, sandbox.flags));
    const merged = await cli.waitForEvent(
      (event) => event.type === 'task-update' && TaskUpdateSchema.parse(event).status === 'merged',
      'the first merge',
    );
    cli.kill('SIGKILL');
    await cli.exited;
    runId = merged.runId;
    resumed = await runCli(['resume', runId, ...ANTHROPIC_FLAGS, ...sandbox.flags, '--json'], {
      cwd: repo.dir,
      env,
      timeoutMs: 300_000,
    });
  }, 400_000);

  afterAll(async () => {
    await stopWorker?.();
    await redisServer?.stop();
    await server?.close();
    await repo?.cleanup();
  });

  it('finishes the run on the queue, every task merged exactly once, and the run branch passes', () => {
    expect(resumed.exitCode, describeResult(resumed)).toBe(0);
    // The resumed coordinator ran what was left on the queue's worker, not in its own process.
    const starts = parseNdjson(resumed.stdout).flatMap((event) =>
      event.type === 'task-update' && TaskUpdateSchema.parse(event).status === 'running'
        ? [TaskUpdateSchema.parse(event).worker ?? '']
        : [],
    );
    expect(starts.length).toBeGreaterThan(0);
    for (const worker of starts) expect(worker).toMatch(new RegExp(`:${workerPid}$`));
    const merges = repo
      .run('log', '--first-parent', '--format=%s', `ratchet/${runId}`)
      .split('\n')
      .filter((subject) => subject.startsWith('merge:'));
    expect(merges.sort()).toEqual(['merge: A Letter A', 'merge: B Letter B', 'merge: C Letter C', 'merge: D Letter D']);
    for (const task of TASKS) {
      const adds = repo
        .run('log', '--format=%H', '--diff-filter=A', `ratchet/${runId}`, '--', task.implFile)
        .split('\n')
        .filter(Boolean);
      expect(adds, task.implFile).toHaveLength(1);
    }
    const suite = execFileSync(process.execPath, ['--test'], {
      cwd: join(repo.home, 'worktrees', runId),
      encoding: 'utf8',
    });
    expect(suite).toMatch(/pass 5\b/);
  });
});
