import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import { Git } from '../../git/git.js';
import type { RemoteTaskOpener, RemoteTaskPort, RunInfo } from '../../workflows/definition.js';
import { requireRedis } from '../queue/redis-check.js';
import type { JsonValue, TaskJob } from '../queue/types.js';
import { remoteEvent, type TaskJobPayload } from './task-job.js';
import { followJob, type JobListeners } from './task-updates.js';
import { taskBranch } from './task-spaces.js';
import { createCommitLock } from '../../workflows/tasks/task-pipeline.js';

/**
 * The coordinator's side of a tasks run on a Redis queue (`ratchet tasks run --queue`). The run
 * branch is published where the workers fetch it: `--publish URL` (a repository both sides
 * reach, e.g. `ssh://host/path.git`), or a bare repository this process creates under
 * `$RATCHET_HOME/published/<run-id>.git` (reachable by workers on this machine, or through a
 * shared filesystem). Before each job the run branch is pushed there at the job's start point;
 * the worker pushes the task's branch back there, and the coordinator fetches it into the run's
 * repository (checking that it grew from the start point and ends at the commit the worker
 * reported) before the scheduler merges it, exactly as a local task's branch.
 */
export function createRemoteTasks(
  run: RunInfo,
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  signal?: AbortSignal,
): RemoteTaskOpener {
  // The run stores its queue's URL (to resume), never a password: that comes from the environment.
  const password = env.REDIS_PASSWORD || undefined;
  return {
    async open(queueSettings) {
      const repository = queueSettings.publish ?? join(home, 'published', `${run.id}.git`);
      if (queueSettings.publish === null && !existsSync(join(repository, 'HEAD')))
        await Git.init(repository, { bare: true });
      await requireRedis(queueSettings.url, password);
      // BullMQ loads only for a run on a queue (the local pool's runs never need it).
      const { openRedisQueue } = await import('../queue/redis-queue.js');
      // Connection errors are retried by the clients; a job waits until its worker is heard again.
      const queue = await openRedisQueue<JsonValue, JsonValue>({
        url: queueSettings.url,
        runId: run.id,
        ...(password === undefined ? {} : { password }),
      });
      const listeners: JobListeners = new Map();
      const unsubscribe = queue.subscribe((update) => listeners.get(update.jobId)?.(update));
      const git = new Git(run.repoRoot);
      const serial = createCommitLock();
      const port: RemoteTaskPort = {
        async *run(request) {
          const branch = taskBranch(run.id, request.task.key, request.attempt);
          // Tasks that start together push the same start point: one push at a time.
          await serial(() => git.pushRef(repository, request.startPoint, `refs/heads/${run.branch}`));
          const payload: TaskJobPayload = {
            task: request.task,
            dependencies: request.dependencies,
            startPoint: request.startPoint,
            repository,
            runBranch: run.branch,
            taskBranch: branch,
            settings: request.settings,
            others: request.others ?? [],
          };
          const job: TaskJob = {
            runId: run.id,
            taskKey: request.task.key,
            attempt: request.attempt,
            payload,
          };
          const step = yield* followJob(queue, listeners, job, { request, branch, eventOf: remoteEvent, signal });
          if (step.status === 'done') await fetchTaskBranch(git, repository, branch, request.startPoint, step.head);
          return { branch, outcome: step };
        },
        async [Symbol.asyncDispose]() {
          unsubscribe();
          await queue.close();
        },
      };
      return port;
    },
  };
}

/**
 * Brings the task's branch from the published repository into the run's, refusing a branch that
 * is not the commit the worker reported or did not grow from the task's start point.
 */
async function fetchTaskBranch(
  git: Git,
  repository: string,
  branch: string,
  startPoint: string,
  head: string,
): Promise<void> {
  await git.fetchRef(repository, `refs/heads/${branch}`, `refs/heads/${branch}`);
  const fetched = await git.revParse(`refs/heads/${branch}`);
  if (fetched !== head || !(await git.isAncestor(startPoint, head)))
    throw new RatchetError('git', `The branch ${branch} in ${repository} is not what its worker reported.`, {
      details: { branch, head, fetched },
    });
}
