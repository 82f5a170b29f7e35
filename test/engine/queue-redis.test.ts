import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openRedisQueue } from '../../src/engine/queue/redis-queue.js';
import { startRedisWorker } from '../../src/engine/queue/redis-worker.js';
import type { JobUpdate, JsonValue, QueueWorker, TaskQueue } from '../../src/engine/queue/types.js';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { toolchain } from '../support/toolchains.js';

const PACKAGE_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHILD = 'test/support/queue-worker-child.ts';

/** A worker process (`queue-worker-child.ts`) and the lines it printed so far. */
interface WorkerProcess {
  id: string;
  child: ChildProcess;
  lines: string[];
  /** Resolves when it has printed `line`. */
  printed(line: string): Promise<void>;
}

function startWorkerProcess(url: string, id: string): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, url, id], {
    cwd: PACKAGE_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: { line: string; resolve: () => void }[] = [];
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
  child.stdout?.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
      lines.push(line);
      for (const waiter of waiters.filter((entry) => entry.line === line)) waiter.resolve();
    }
  });
  const worker: WorkerProcess = {
    id,
    child,
    lines,
    printed: (line) =>
      lines.includes(line)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiters.push({ line, resolve });
            child.once('exit', (code) =>
              reject(new Error(`worker ${id} exited (${code}) before "${line}":\n${errors}`)),
            );
          }),
  };
  return worker.printed('ready').then(() => worker);
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

const redis = toolchain('redis');
const StreamSchema = z.array(z.tuple([z.string(), z.array(z.string())]));

describe.skipIf(redis.missing)(`task queue on BullMQ and a real redis-server${redis.note}`, () => {
  let server: RedisServer;
  let dir: string;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    server = await startRedisServer();
    dir = await mkdtemp(join(tmpdir(), 'ratchet-queue-'));
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function coordinator(runId: string, name: string): Promise<TaskQueue> {
    const queue = await openRedisQueue({ url: server.url, name, runId });
    cleanups.push(() => queue.close());
    return queue;
  }

  it('streams a worker’s events, then its result, and adds a job once per run, task and attempt', async () => {
    const queue = await coordinator('run-1', 'q-basic');
    const updates: JobUpdate[] = [];
    queue.subscribe((update) => updates.push(update));
    let runs = 0;
    const worker: QueueWorker = await startRedisWorker(
      async (context) => {
        runs += 1;
        await context.emit({ stage: 'RED' });
        await context.emit({ stage: 'GREEN' });
        return { key: context.job.taskKey };
      },
      { url: server.url, name: 'q-basic', id: 'w1' },
    );
    cleanups.push(() => worker.close());

    const job = { runId: 'run-1', taskKey: 'A', attempt: 1, payload: { files: ['src/a.ts'] } };
    const handle = await queue.enqueue(job);
    expect(await handle.outcome).toEqual({ status: 'completed', result: { key: 'A' }, deliveries: 1 });
    expect(updates).toEqual([
      { type: 'job-start', jobId: 'run-1/A/1', delivery: 1, worker: 'w1' },
      { type: 'job-event', jobId: 'run-1/A/1', delivery: 1, seq: 1, event: { stage: 'RED' } },
      { type: 'job-event', jobId: 'run-1/A/1', delivery: 1, seq: 2, event: { stage: 'GREEN' } },
      { type: 'job-complete', jobId: 'run-1/A/1', delivery: 1, result: { key: 'A' } },
    ]);

    // A coordinator resumed after a kill enqueues the job again: it gets the result, nothing runs.
    const resumed = await coordinator('run-1', 'q-basic');
    expect(await (await resumed.enqueue(job)).outcome).toMatchObject({ status: 'completed', result: { key: 'A' } });
    expect(runs).toBe(1);
  });

  it("trims a run's update stream as its jobs end (a running job's updates stay), and bounds its life", async () => {
    const queue = await coordinator('run-trim', 'q-trim');
    const seen: JobUpdate[] = [];
    queue.subscribe((update) => seen.push(update));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const worker = await startRedisWorker(
      async (context) => {
        await context.emit({ stage: 'RED', task: context.job.taskKey });
        if (context.job.taskKey === 'B') await released;
        return null;
      },
      { url: server.url, name: 'q-trim', id: 'w1', concurrency: 2 },
    );
    cleanups.push(() => worker.close());
    cleanups.push(() => Promise.resolve(release()));
    const client = new Redis(server.url);
    cleanups.push(() => Promise.resolve(client.disconnect()));
    const key = 'ratchet:q-trim:ratchet-updates:run-trim';

    const b = await queue.enqueue({ runId: 'run-trim', taskKey: 'B', attempt: 1, payload: null });
    const a = await queue.enqueue({ runId: 'run-trim', taskKey: 'A', attempt: 1, payload: null });
    await a.outcome;
    // B still runs: its start and event are kept (a resumed read would need them); A's are gone.
    await expect.poll(() => seen.filter((update) => update.jobId === 'run-trim/B/1').length).toBe(2);
    const jobsLeft = async (): Promise<string[]> =>
      StreamSchema.parse(await client.call('XRANGE', key, '-', '+')).map(
        ([, fields]) => z.object({ jobId: z.string() }).parse(JSON.parse(fields[1] ?? '{}')).jobId,
      );
    // The trim follows A's end (its outcome settles first).
    await expect.poll(jobsLeft).toEqual(['run-trim/B/1', 'run-trim/B/1']);
    release();
    await b.outcome;
    await expect.poll(() => client.xlen(key)).toBe(0);
    // A coordinator that never comes back leaves the stream for a week at most.
    const ttl = await client.ttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(7 * 24 * 3600);
  });

  it('fails a job whose handler throws', async () => {
    const queue = await coordinator('run-2', 'q-fail');
    const worker = await startRedisWorker(() => Promise.reject(new Error('VERIFY stayed red')), {
      url: server.url,
      name: 'q-fail',
      id: 'w1',
    });
    cleanups.push(() => worker.close());
    const outcome = await (await queue.enqueue({ runId: 'run-2', taskKey: 'A', attempt: 1, payload: null })).outcome;
    expect(outcome).toEqual({ status: 'failed', error: 'VERIFY stayed red', deliveries: 1 });
  });

  it('finishes on the other worker process the job of one killed mid-job (SIGKILL), with no step done twice', async () => {
    const workers = await Promise.all(['worker-a', 'worker-b'].map((id) => startWorkerProcess(server.url, id)));
    cleanups.push(async () => {
      for (const worker of workers) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((worker) => stopped(worker.child)));
    });
    const queue = await coordinator('run-3', 'ratchet-tasks');
    const updates: JobUpdate[] = [];
    queue.subscribe((update) => updates.push(update));
    const effectsFile = join(dir, 'effects.log');
    const job = { runId: 'run-3', taskKey: 'T1', attempt: 1, payload: { steps: 4, stepMs: 1500, effectsFile } };
    const handle = await queue.enqueue(job);

    // Whichever worker took it is killed after its second step is recorded, mid-way through the job.
    const taker = await Promise.race(workers.map((worker) => worker.printed('step T1 2').then(() => worker)));
    taker.child.kill('SIGKILL');
    await stopped(taker.child);
    const survivor = workers.find((worker) => worker !== taker);

    const outcome = await handle.outcome;
    expect(outcome).toEqual({
      status: 'completed',
      result: { worker: survivor?.id, steps: 4 } as JsonValue,
      deliveries: 2,
    });
    expect((await readFile(effectsFile, 'utf8')).trim().split('\n')).toEqual([
      `T1 step 1 by ${taker.id}`,
      `T1 step 2 by ${taker.id}`,
      `T1 step 3 by ${survivor?.id}`,
      `T1 step 4 by ${survivor?.id}`,
    ]);
    const starts = updates.filter((update) => update.type === 'job-start');
    expect(starts.map((update) => [update.delivery, update.type === 'job-start' ? update.worker : ''])).toEqual([
      [1, taker.id],
      [2, survivor?.id],
    ]);
    expect(updates.filter((update) => update.type === 'job-complete')).toHaveLength(1);
    expect(updates.at(-1)?.type).toBe('job-complete');

    // Enqueued again (a coordinator resumed after its own kill): the same job, not a new one.
    const again = await queue.enqueue(job);
    expect(again.id).toBe(handle.id);
    expect(await again.outcome).toEqual(outcome);
    expect((await readFile(effectsFile, 'utf8')).trim().split('\n')).toHaveLength(4);
  }, 60_000);
});
