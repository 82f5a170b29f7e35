import type { Slots } from '../../core/slots.js';
import { RatchetError, toRatchetError } from '../../core/errors.js';
import { createRedactor, secretsFromEnv } from '../../core/redact.js';
import { loadPrompts, packageRoot, type PromptSet } from '../../config/prompts.js';
import { startModels } from '../../agent/models/run-models.js';
import { Git } from '../../git/git.js';
import { createProcessRunner } from '../../process/runner.js';
import type { RunContext, TaskSpacePort } from '../../workflows/definition.js';
import {
  createStaticTestReview,
  createTestReviewBreaker,
  replayReviews,
  type TestReviewBreaker,
  type TestReviewPort,
} from '../../workflows/tdd/test-review.js';
import { runTaskPipeline } from '../../workflows/tasks/task-pipeline.js';
import { createIdGenerator, systemClock } from '../effects.js';
import {
  LocalJobPayloadSchema,
  ToWorkerSchema,
  type FromWorker,
  type LocalJobResult,
  type PoolLock,
  type ToWorker,
} from './local-pool-protocol.js';
import { createTaskSpaces, taskBranch } from './task-spaces.js';

/**
 * A local worker process of a tasks run (`local-pool.ts` starts them; the CLI's `task-worker`
 * entry runs this): it runs the jobs the coordinator sends, each one attempt of one task's TDD
 * pipeline in a task space of the run's own repository, exactly as the coordinator's process
 * would, and sends each event of the pipeline back as it happens, then the outcome. What the
 * tasks share goes through the coordinator: the repository's commit lock and worktree lock (git
 * fails on two writers of one ref or of `.git/worktrees/`), the slots for the tasks' test runs,
 * and the run's test reviews (one circuit breaker's count for the run).
 *
 * It never prints and ignores SIGINT (a Ctrl-C in the terminal reaches the whole process group:
 * the coordinator decides and says `stop`); once the coordinator is gone (its channel closes) it
 * interrupts its jobs and exits.
 */

/** How long the worker waits for its interrupted jobs to clean up before it exits anyway. */
const EXIT_GRACE_MS = 10_000;

interface WorkerState {
  /** Task spaces: `fresh` for a job's first delivery, `restart` for a later one (a dead worker's branch is made anew). */
  spaces: { fresh: TaskSpacePort; restart: TaskSpacePort };
  breaker: TestReviewBreaker;
  /** The run's static test review, one breaker for every job of this process (undefined: off). */
  testReview: TestReviewPort | undefined;
  /** The prompts, read once for every job. */
  prompts: Promise<PromptSet>;
  context: Omit<RunContext<unknown>, 'commands' | 'agents' | 'signal'>;
  locks: Record<PoolLock, Slots>;
  runGit: Git;
}

/** Serves the coordinator over this process's IPC channel, which keeps the process alive until it ends. */
export function serveLocalWorker(): void {
  const send = process.send?.bind(process);
  if (send === undefined) throw new RatchetError('usage', 'A local task worker runs only as a tasks run starts it.');
  const post = (message: FromWorker): void => {
    if (process.connected) send(message);
  };
  const granted = new Map<number, () => void>();
  let requests = 0;
  const remoteLock =
    (lock: PoolLock): Slots =>
    async (work) => {
      const request = (requests += 1);
      await new Promise<void>((resolve) => {
        granted.set(request, resolve);
        post({ type: 'acquire', request, lock });
      });
      try {
        return await work();
      } finally {
        post({ type: 'release', request });
      }
    };
  const jobs = new Map<string, { abort: AbortController; done: Promise<void> }>();
  let state: WorkerState | undefined;
  let stopping = false;

  const finish = (): void => {
    if (stopping) return;
    stopping = true;
    for (const job of jobs.values()) job.abort.abort(new RatchetError('interrupted', 'The tasks run is stopping'));
    setTimeout(() => process.exit(1), EXIT_GRACE_MS).unref();
    void Promise.allSettled([...jobs.values()].map((job) => job.done)).then(() => process.exit(0));
  };

  process.on('SIGINT', () => undefined);
  process.on('disconnect', finish);
  process.on('message', (raw: unknown) => {
    const parsed = ToWorkerSchema.safeParse(raw);
    if (!parsed.success) return;
    const message: ToWorker = parsed.data;
    switch (message.type) {
      case 'init':
        // A worker that cannot set up (its models, say) dies here, before it says it is ready:
        // the coordinator gives up on the pool with what it printed.
        state = setUp(message, remoteLock);
        post({ type: 'ready' });
        return;
      case 'granted':
        granted.get(message.request)?.();
        granted.delete(message.request);
        return;
      case 'review':
        if (state !== undefined) replayReviews(state.breaker, [message]);
        return;
      case 'abort':
        jobs.get(message.jobId)?.abort.abort(new RatchetError('interrupted', 'The tasks run is stopping'));
        return;
      case 'stop':
        finish();
        return;
      case 'job': {
        if (state === undefined || stopping) {
          post({
            type: 'error',
            jobId: message.jobId,
            delivery: message.delivery,
            message: 'not ready',
            code: 'internal',
          });
          return;
        }
        const abort = new AbortController();
        const done = runJob(state, message, abort.signal, post).finally(() => jobs.delete(message.jobId));
        jobs.set(message.jobId, { abort, done });
        return;
      }
    }
  });
}

function setUp(message: Extract<ToWorker, { type: 'init' }>, remoteLock: (lock: PoolLock) => Slots): WorkerState {
  const { run, config, runDir } = message;
  const env = process.env;
  const runner = createProcessRunner();
  const models = startModels(config, { env, runner, clock: systemClock, ids: createIdGenerator(systemClock) });
  const locks = {
    commits: remoteLock('commits'),
    worktrees: remoteLock('worktrees'),
    commands: remoteLock('commands'),
  };
  const spaceOptions = { run, config, models, runner, env, runDir, serial: locks.worktrees };
  const breaker = createTestReviewBreaker(config.tdd.reviewFailureLimit);
  replayReviews(breaker, message.reviews);
  const prompts = loadPrompts({ packageRoot: packageRoot(), repoRoot: run.repoRoot });
  // A failed read fails the jobs that await it, not the process.
  prompts.catch(() => undefined);
  return {
    spaces: { fresh: createTaskSpaces(spaceOptions), restart: createTaskSpaces({ ...spaceOptions, restart: true }) },
    breaker,
    testReview: config.tdd.reviewTests ? createStaticTestReview(breaker) : undefined,
    prompts,
    context: {
      run,
      settings: {},
      config,
      redact: {
        stored: createRedactor(secretsFromEnv(env)),
        commits: createRedactor(secretsFromEnv(env), { shapes: 'keys' }),
      },
      clock: systemClock,
      runDir,
    },
    locks,
    runGit: new Git(run.worktree),
  };
}

async function runJob(
  state: WorkerState,
  message: Extract<ToWorker, { type: 'job' }>,
  signal: AbortSignal,
  post: (message: FromWorker) => void,
): Promise<void> {
  const { jobId, delivery } = message;
  let spaceBranch: string | undefined;
  try {
    const payload = LocalJobPayloadSchema.parse(message.payload);
    const { task, startPoint, baseline } = payload;
    const spaces = delivery > 1 ? state.spaces.restart : state.spaces.fresh;
    spaceBranch = taskBranch(state.context.run.id, task.key, message.attempt);
    await using space = await spaces.open({ key: task.key, attempt: message.attempt, startPoint });
    const context: RunContext<unknown> = {
      ...state.context,
      commands: space.commands,
      agents: space.agents,
      signal,
    };
    const { testReview } = state;
    const steps = runTaskPipeline(
      context,
      space,
      task,
      payload.dependencies,
      payload.settings,
      await state.prompts,
      state.locks.commits,
      {
        ...(testReview === undefined ? {} : { testReview }),
        others: payload.others,
        suiteAt: (commit) => Promise.resolve(commit === startPoint ? baseline : undefined),
        commandSlots: state.locks.commands,
        gitFor: (worktree) => state.runGit.sibling(worktree),
      },
    );
    for (;;) {
      const next = await steps.next();
      if (next.done) {
        const result: LocalJobResult = { branch: space.branch, outcome: next.value };
        post({ type: 'result', jobId, delivery, result });
        return;
      }
      post({ type: 'event', jobId, delivery, event: next.value });
    }
  } catch (error) {
    const failure = toRatchetError(error);
    // A task that breaks (its space, a commit) fails as it would in the coordinator's process;
    // only an interruption is the job's own.
    if (failure.code === 'interrupted' || spaceBranch === undefined)
      post({ type: 'error', jobId, delivery, message: failure.message, code: failure.code });
    else
      post({
        type: 'result',
        jobId,
        delivery,
        result: { branch: spaceBranch, outcome: { status: 'failed', reason: failure.message, code: failure.code } },
      });
  }
}
