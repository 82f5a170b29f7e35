import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { RatchetError } from '../../core/errors.js';
import type { EventInput } from '../../core/events.js';
import { createSlots, type Slots } from '../../core/slots.js';
import type { ResolvedConfig } from '../../config/resolved.js';
import type { LocalTaskOpener, RemoteTaskPort, RunInfo } from '../../workflows/definition.js';
import type { RecordedReview } from '../../workflows/tdd/test-review.js';
import { InProcessQueue, type InProcessWorker } from '../queue/in-process-queue.js';
import type { JobContext, JsonValue, TaskJob } from '../queue/types.js';
import {
  FromWorkerSchema,
  LocalJobResultSchema,
  RecordedReviewSchema,
  type FromWorker,
  type LocalJobPayload,
  type PoolLock,
  type ToWorker,
} from './local-pool-protocol.js';
import { taskBranch } from './task-spaces.js';
import { followJob, type JobListeners } from './task-updates.js';

/**
 * A tasks run's local worker pool as processes (the CLI's default; seed 000's worker pool). The
 * coordinator (this process) schedules, merges, runs the full suite and records; the tasks'
 * pipelines run in worker processes it starts, one per core at most (`--workers 8` on two cores:
 * two processes of four slots each), each slot one task at a time. A worker process sends every
 * event of its tasks back as it happens, and asks the coordinator for what the tasks share: the
 * repository's commit and worktree locks and the slots for test runs.
 *
 * Why processes: the pipelines' own work (building prompts, reading replies, git and test-runner
 * output, the test review) is CPU that a single process would spend between every model call
 * of every task, the coordinator's progress and merges waiting behind it; here it runs on the
 * other cores, and the coordinator stays idle while the models think (`bench/workers.ts`). And
 * a worker can be killed like a queue's: its tasks start again on another slot as their next
 * delivery (their branch made anew from the start point, so the dead worker's commits are never
 * merged), on a new process started in its place.
 *
 * The jobs go through the in-process queue (its deliveries, stale deliveries refused), so the
 * scheduler sees the same updates as from a Redis queue's workers.
 */

export interface LocalPoolOptions {
  run: RunInfo;
  config: ResolvedConfig;
  /** `.ratchet/runs/<run-id>/`. */
  runDir: string;
  /** The environment the workers run with (the provider's keys are read from it). */
  env: Readonly<Record<string, string | undefined>>;
  /** The worker executable: a module that calls `serveLocalWorker()`, and Node's options for it. */
  entry: { path: string; execArgv?: readonly string[] };
  signal?: AbortSignal;
  /** Processes at most (default: the cores this process may use). */
  processes?: number;
}

/** Worker processes that exit before they are set up, in a row, after which the pool gives up. */
const START_FAILURES = 2;
/** Worker processes started in place of dead ones, per process of the pool, after which it gives up. */
const RESTARTS_PER_PROCESS = 3;
/** How long a stopping worker gets to clean its task spaces up before it is killed. */
const STOP_GRACE_MS = 15_000;
const STDERR_TAIL = 4000;

interface PoolProcess {
  readonly index: number;
  readonly child: ChildProcess;
  readonly slots: InProcessWorker[];
  /** The jobs it runs, by id: the queue's context and the handler's settlement. */
  readonly jobs: Map<string, { context: JobContext; resolve(value: JsonValue): void; reject(error: Error): void }>;
  /** Locks it holds, by its request number. */
  readonly held: Map<number, () => void>;
  ready: boolean;
  exited: Promise<void>;
  gone: boolean;
  stderr: string;
}

export function createLocalTasks(options: LocalPoolOptions): LocalTaskOpener {
  return { open: ({ workers, reviews }) => Promise.resolve(openLocalPool(options, workers, reviews)) };
}

function openLocalPool(options: LocalPoolOptions, workers: number, reviews: readonly RecordedReview[]): RemoteTaskPort {
  const { run } = options;
  const queue = new InProcessQueue<JsonValue, JsonValue>();
  const listeners: JobListeners = new Map();
  const unsubscribe = queue.subscribe((update) => listeners.get(update.jobId)?.(update));
  const locks: Record<PoolLock, Slots> = {
    commits: createSlots(1),
    worktrees: createSlots(1),
    // The tasks' tests, lint and typecheck: CPU work, as many at once as there are cores.
    commands: createSlots(availableParallelism()),
  };
  const slotCount = Math.max(1, workers);
  const processCount = Math.max(1, Math.min(slotCount, options.processes ?? availableParallelism()));
  const processes: Array<PoolProcess | undefined> = [];
  let startFailures = 0;
  let restarts = 0;
  let closing = false;
  let failPool: (error: RatchetError) => void = () => undefined;
  const broken = new Promise<never>((_, reject) => {
    failPool = reject;
  });
  broken.catch(() => undefined);

  const post = (target: PoolProcess, message: ToWorker): void => {
    // A worker that died meanwhile misses it: its death is seen (`close`) and its jobs go elsewhere.
    if (!target.gone && target.child.connected) target.child.send(message, () => undefined);
  };

  const start = (index: number): void => {
    const child = fork(options.entry.path, [], {
      execArgv: [...(options.entry.execArgv ?? [])],
      // Node leaves out the variables whose value is undefined.
      env: { ...options.env },
      cwd: run.repoRoot,
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const target: PoolProcess = {
      index,
      child,
      slots: [],
      jobs: new Map(),
      held: new Map(),
      ready: false,
      exited: Promise.resolve(),
      gone: false,
      stderr: '',
    };
    target.exited = new Promise<void>((resolve) => {
      const end = (why: string): void => {
        if (target.gone) return;
        target.gone = true;
        exited(target, why);
        resolve();
      };
      // `close`, not `exit`: what it printed as it died has been read by then.
      child.on('close', (code, signal) => end(signal === null ? `exit code ${String(code)}` : `signal ${signal}`));
      // Not started at all (no executable); a failed send has its own callback.
      child.on('error', (error) => {
        if (child.pid === undefined) end(error.message);
      });
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      target.stderr = (target.stderr + chunk.toString()).slice(-STDERR_TAIL);
    });
    child.on('message', (raw: unknown) => {
      const parsed = FromWorkerSchema.safeParse(raw);
      if (parsed.success) received(target, parsed.data);
    });
    processes[index] = target;
    post(target, { type: 'init', run, config: options.config, runDir: options.runDir, reviews: [...reviews] });
    for (let slot = index; slot < slotCount; slot += processCount) {
      const id = `worker-${slot + 1} pid ${String(child.pid ?? '?')}`;
      target.slots.push(queue.startWorker((context) => handle(target, context), { id }));
    }
  };

  const handle = (target: PoolProcess, context: JobContext): Promise<JsonValue> =>
    new Promise<JsonValue>((resolve, reject) => {
      target.jobs.set(context.jobId, { context, resolve, reject });
      context.signal.addEventListener(
        'abort',
        () => {
          target.jobs.delete(context.jobId);
          post(target, { type: 'abort', jobId: context.jobId });
        },
        { once: true },
      );
      post(target, {
        type: 'job',
        jobId: context.jobId,
        delivery: context.delivery,
        attempt: context.job.attempt,
        payload: context.job.payload,
      });
    });

  const received = (target: PoolProcess, message: FromWorker): void => {
    switch (message.type) {
      case 'ready':
        target.ready = true;
        startFailures = 0;
        return;
      case 'event': {
        const job = target.jobs.get(message.jobId);
        if (job === undefined || job.context.delivery !== message.delivery) return;
        // A refused emit is a delivery replaced meanwhile: what it says no longer counts.
        job.context.emit(message.event as JsonValue).catch(() => undefined);
        const { event } = message;
        const review =
          event.type === 'stage-end' && event.stage === 'REVIEW_TESTS' && RecordedReviewSchema.safeParse(event);
        if (review && review.success) {
          const { outcome, reason } = review.data;
          for (const other of processes)
            if (other !== undefined && other !== target)
              post(other, { type: 'review', outcome, ...(reason === undefined ? {} : { reason }) });
        }
        return;
      }
      case 'result': {
        const job = target.jobs.get(message.jobId);
        if (job === undefined || job.context.delivery !== message.delivery) return;
        target.jobs.delete(message.jobId);
        const result = LocalJobResultSchema.safeParse(message.result);
        const expected = taskBranch(run.id, job.context.job.taskKey, job.context.job.attempt);
        if (!result.success || result.data.branch !== expected)
          job.reject(new Error('its worker returned a result Ratchet does not write'));
        else job.resolve(result.data.outcome);
        return;
      }
      case 'error': {
        const job = target.jobs.get(message.jobId);
        if (job === undefined || job.context.delivery !== message.delivery) return;
        target.jobs.delete(message.jobId);
        job.reject(new RatchetError('internal', message.message));
        return;
      }
      case 'acquire':
        void locks[message.lock](
          () =>
            new Promise<void>((release) => {
              // A worker gone meanwhile holds nothing.
              if (target.gone) return release();
              target.held.set(message.request, release);
              post(target, { type: 'granted', request: message.request });
            }),
        );
        return;
      case 'release':
        target.held.get(message.request)?.();
        target.held.delete(message.request);
        return;
    }
  };

  const exited = (target: PoolProcess, why: string): void => {
    // What a dead worker held is free: git's own lock files are gone with its git processes.
    for (const release of target.held.values()) release();
    target.held.clear();
    const running = [...target.jobs.values()];
    target.jobs.clear();
    if (closing) return;
    const stderr = target.stderr.trim();
    const said = `worker process ${String(target.child.pid ?? '?')} stopped (${why})${stderr ? `: ${stderr.split('\n').slice(-3).join(' ')}` : ''}`;
    for (const { context } of running)
      listeners.get(context.jobId)?.({
        type: 'job-event',
        jobId: context.jobId,
        delivery: context.delivery,
        seq: 0,
        event: { type: 'warning', message: `${context.job.taskKey}: ${said}; it starts again on another worker` },
      });
    // Its jobs go back to the queue as their next delivery (the queue gives up after three).
    for (const slot of target.slots) slot.kill();
    if (!target.ready) startFailures += 1;
    restarts += 1;
    if (startFailures >= START_FAILURES || restarts > RESTARTS_PER_PROCESS * processCount) {
      failPool(
        new RatchetError(
          'internal',
          `The tasks run's worker processes ${target.ready ? 'keep stopping' : 'do not start'}: ${said}.`,
          { hint: 'Run `ratchet doctor`; `ratchet resume` continues the run once the cause is fixed.' },
        ),
      );
      return;
    }
    start(target.index);
  };

  for (let index = 0; index < processCount; index++) start(index);

  return {
    async *run(request) {
      const branch = taskBranch(run.id, request.task.key, request.attempt);
      const payload: LocalJobPayload = {
        task: request.task,
        dependencies: request.dependencies,
        others: request.others ?? [],
        startPoint: request.startPoint,
        settings: request.settings,
        ...(request.baseline === undefined ? {} : { baseline: request.baseline }),
      };
      const job: TaskJob = {
        runId: run.id,
        taskKey: request.task.key,
        attempt: request.attempt,
        // The worker parses it back with `LocalJobPayloadSchema`.
        payload,
      };
      const outcome = yield* followJob(queue, listeners, job, {
        request,
        branch,
        eventOf: localEvent,
        signal: options.signal,
        stopped: broken,
      });
      return { branch, outcome };
    },
    async [Symbol.asyncDispose]() {
      closing = true;
      const alive = processes.filter((target): target is PoolProcess => target !== undefined && !target.gone);
      for (const target of alive) post(target, { type: 'stop' });
      await Promise.all(
        alive.map(async (target) => {
          const timer = setTimeout(() => target.child.kill('SIGKILL'), STOP_GRACE_MS);
          await target.exited;
          clearTimeout(timer);
        }),
      );
      unsubscribe();
      await queue.close();
    },
  };
}

/** An event of a local worker's task, tagged with the task (the worker is this version of Ratchet). */
function localEvent(value: JsonValue, task: string): { ok: true; event: EventInput } | { ok: false; why: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof value.type !== 'string')
    return { ok: false, why: 'not an event' };
  return { ok: true, event: { ...value, task } as unknown as EventInput };
}
