import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import { RatchetError } from '../../core/errors.js';
import { loadPrompts, packageRoot } from '../../config/prompts.js';
import { detectTestCommand, FRAMEWORKS, type Framework } from '../../verify/detect.js';
import { requireReadableResults } from '../../verify/run-tests.js';
import type { RunContext, RunStart, Steps, WorkflowDefinition } from '../definition.js';
import { recordedReviews } from '../tdd/test-review.js';
import { runTasks, type ResumedTasks, type TasksResult } from './run-tasks.js';
import { findTasksResumePoint } from './resume-point.js';
import { checkTasksJson, describeProblems, TasksFileSchema, type TasksFile } from './tasks-file.js';

/** What starts a tasks run: the tasks file (absolute path) and the size of the worker pool. */
interface TasksRequest {
  tasksFile: string;
  workers: number;
  /** `--queue redis://...` (and `--publish URL`): the tasks run on that queue's workers. */
  queue?: TasksQueue;
}

const TasksQueueSchema = z.object({
  // No password in it: the run stores it (for `resume`); the password comes from REDIS_PASSWORD.
  url: z.string().regex(/^rediss?:\/\/[^/@]*(?:\/|$)/),
  /** Where the run publishes its repository for the workers; null: a bare repository under `$RATCHET_HOME`. */
  publish: z.string().min(1).nullable(),
});
type TasksQueue = z.infer<typeof TasksQueueSchema>;

/** The most workers a run may ask for: each is a worktree, a sandbox and an agent at once. */
const MAX_WORKERS = 32;

/**
 * What a tasks run stores: its tasks (the file as validated at the start, so a changed or
 * deleted file changes nothing of the run), the pool's size, and, as a TDD run stores them, the
 * test command, framework and refactor mode every task's pipeline uses.
 */
const TasksSettingsSchema = z.object({
  tasks: TasksFileSchema.optional(),
  workers: z.number().int().min(1).max(MAX_WORKERS).optional(),
  testCommand: z.string().optional(),
  framework: z.enum(FRAMEWORKS).optional(),
  refactor: z.enum(['always', 'when-needed', 'never']).optional(),
  queue: TasksQueueSchema.optional(),
});
type TasksSettings = z.infer<typeof TasksSettingsSchema>;

interface TasksTypes {
  request: TasksRequest;
  checked: { tasks: TasksFile; workers: number; testCommand: string; framework: Framework; queue?: TasksQueue };
  settings: TasksSettings;
  prepared: undefined;
  state: ResumedTasks;
  result: TasksResult;
}

/** Reads and validates a tasks file: a usage error names every problem (or that it cannot be read). */
async function readTasksFile(path: string): Promise<TasksFile> {
  return (await readTasksInput(path)).file;
}

/** The tasks file at `path` and the specification it names (see `TasksFileCheck`), or a usage error. */
export async function readTasksInput(path: string): Promise<{ file: TasksFile; spec: string | null }> {
  const text = await readFile(path, 'utf8').catch((error: unknown) => {
    throw new RatchetError('usage', `Cannot read the tasks file ${path}.`, {
      hint: 'Write one with `ratchet tasks plan spec.md`, or by hand (see the README).',
      cause: error,
    });
  });
  const check = checkTasksJson(text);
  if (!check.ok)
    throw new RatchetError('usage', `The tasks file ${path} is invalid:\n${describeProblems(check.problems)}`, {
      hint: 'Fix every problem listed, then run it again.',
      details: { problems: check.problems },
    });
  return { file: check.file, spec: check.spec };
}

/**
 * `ratchet tasks run` (seed 000's worker pool): the tasks of a tasks file, each through the TDD
 * pipeline in its own worktree and branch, merged into the run branch in dependency order with
 * the full suite after each merge (`run-tasks.ts`). A hand-written tasks file runs with no
 * planning call. Its runs are accepted, rejected and resumed as any run.
 */
export const tasksWorkflow: WorkflowDefinition<TasksTypes> = {
  name: 'tasks',
  startCommand: 'ratchet tasks run tasks.json',
  settings: TasksSettingsSchema,
  plainDirectories: false,
  checkLoginFirst: false,
  // Its progress is the tasks' states in the ledger; `ratchet tasks status` shows each task's stages.
  progress: {
    kind: 'own',
    async lines(run, ledger) {
      const tasks = await ledger.tasks.tasks(run.id);
      const counts = new Map<string, number>();
      for (const task of tasks) counts.set(task.status, (counts.get(task.status) ?? 0) + 1);
      const states = [...counts].map(([status, count]) => `${count} ${status}`).join(', ');
      return [
        [
          'tasks',
          tasks.length === 0
            ? 'none recorded yet'
            : `${states} of ${tasks.length}; each task's stages: ratchet tasks status ${run.id}`,
        ],
      ];
    },
  },
  feature: (request) => `tasks of ${basename(request.tasksFile)}`,
  async check(request, { repoRoot, config }) {
    if (!Number.isInteger(request.workers) || request.workers < 1 || request.workers > MAX_WORKERS)
      throw new RatchetError('usage', `--workers must be an integer from 1 to ${MAX_WORKERS}.`, {
        hint: 'e.g. --workers 3',
      });
    // Each task's agents have model clients of their own, and their calls interleave: one
    // ordered cassette cannot be replayed across them.
    if (config.provider.name === 'replay')
      throw new RatchetError(
        'usage',
        '`ratchet tasks run` cannot replay a cassette: its tasks call the model at once.',
        {
          hint: 'Run the tasks with an API provider (or a local one: --provider ollama).',
        },
      );
    if (request.queue !== undefined && !TasksQueueSchema.safeParse(request.queue).success)
      throw new RatchetError('usage', '--queue must be a Redis URL without credentials: redis://host:port[/db].', {
        hint: 'e.g. --queue redis://127.0.0.1:6379; a password goes in REDIS_PASSWORD (the run stores its queue URL to resume).',
      });
    const tasks = await readTasksFile(request.tasksFile);
    const detected = await detectTestCommand(repoRoot, config.test.command);
    await requireReadableResults({ command: detected.command, framework: detected.framework, cwd: repoRoot });
    return {
      checked: {
        tasks,
        workers: request.workers,
        testCommand: detected.command,
        framework: detected.framework,
        ...(request.queue === undefined ? {} : { queue: request.queue }),
      },
    };
  },
  async preflight({ repoRoot }) {
    await loadPrompts({ packageRoot: packageRoot(), repoRoot });
  },
  settle: (checked, { config }) =>
    Promise.resolve({ settings: { ...checked, refactor: config.tdd.refactor }, events: [] }),
  run: runTasksSteps,
  resume: {
    point: ({ git, run, ledger }) => findTasksResumePoint(git, run, ledger),
    async state({ run, ledger }) {
      const tasks = (await ledger.tasks.tasks(run.id)).map((row) => ({
        key: row.key,
        status: row.status,
        attempts: row.attempts,
        branch: row.branch,
      }));
      return { tasks, reviews: await recordedReviews(ledger, run.id) };
    },
  },
};

async function* runTasksSteps(context: RunContext<TasksSettings>, from: RunStart<TasksTypes>): Steps<TasksResult> {
  const { settings } = context;
  if (settings.tasks === undefined || settings.testCommand === undefined || settings.framework === undefined)
    throw new RatchetError('internal', `Run ${context.run.id} stored no tasks or test command.`);
  const pipeline = {
    testCommand: settings.testCommand,
    framework: settings.framework,
    refactor: settings.refactor ?? context.config.tdd.refactor,
  };
  const resumed = from.kind === 'resume' ? from.state : { tasks: [], reviews: [] };
  const workers = settings.workers ?? 1;
  if (settings.queue === undefined) {
    if (context.localTasks === undefined) return yield* runTasks(context, settings.tasks, workers, pipeline, resumed);
    // The engine's worker processes: the pipelines run there, this process schedules and merges.
    await using local = await context.localTasks.open({ workers, reviews: resumed.reviews });
    return yield* runTasks(context, settings.tasks, workers, pipeline, resumed, local);
  }
  if (context.remoteTasks === undefined)
    throw new RatchetError('internal', 'The engine gave this tasks run no queue to run its tasks on.');
  // On a queue every task that can start is enqueued: the workers' `--concurrency` bounds what runs at once.
  await using remote = await context.remoteTasks.open(settings.queue);
  return yield* runTasks(context, settings.tasks, settings.tasks.tasks.length, pipeline, resumed, remote);
}
