import { describe, expect, it } from 'vitest';
import { InProcessQueue } from '../../src/engine/queue/in-process-queue.js';
import {
  StaleDeliveryError,
  taskJobId,
  type JobContext,
  type JobUpdate,
  type JsonValue,
} from '../../src/engine/queue/types.js';

/** A gate a handler waits at until the test opens it. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

function job(taskKey: string, attempt = 1): { runId: string; taskKey: string; attempt: number; payload: JsonValue } {
  return { runId: 'run-1', taskKey, attempt, payload: { n: 1 } };
}

function record(queue: InProcessQueue): JobUpdate[] {
  const updates: JobUpdate[] = [];
  queue.subscribe((update) => updates.push(update));
  return updates;
}

describe('in-process task queue', () => {
  it('runs a job on a worker, streams its events in order, then its result', async () => {
    const queue = new InProcessQueue();
    const updates = record(queue);
    queue.startWorker(async (context) => {
      await context.emit({ stage: 'RED' });
      await context.emit({ stage: 'GREEN' });
      return { done: context.job.taskKey };
    });
    const handle = await queue.enqueue(job('A'));
    expect(await handle.outcome).toEqual({ status: 'completed', result: { done: 'A' }, deliveries: 1 });
    expect(updates).toEqual([
      { type: 'job-start', jobId: 'run-1/A/1', delivery: 1, worker: 'local-1' },
      { type: 'job-event', jobId: 'run-1/A/1', delivery: 1, seq: 1, event: { stage: 'RED' } },
      { type: 'job-event', jobId: 'run-1/A/1', delivery: 1, seq: 2, event: { stage: 'GREEN' } },
      { type: 'job-complete', jobId: 'run-1/A/1', delivery: 1, result: { done: 'A' } },
    ]);
  });

  it('adds a job once per run, task and attempt; another attempt is another job', async () => {
    const queue = new InProcessQueue();
    let runs = 0;
    queue.startWorker(() => {
      runs += 1;
      return Promise.resolve(runs);
    });
    const first = await queue.enqueue(job('A'));
    const again = await queue.enqueue(job('A'));
    expect(again.id).toBe(first.id);
    expect(await again.outcome).toMatchObject({ status: 'completed', result: 1 });
    expect(await (await queue.enqueue(job('A', 2))).outcome).toMatchObject({ status: 'completed', result: 2 });
    expect(runs).toBe(2);
    expect(taskJobId({ runId: 'r:1', taskKey: 'a/b', attempt: 3 })).toBe('r%3A1/a%2Fb/3');
  });

  it('fails a job whose handler throws, without retrying it', async () => {
    const queue = new InProcessQueue();
    let runs = 0;
    queue.startWorker(() => {
      runs += 1;
      return Promise.reject(new Error('GREEN failed 3 times'));
    });
    const outcome = await (await queue.enqueue(job('A'))).outcome;
    expect(outcome).toEqual({ status: 'failed', error: 'GREEN failed 3 times', deliveries: 1 });
    expect(runs).toBe(1);
  });

  it('runs up to concurrency jobs at once per worker, the rest when a slot frees', async () => {
    const queue = new InProcessQueue();
    const release = gate();
    let running = 0;
    let most = 0;
    queue.startWorker(
      async () => {
        running += 1;
        most = Math.max(most, running);
        await release.wait;
        running -= 1;
        return null;
      },
      { concurrency: 2 },
    );
    const handles = await Promise.all(['A', 'B', 'C'].map((key) => queue.enqueue(job(key))));
    await new Promise((resolve) => setImmediate(resolve));
    expect(running).toBe(2);
    release.open();
    await Promise.all(handles.map((handle) => handle.outcome));
    expect(most).toBe(2);
  });

  it('starts the job of a killed worker again on another, which skips the recorded effects and ends it once', async () => {
    const queue = new InProcessQueue();
    const updates = record(queue);
    const effects: string[] = [];
    const stuck = gate();
    let zombie: JobContext | undefined;
    const handler = async (context: JobContext): Promise<JsonValue> => {
      for (const step of [1, 2, 3]) {
        await context.effect(`step-${step}`, () => {
          effects.push(`step ${step} by ${context.worker}`);
          return Promise.resolve(step);
        });
        if (step === 2 && context.worker === 'doomed') {
          zombie = context;
          await stuck.wait;
        }
      }
      return context.worker;
    };
    const doomed = queue.startWorker(handler, { id: 'doomed' });
    const handle = await queue.enqueue(job('A'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(effects).toEqual(['step 1 by doomed', 'step 2 by doomed']);
    queue.startWorker(handler, { id: 'survivor' });
    doomed.kill();

    expect(await handle.outcome).toEqual({ status: 'completed', result: 'survivor', deliveries: 2 });
    expect(effects).toEqual(['step 1 by doomed', 'step 2 by doomed', 'step 3 by survivor']);
    // The killed delivery may not write any more, and its late end changes nothing.
    expect(zombie?.signal.aborted).toBe(true);
    await expect(zombie?.emit({ late: true })).rejects.toBeInstanceOf(StaleDeliveryError);
    stuck.open();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(effects).toHaveLength(3);
    expect(updates.map((update) => `${update.type} ${update.delivery}`)).toEqual([
      'job-start 1',
      'job-start 2',
      'job-complete 2',
    ]);
  });

  it('gives a job up after maxDeliveries starts whose workers all died', async () => {
    const queue = new InProcessQueue({ maxDeliveries: 2 });
    const never = gate();
    const handle = await queue.enqueue(job('A'));
    for (const id of ['w1', 'w2']) {
      const worker = queue.startWorker(() => never.wait.then(() => null), { id });
      await new Promise((resolve) => setImmediate(resolve));
      worker.kill();
    }
    expect(await handle.outcome).toEqual({
      status: 'failed',
      error: 'Job run-1/A/1 was given up after 2 deliveries: its workers kept dying',
      deliveries: 2,
    });
  });

  it('lets a closing worker finish its jobs', async () => {
    const queue = new InProcessQueue();
    const release = gate();
    const worker = queue.startWorker(() => release.wait.then(() => 'finished'));
    const handle = await queue.enqueue(job('A'));
    await new Promise((resolve) => setImmediate(resolve));
    const closed = worker.close();
    release.open();
    await closed;
    expect(await handle.outcome).toMatchObject({ status: 'completed', result: 'finished' });
  });
});
