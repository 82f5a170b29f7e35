/**
 * The local worker pool's coordinator side (`createLocalTasks`) with fake worker processes: small
 * scripts that speak the pool's IPC protocol (`local-pool-protocol.ts`) and misbehave as real
 * workers can (die at start, die holding the commit lock). What the pool must do: give up with
 * what the workers printed instead of waiting forever, free a dead worker's locks, start a new
 * process in its place and deliver the job again there.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventInput } from '../../src/core/events.js';
import { loadConfig } from '../../src/config/load.js';
import type { ResolvedConfig } from '../../src/config/resolved.js';
import { createLocalTasks } from '../../src/engine/tasks/local-pool.js';
import type { RemoteTaskPort, RemoteTaskRequest, RunInfo, TaskAttemptOutcome } from '../../src/workflows/definition.js';

const RUN_ID = '20261126-120000-abcd';
const HEAD = 'a'.repeat(40);

/** A worker that dies as it starts, saying why on stderr. */
const DIES_AT_START = `process.stderr.write('boom: this worker cannot set itself up\\n');\nprocess.exit(3);\n`;

/**
 * A worker that takes the commit lock for each job; on a job's first delivery it dies holding it,
 * on a later one it releases it and reports the task done.
 */
const DIES_HOLDING_THE_LOCK = `
let job;
process.on('message', (message) => {
  if (message.type === 'init') process.send({ type: 'ready' });
  if (message.type === 'job') {
    job = message;
    process.send({ type: 'event', jobId: job.jobId, delivery: job.delivery, event: { type: 'log', message: 'delivery ' + job.delivery } });
    process.send({ type: 'acquire', request: 1, lock: 'commits' });
  }
  if (message.type === 'granted') {
    if (job.delivery === 1) process.exit(9);
    process.send({ type: 'release', request: 1 });
    const branch = 'ratchet/${RUN_ID}-' + job.payload.task.key + '-' + job.attempt;
    process.send({ type: 'result', jobId: job.jobId, delivery: job.delivery, result: { branch, outcome: { status: 'done', head: '${HEAD}' } } });
  }
  if (message.type === 'stop') process.exit(0);
});
`;

/**
 * A worker whose task A's review fails internally, and whose task B reports the reviews its
 * process heard of from the coordinator before it finishes (it waits for one).
 */
const REVIEWS = `
const heard = [];
let waiting;
const finish = (job) => {
  process.send({ type: 'event', jobId: job.jobId, delivery: job.delivery, event: { type: 'log', message: 'heard ' + heard.join(', ') } });
  const branch = 'ratchet/${RUN_ID}-' + job.payload.task.key + '-' + job.attempt;
  process.send({ type: 'result', jobId: job.jobId, delivery: job.delivery, result: { branch, outcome: { status: 'done', head: '${HEAD}' } } });
};
process.on('message', (message) => {
  if (message.type === 'init') process.send({ type: 'ready' });
  if (message.type === 'review') {
    heard.push(message.outcome + ' ' + message.reason);
    if (waiting) finish(waiting);
  }
  if (message.type === 'job' && message.payload.task.key === 'A') {
    const review = { type: 'stage-end', stage: 'REVIEW_TESTS', phase: 'RED', cycle: 1, attempt: 1, outcome: 'error', reason: 'the review failed (1 of 2 in a row): unparsable' };
    process.send({ type: 'event', jobId: message.jobId, delivery: message.delivery, event: review });
    finish(message);
  }
  if (message.type === 'job' && message.payload.task.key === 'B') {
    if (heard.length > 0) finish(message);
    else waiting = message;
  }
  if (message.type === 'stop') process.exit(0);
});
`;

function request(key: string): RemoteTaskRequest {
  const task = {
    key,
    title: `Task ${key}`,
    goal: 'g',
    acceptanceCriteria: ['c'],
    testFile: `test/${key}.test.js`,
    implFile: `src/${key}.js`,
    dependsOn: [],
    exports: [],
  };
  return {
    task,
    dependencies: [],
    attempt: 1,
    startPoint: HEAD,
    settings: { testCommand: 'node --test', framework: 'node-test', refactor: 'never' },
  };
}

async function drain(
  port: RemoteTaskPort,
  key: string,
): Promise<{ events: EventInput[]; result: { branch: string; outcome: TaskAttemptOutcome } }> {
  const events: EventInput[] = [];
  const steps = port.run(request(key));
  for (;;) {
    const next = await steps.next();
    if (next.done) return { events, result: next.value };
    events.push(next.value);
  }
}

const scripts = [DIES_AT_START, DIES_HOLDING_THE_LOCK, REVIEWS];

describe('the local worker pool (fake worker processes)', () => {
  let dir: string;
  let config: ResolvedConfig;
  const run = (): RunInfo => ({
    id: RUN_ID,
    repoRoot: dir,
    target: dir,
    isGit: true,
    hidden: [],
    worktree: join(dir, 'worktree'),
    branch: `ratchet/${RUN_ID}`,
    baseBranch: null,
    baseCommit: HEAD,
    feature: 'f',
  });
  const open = async (script: string, workers: number, processes: number): Promise<RemoteTaskPort> => {
    const entry = join(dir, `worker-${scripts.indexOf(script)}.mjs`);
    await writeFile(entry, script);
    return createLocalTasks({
      run: run(),
      config,
      runDir: join(dir, 'run'),
      env: { PATH: process.env.PATH },
      entry: { path: entry },
      processes,
    }).open({ workers, reviews: [] });
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ratchet-local-pool-'));
    config = await loadConfig({ repoRoot: dir, env: { RATCHET_HOME: join(dir, 'home') } });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('gives up with what the workers printed when they cannot start, instead of waiting forever', async () => {
    await using port = await open(DIES_AT_START, 2, 2);
    await expect(drain(port, 'A')).rejects.toThrow(
      /do not start: worker process \d+ stopped \(exit code 3\): boom: this worker cannot set itself up/,
    );
  });

  it('frees the lock a dead worker held, starts a process in its place and delivers its job there', async () => {
    // One process: the job's second delivery can only run on the process started in its place,
    // and only once the dead one's commit lock is free again.
    await using port = await open(DIES_HOLDING_THE_LOCK, 1, 1);
    const { events, result } = await drain(port, 'A');
    expect(result).toEqual({ branch: `ratchet/${RUN_ID}-A-1`, outcome: { status: 'done', head: HEAD } });
    const said = events.map((event) => ('message' in event ? event.message : event.type));
    expect(said).toContainEqual(
      expect.stringMatching(/^A: worker process \d+ stopped \(exit code 9\); it starts again on another worker$/),
    );
    expect(said).toContainEqual(expect.stringMatching(/^A: re-delivered to worker-1 pid \d+ \(delivery 2\)/));
    expect(said).toEqual(expect.arrayContaining(['delivery 1', 'delivery 2']));
    const starts = events.flatMap((event) => (event.type === 'task-update' ? [event.worker] : []));
    expect(starts).toHaveLength(2);
    expect(starts[0]).not.toBe(starts[1]);
  });

  it("tells every other worker process of a task's test review, so the run's circuit breaker counts them all", async () => {
    // Two processes, one slot each: A runs on the first, B on the second.
    await using port = await open(REVIEWS, 2, 2);
    const [a, b] = await Promise.all([drain(port, 'A'), drain(port, 'B')]);
    const said = (events: EventInput[]): string[] =>
      events.flatMap((event) => (event.type === 'log' ? [event.message] : []));
    expect(said(a.events)).toEqual(['heard ']);
    expect(said(b.events)).toEqual(['heard error the review failed (1 of 2 in a row): unparsable']);
    expect(b.result.outcome).toEqual({ status: 'done', head: HEAD });
  });
});
