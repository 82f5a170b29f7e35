import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import type { Clock, IdGenerator } from '../../core/effects.js';
import { RatchetError } from '../../core/errors.js';
import { createRedactor, redactValue, secretsFromEnv } from '../../core/redact.js';
import { loadPrompts, packageRoot } from '../../config/prompts.js';
import type { ResolvedConfig } from '../../config/resolved.js';
import { startModels } from '../../agent/models/run-models.js';
import { Git } from '../../git/git.js';
import type { ProcessRunner } from '../../process/types.js';
import type { RunContext, RunInfo } from '../../workflows/definition.js';
import { createStaticTestReview, createTestReviewBreaker } from '../../workflows/tdd/test-review.js';
import { createCommitLock, runTaskPipeline } from '../../workflows/tasks/task-pipeline.js';
import type { JobContext, JsonValue, QueueWorker } from '../queue/types.js';
import { isStreamedEvent, TaskJobPayloadSchema, type TaskJobResult } from './task-job.js';
import { createTaskSpaces } from './task-spaces.js';

/**
 * A worker of a tasks run's Redis queue (`ratchet worker --queue redis://...`), on any machine
 * that reaches Redis and the run's published repository. For each job (one attempt of one task)
 * it fetches the run branch into its own repository under `$RATCHET_HOME/workers/`, makes the
 * task's worktree and branch there from the job's start point (anew: a job started again after
 * its first worker died does not continue that worker's commits), runs the task's TDD pipeline
 * in it, sandboxed as any run, with this machine's provider, model and keys (none crosses the
 * queue), streams the pipeline's events back (redacted of this machine's secrets), and pushes
 * the task's branch to the published repository once (`effect`: a later delivery of the same job
 * gets the recorded push instead of pushing again). A pipeline that fails is a result
 * (`failed`), for the coordinator's scheduler to judge; only what breaks the worker fails the job.
 */

export interface TaskWorkerOptions {
  /** `redis://host:port[/db]`. */
  url: string;
  /** Redis's password when the URL holds none (`REDIS_PASSWORD`). */
  password?: string;
  /** Jobs at once. */
  concurrency: number;
  /**
   * The repositories it fetches from and pushes to: a job naming any other is refused before any
   * git or model call (see `allowedRepository`).
   */
  repositories: readonly string[];
  /**
   * A checkout of the project on this machine whose installed dependency folders (`node_modules`,
   * `.venv`) every task's worktree shares read-only, as a local run shares the user's; none: the
   * tasks' tests run without them.
   */
  dependencies?: string;
  /** How long a job's lock lasts unrenewed before another worker takes the job over (ms). */
  lockDurationMs?: number;
  /** This machine's settings: provider, model, sandbox, stage limits, `$RATCHET_HOME`. */
  config: ResolvedConfig;
  runner: ProcessRunner;
  env: Record<string, string | undefined>;
  clock: Clock;
  ids: IdGenerator;
  /** Default `<hostname>:<pid>`. */
  id?: string;
  /** What the worker does, one line each (the CLI prints them). */
  onProgress?: (message: string) => void;
  /** Connection problems (the clients retry on their own). */
  onError?: (error: Error) => void;
}

const RUN_ID = /^[A-Za-z0-9._-]+$/;

/**
 * Whether a job's repository is one the worker was told to serve: inside one of `allowed` (a
 * directory, or a URL prefix such as `ssh://git@host/srv/git/`), with no `..` to climb out.
 * Whoever can write to the queue's Redis can enqueue a job; without this, a job naming another
 * repository of the worker's machine (a path) would have the worker run that repository's code
 * past the model and stream what it read back through Redis, and push a branch into it.
 */
function allowedRepository(repository: string, allowed: readonly string[]): boolean {
  if (repository.split(/[\\/]/).includes('..')) return false;
  const url = /^[a-z][a-z0-9+.-]*:/i.test(repository) && !repository.startsWith('file://');
  return allowed.some((prefix) => {
    const local = !/^[a-z][a-z0-9+.-]*:/i.test(prefix);
    if (local && url) return false;
    const base = local ? resolve(prefix) : prefix;
    const target = local ? resolve(repository.replace(/^file:\/\//, '')) : repository;
    if (target === base) return true;
    return target.startsWith(base.endsWith('/') ? base : `${base}${local ? sep : '/'}`);
  });
}

export async function startTaskWorker(options: TaskWorkerOptions): Promise<QueueWorker> {
  const { config } = options;
  const home = config.home;
  const models = startModels(config, {
    env: options.env,
    runner: options.runner,
    clock: options.clock,
    ids: options.ids,
  });
  const redact = {
    stored: createRedactor(secretsFromEnv(options.env)),
    commits: createRedactor(secretsFromEnv(options.env), { shapes: 'keys' }),
  };
  // One lock for the worker's git work in its repositories: fetches, worktrees, commits and notes.
  const lock = createCommitLock();
  const progress = options.onProgress ?? ((): void => undefined);
  // The static review of test quality, as on the coordinator's own workers: one breaker for every
  // job this worker runs (a review that keeps failing here stops here, and says so).
  const testReview = config.tdd.reviewTests
    ? createStaticTestReview(createTestReviewBreaker(config.tdd.reviewFailureLimit))
    : undefined;

  const handler = async (job: JobContext): Promise<JsonValue> => {
    const payload = TaskJobPayloadSchema.parse(job.job.payload);
    const { runId, taskKey, attempt } = job.job;
    if (!RUN_ID.test(runId) || payload.task.key !== taskKey)
      throw new RatchetError('usage', `Job ${job.jobId} is not one Ratchet enqueues.`);
    if (!allowedRepository(payload.repository, options.repositories))
      throw new RatchetError(
        'usage',
        `Job ${job.jobId} names the repository ${payload.repository}, which this worker does not take jobs for (--repositories ${options.repositories.join(' ')}).`,
      );
    progress(`${taskKey} (run ${runId}, attempt ${attempt}, delivery ${job.delivery}): started`);
    const clone = join(
      home,
      'workers',
      'repositories',
      createHash('sha256').update(payload.repository).digest('hex').slice(0, 16),
    );
    await lock(async () => {
      const git = existsSync(clone) ? new Git(clone) : await Git.init(clone);
      await git.fetchRef(payload.repository, `refs/heads/${payload.runBranch}`, `refs/published/${payload.runBranch}`);
      if ((await git.revParse(`${payload.startPoint}^{commit}`)) === null)
        throw new RatchetError('git', `${payload.repository} does not hold the start point ${payload.startPoint}.`);
    });
    const run: RunInfo = {
      id: runId,
      repoRoot: clone,
      target: clone,
      isGit: true,
      hidden: [],
      worktree: join(home, 'worktrees', runId),
      branch: payload.runBranch,
      baseBranch: null,
      baseCommit: payload.startPoint,
      feature: payload.task.title,
    };
    const runDir = join(home, 'workers', 'runs', runId);
    const spaces = createTaskSpaces({
      run,
      config,
      models,
      runner: options.runner,
      env: options.env,
      runDir,
      restart: true,
      ...(options.dependencies === undefined ? {} : { dependencies: options.dependencies }),
    });
    await using space = await lock(() => spaces.open({ key: taskKey, attempt, startPoint: payload.startPoint }));
    const context: RunContext<unknown> = {
      run,
      settings: {},
      config,
      commands: space.commands,
      agents: space.agents,
      redact,
      clock: options.clock,
      runDir,
      signal: job.signal,
    };
    const prompts = await loadPrompts({ packageRoot: packageRoot(), repoRoot: space.worktree });
    const steps = runTaskPipeline(context, space, payload.task, payload.dependencies, payload.settings, prompts, lock, {
      testReview,
      others: payload.others,
    });
    let next = await steps.next();
    while (next.done !== true) {
      if (isStreamedEvent(next.value)) await job.emit(redactValue(next.value, redact.stored) as unknown as JsonValue);
      next = await steps.next();
    }
    const outcome = next.value;
    if (outcome.status === 'failed') {
      progress(`${taskKey}: failed (${outcome.reason})`);
      return { status: 'failed', reason: redact.stored(outcome.reason), code: outcome.code } satisfies TaskJobResult;
    }
    const git = new Git(space.worktree);
    const head = await job.effect('push', async () => {
      await git.pushRef(payload.repository, outcome.head, `refs/heads/${payload.taskBranch}`);
      return outcome.head;
    });
    progress(`${taskKey}: done, pushed ${payload.taskBranch} (${head.slice(0, 8)})`);
    return { status: 'done', head } satisfies TaskJobResult;
  };

  // A job that breaks the worker fails (the coordinator says why); the worker's own lines say so too.
  const reported = async (job: JobContext): Promise<JsonValue> => {
    try {
      return await handler(job);
    } catch (error) {
      progress(
        `job ${job.jobId} (delivery ${job.delivery}) failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      throw error;
    }
  };

  // BullMQ loads with the first worker, not with every command of the CLI (which imports this file).
  const { startRedisWorker } = await import('../queue/redis-worker.js');
  return startRedisWorker(reported, {
    url: options.url,
    ...(options.password === undefined ? {} : { password: options.password }),
    concurrency: options.concurrency,
    ...(options.id === undefined ? {} : { id: options.id }),
    ...(options.lockDurationMs === undefined
      ? {}
      : { lockDurationMs: options.lockDurationMs, stalledIntervalMs: options.lockDurationMs }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
}
