import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import {
  ANTHROPIC_FLAGS,
  createProjectRepo,
  E2E_API_KEY,
  modelCallRequests,
  ratchetEnv,
  readLedger,
  type ProjectRepo,
} from '../support/e2e-run.js';
import { openLedger } from '../../src/ledger/ledger.js';
import { startQueueWorker, tasksRunOnQueueArgs, type WorkerProcess } from '../support/queue-worker.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { describeResult, parseNdjson, runCli, type CliResult } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { createTasksBrain, letterTask, LETTERS_PROJECT, tasksFile, taskUpdatesOf } from '../support/tasks-brain.js';
import { toolchain } from '../support/toolchains.js';
import { until } from '../support/wait-until.js';

const redis = toolchain('redis');
// The runs opt out of the sandbox where bubblewrap is missing (their subject is not the sandbox).
const sandbox = sandboxForThisMachine();

// A, B, C independent; D needs A; E needs B and C: two tasks with dependencies.
const TASKS = [
  letterTask('A', 'A'),
  letterTask('B', 'B'),
  letterTask('C', 'C'),
  letterTask('D', 'AD', ['A']),
  letterTask('E', 'BCE', ['B', 'C']),
];

/** The task whose worker is killed while the model works on its GREEN stage. */
const KILLED_TASK = 'C';

describe.skipIf(redis.missing)(
  `ratchet tasks run --queue: two ratchet worker processes on Redis, one killed mid-task${redis.note}`,
  () => {
    let server: FakeAnthropicServer;
    let redisServer: RedisServer;
    let repo: ProjectRepo;
    let workers: WorkerProcess[];
    let killed: WorkerProcess;
    let result: CliResult;
    let runId: string;
    const brain = createTasksBrain(TASKS);
    let held = false;
    // Everything sent to Redis while the run ran (the coordinator trims its streams as jobs end).
    const traffic: string[] = [];
    let monitor: Redis | undefined;
    let monitorBase: Redis | undefined;

    beforeAll(async () => {
      server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
      // The killed task's first GREEN call is answered slowly: its worker is killed while it waits.
      server.setFallback((request) => {
        const reply = brain.reply(request);
        if (!held && brain.calls.at(-1) === `${KILLED_TASK} GREEN`) {
          held = true;
          return { ...reply, delayMs: 30_000 };
        }
        return reply;
      });
      redisServer = await startRedisServer();
      monitorBase = new Redis(redisServer.url);
      monitor = await monitorBase.monitor();
      monitor.on('monitor', (_time: string, args: string[]) => traffic.push(args.join(' ')));
      repo = await createProjectRepo(LETTERS_PROJECT);
      await writeFile(join(repo.root, 'tasks.json'), tasksFile(TASKS));
      workers = [1, 2].map((name) =>
        startQueueWorker(redisServer.url, repo, server, {
          name: String(name),
          sandboxFlags: sandbox.flags,
          args: ['--lock-seconds', '3'],
        }),
      );
      await until('both workers wait for jobs', () =>
        workers.every((worker) => worker.lines.some((line) => line.includes('takes tasks from'))),
      );
      const coordinator = runCli(tasksRunOnQueueArgs(join(repo.root, 'tasks.json'), redisServer.url, sandbox.flags), {
        cwd: repo.dir,
        env: ratchetEnv(repo, server),
        timeoutMs: 300_000,
      });
      await until(`${KILLED_TASK}'s GREEN call arrives`, () => held);
      const running = workers.find((worker) => worker.lines.some((line) => line.startsWith(`${KILLED_TASK} (run`)));
      if (running === undefined) throw new Error(`No worker says it runs ${KILLED_TASK}`);
      killed = running;
      killed.child.kill('SIGKILL');
      await killed.exited;
      result = await coordinator;
      runId = z
        .object({ runId: z.string() })
        .parse(parseNdjson(result.stdout).find((event) => event.type === 'run-start')).runId;
    }, 330_000);

    afterAll(async () => {
      for (const worker of workers ?? []) {
        worker.child.kill('SIGTERM');
        await worker.exited;
      }
      monitor?.disconnect();
      monitorBase?.disconnect();
      await redisServer?.stop();
      await server?.close();
      await repo?.cleanup();
    });

    it('merges every task into the run branch, each task once, and the run branch passes its tests', () => {
      expect(result.exitCode, describeResult(result)).toBe(0);
      expect(brain.unexpected).toEqual([]);
      const updates = taskUpdatesOf(parseNdjson(result.stdout));
      const merged = updates.filter((update) => update.status === 'merged').map((update) => update.task);
      expect(merged.sort()).toEqual(['A', 'B', 'C', 'D', 'E']);
      const branch = `ratchet/${runId}`;
      for (const task of TASKS) {
        expect(repo.run('show', `${branch}:${task.implFile}`)).toBe(task.impl.trimEnd());
        // Each task's commits are on the run branch once: its test (with the stub), its implementation.
        const subjects = repo.run('log', '--format=%s', branch, '--', task.implFile).split('\n');
        expect(subjects, task.key).toHaveLength(2);
        expect(new Set(subjects).size, task.key).toBe(2);
      }
      const suite = execFileSync(process.execPath, ['--test'], {
        cwd: join(repo.home, 'worktrees', runId),
        encoding: 'utf8',
      });
      expect(suite).toMatch(/pass 6\b/);
      expect(suite).toMatch(/fail 0\b/);
    });

    it("never brings the killed worker's commits into the run's repository", () => {
      const clones = join(killed.home, 'workers', 'repositories');
      const [clone] = readdirSync(clones);
      const killedBranch = `ratchet/${runId}-${KILLED_TASK}-1`;
      const killedHead = execFileSync('git', ['-C', join(clones, clone ?? ''), 'rev-parse', killedBranch], {
        encoding: 'utf8',
      }).trim();
      // Its RED commit was made there, then it died in GREEN: the object never reached the coordinator.
      expect(() => repo.run('cat-file', '-e', `${killedHead}^{commit}`)).toThrow();
      expect(() => repo.run('merge-base', '--is-ancestor', killedHead, `ratchet/${runId}`)).toThrow();
    });

    it('tells which worker ran which task, and that the killed one was re-delivered (tasks status)', async () => {
      const env = ratchetEnv(repo, server);
      const status = await runCli(['tasks', 'status', runId], { cwd: repo.dir, env });
      expect(status.exitCode, describeResult(status)).toBe(0);
      for (const task of TASKS)
        expect(status.stdout).toMatch(new RegExp(`^${task.key}\\s+merged\\s+attempts 1 merged as [0-9a-f]{8}`, 'm'));
      const pid = (worker: WorkerProcess): string => String(worker.child.pid);
      const survivor = workers.find((worker) => worker !== killed);
      if (survivor === undefined) throw new Error('no surviving worker');
      const lines = status.stdout.split('\n');
      const ranOn =
        lines.slice(lines.findIndex((line) => line.startsWith(KILLED_TASK))).find((line) => line.includes('ran on')) ??
        '';
      expect(ranOn).toContain(`:${pid(killed)} (attempt 1, delivery 1)`);
      expect(ranOn).toContain(`:${pid(survivor)} (attempt 1, delivery 2, re-delivered`);
      // The stage attempts and model calls the workers streamed are in the coordinator's ledger.
      expect(status.stdout).toContain('plan✓ red✓ green✓ verify✓ plan✓');
      const json = await runCli(['tasks', 'status', runId, '--json'], { cwd: repo.dir, env });
      const starts = z
        .object({ starts: z.array(z.object({ task: z.string(), worker: z.string(), delivery: z.number() })) })
        .parse(JSON.parse(json.stdout)).starts;
      expect(starts.filter((start) => start.task === KILLED_TASK).map((start) => start.delivery)).toEqual([1, 2]);
      for (const task of TASKS.filter((entry) => entry.key !== KILLED_TASK))
        expect(starts.filter((start) => start.task === task.key).map((start) => start.delivery)).toEqual([1]);
      const report = await runCli(['report', runId], { cwd: repo.dir, env });
      expect(report.exitCode, describeResult(report)).toBe(0);
    });

    it("holds in the coordinator's ledger every model and tool call the workers made, by worker and delivery", async () => {
      const snapshot = await readLedger(repo.dir, runId);
      // Every call the fake answered but the one the killed worker waited on when it died.
      expect(snapshot.modelCalls).toHaveLength(modelCallRequests(server).length - 1);
      expect(snapshot.toolCalls.length).toBeGreaterThan(0);
      const ledger = await openLedger(join(repo.dir, '.ratchet', 'ledger.db'), { secrets: [] });
      try {
        const calls = await ledger.tasks.invocations(runId, KILLED_TASK);
        const pid = (worker: WorkerProcess): string => `:${worker.child.pid}`;
        const byDelivery = (delivery: number): string[] => [
          ...new Set(calls.filter((call) => call.delivery === delivery).map((call) => call.worker ?? '')),
        ];
        expect(byDelivery(1)).toHaveLength(1);
        expect(byDelivery(1)[0]).toMatch(new RegExp(`${pid(killed)}$`));
        expect(byDelivery(2)).toHaveLength(1);
        expect(byDelivery(2)[0]).not.toMatch(new RegExp(`${pid(killed)}$`));
        expect(calls.filter((call) => call.delivery === 2).map((call) => call.seq)[0]).toBe(1);
      } finally {
        await ledger.close();
      }
    });

    it('stops a worker cleanly on SIGTERM (exit 0, once its running tasks are done)', async () => {
      const survivor = workers.find((worker) => worker !== killed);
      if (survivor === undefined) throw new Error('no surviving worker');
      const code = new Promise<number | null>((resolve) => survivor.child.once('exit', (exit) => resolve(exit)));
      survivor.child.kill('SIGTERM');
      expect(await code).toBe(0);
      expect(survivor.lines.filter((line) => /^worker \S+ stopped$/.test(line))).toHaveLength(1);
    });

    it("left the user's checkout as it was, and the workers' key never crossed the queue", async () => {
      expect(repo.run('status', '--porcelain')).toBe('');
      expect(existsSync(join(repo.dir, 'src', 'a.js'))).toBe(false);
      const client = new Redis(redisServer.url);
      try {
        const stored: string[] = [];
        for (const key of await client.keys('*')) {
          const type = await client.type(key);
          if (type === 'hash') stored.push(JSON.stringify(await client.hgetall(key)));
          else if (type === 'stream') stored.push(JSON.stringify(await client.xrange(key, '-', '+')));
          else if (type === 'list') stored.push(JSON.stringify(await client.lrange(key, 0, -1)));
          else if (type === 'zset') stored.push(JSON.stringify(await client.zrange(key, '0', '-1')));
          else if (type === 'string') stored.push((await client.get(key)) ?? '');
        }
        expect(stored.join('\n')).not.toContain(E2E_API_KEY);
        // What crossed the queue held the streamed model calls (so the search looked where the key
        // could be), never the key; and the run's update stream was trimmed as its jobs ended.
        const sent = traffic.join('\n');
        expect(sent).toContain('Stage: GREEN');
        expect(sent).not.toContain(E2E_API_KEY);
        expect(stored.join('\n')).not.toContain('Stage: GREEN');
      } finally {
        client.disconnect();
      }
    });
  },
);

/** A loopback port nothing listens on (it was free a moment ago). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

describe('a queue that cannot be used refuses at once (no silent wait, no run created)', () => {
  let server: FakeAnthropicServer;
  let repo: ProjectRepo;
  let url: string;

  beforeAll(async () => {
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    repo = await createProjectRepo(LETTERS_PROJECT);
    await writeFile(join(repo.root, 'tasks.json'), tasksFile(TASKS));
    url = `redis://:hunter2@127.0.0.1:${await closedPort()}`;
  });

  afterAll(async () => {
    await server.close();
    await repo.cleanup();
  });

  it('ratchet worker exits 3 naming the unreachable Redis (its password hidden)', async () => {
    const result = await runCli(
      ['worker', '--queue', url, '--repositories', repo.home, ...ANTHROPIC_FLAGS, ...sandbox.flags],
      {
        cwd: repo.dir,
        env: ratchetEnv(repo, server),
        timeoutMs: 30_000,
      },
    );
    expect(result.exitCode, describeResult(result)).toBe(3);
    expect(result.stderr).toMatch(/Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ does not answer: connect ECONNREFUSED/);
    expect(result.stderr).not.toContain('hunter2');
  });

  it('ratchet tasks run --queue exits 3 before any run, branch or ledger exists', async () => {
    const result = await runCli(
      [
        'tasks',
        'run',
        join(repo.root, 'tasks.json'),
        '--queue',
        url.replace(':hunter2@', ''),
        ...ANTHROPIC_FLAGS,
        ...sandbox.flags,
      ],
      { cwd: repo.dir, env: { ...ratchetEnv(repo, server), REDIS_PASSWORD: 'hunter2-password' }, timeoutMs: 30_000 },
    );
    expect(result.exitCode, describeResult(result)).toBe(3);
    expect(result.stderr).toContain('does not answer');
    expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');
    expect(existsSync(join(repo.root, '.ratchet', 'ledger.db'))).toBe(false);
  });

  it('ratchet tasks run --queue checks the tasks file before Redis: a missing file is exit 2, naming the file', async () => {
    const missing = join(repo.root, 'nope.json');
    const result = await runCli(
      ['tasks', 'run', missing, '--queue', url.replace(':hunter2@', ''), ...ANTHROPIC_FLAGS, ...sandbox.flags],
      { cwd: repo.dir, env: ratchetEnv(repo, server), timeoutMs: 30_000 },
    );
    expect(result.exitCode, describeResult(result)).toBe(2);
    expect(result.stderr).toContain(`Cannot read the tasks file ${missing}`);
    expect(result.stderr).not.toContain('does not answer');
    expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');
  });

  it('ratchet tasks run refuses --workers with --queue (the workers decide): exit 2, before Redis is asked', async () => {
    const result = await runCli(
      [
        'tasks',
        'run',
        join(repo.root, 'tasks.json'),
        '--queue',
        url.replace(':hunter2@', ''),
        '--workers',
        '4',
        ...ANTHROPIC_FLAGS,
        ...sandbox.flags,
      ],
      { cwd: repo.dir, env: ratchetEnv(repo, server), timeoutMs: 30_000 },
    );
    expect(result.exitCode, describeResult(result)).toBe(2);
    expect(result.stderr).toContain('--workers sets the local pool');
    expect(result.stderr).not.toContain('does not answer');
    expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');
  });

  it('ratchet tasks run refuses a queue URL holding a password (the run would store it): exit 2, no run', async () => {
    const result = await runCli(
      ['tasks', 'run', join(repo.root, 'tasks.json'), '--queue', url, ...ANTHROPIC_FLAGS, ...sandbox.flags],
      { cwd: repo.dir, env: ratchetEnv(repo, server), timeoutMs: 30_000 },
    );
    expect(result.exitCode, describeResult(result)).toBe(2);
    expect(result.stderr).toContain('REDIS_PASSWORD');
    expect(result.stderr).not.toContain('hunter2');
    expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');
    expect(existsSync(join(repo.root, '.ratchet', 'ledger.db'))).toBe(false);
  });
});

describe.skipIf(redis.missing)(`a Redis that requires a password${redis.note}`, () => {
  const PASSWORD = `redis-${Math.random().toString(36).slice(2)}-password`;
  let redisServer: RedisServer;
  let server: FakeAnthropicServer;
  let repo: ProjectRepo;

  beforeAll(async () => {
    redisServer = await startRedisServer({ password: PASSWORD });
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    repo = await createProjectRepo(LETTERS_PROJECT);
  });

  afterAll(async () => {
    await redisServer.stop();
    await server.close();
    await repo.cleanup();
  });

  it('takes a worker whose REDIS_PASSWORD is right, and refuses one without it (exit 3)', async () => {
    const env = ratchetEnv(repo, server);
    const refused = await runCli(
      ['worker', '--queue', redisServer.url, '--repositories', repo.home, ...ANTHROPIC_FLAGS, ...sandbox.flags],
      { cwd: repo.dir, env, timeoutMs: 30_000 },
    );
    expect(refused.exitCode, describeResult(refused)).toBe(3);
    expect(refused.stderr).toMatch(/does not answer: NOAUTH/);
    const worker = startQueueWorker(redisServer.url, repo, server, {
      name: 'password',
      sandboxFlags: sandbox.flags,
      args: ['--lock-seconds', '3'],
      env: { REDIS_PASSWORD: PASSWORD },
    });
    await until(
      'the worker waits for jobs',
      () => worker.lines.some((line) => line.includes('takes tasks from')),
      60_000,
    );
    worker.child.kill('SIGTERM');
    await worker.exited;
    expect(worker.child.exitCode).toBe(0);
  });
});
