import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { EventInput } from '../../core/events.js';
import { RatchetError, toRatchetError } from '../../core/errors.js';
import { createSlots } from '../../core/slots.js';
import type { TaskStatus } from '../../core/tasks.js';
import { loadPrompts, packageRoot } from '../../config/prompts.js';
import { Git } from '../../git/git.js';
import { verifyGate } from '../../verify/gates.js';
import type { RemoteTaskPort, RunContext, Steps, TaskSpace } from '../definition.js';
import {
  createStaticTestReview,
  createTestReviewBreaker,
  replayReviews,
  type RecordedReview,
} from '../tdd/test-review.js';
import type { StoredTestRun } from '../tdd/ports.js';
import { createVerifierPort } from '../tdd/verifier-port.js';
import { dependentsOf, mergeOrder } from './task-graph.js';
import {
  createCommitLock,
  runTaskPipeline,
  type TaskPipelineOutcome,
  type TaskPipelineSettings,
} from './task-pipeline.js';
import type { TaskSpec, TasksFile } from './tasks-file.js';

/**
 * How many times one task runs at most: a merge that conflicts or turns the full suite red
 * re-runs the task on the new base once, then the task is blocked.
 */
const MAX_TASK_ATTEMPTS = 2;

interface TaskSummary {
  key: string;
  status: TaskStatus;
  attempts: number;
  reason: string | null;
  mergeCommit: string | null;
}

/** A task as the ledger left it when the run stopped (`ratchet resume` continues from there). */
interface ResumedTask {
  key: string;
  status: TaskStatus;
  attempts: number;
  branch: string | null;
}

/** What a resumed tasks run starts from: its tasks as the ledger left them, and the reviews it recorded. */
export interface ResumedTasks {
  tasks: readonly ResumedTask[];
  /** Its REVIEW_TESTS stage ends, oldest first: the review's circuit breaker starts from them. */
  reviews: readonly RecordedReview[];
}

export interface TasksResult {
  tasks: TaskSummary[];
}

/** What the scheduler hears from its running tasks, in the order it happened. */
type Message =
  | { kind: 'event'; event: EventInput }
  | { kind: 'finished'; key: string; branch: string; outcome: TaskPipelineOutcome }
  | { kind: 'crashed'; key: string; error: RatchetError };

/** An unbounded queue the running tasks push into and the scheduler waits on (no polling). */
function createInbox(): { push(message: Message): void; next(): Promise<Message>; takeQueued(): Message[] } {
  const queued: Message[] = [];
  let waiting: ((message: Message) => void) | undefined;
  return {
    push(message) {
      if (waiting) {
        const wake = waiting;
        waiting = undefined;
        wake(message);
      } else queued.push(message);
    },
    /** What arrived while the scheduler was busy (merging), without waiting. */
    takeQueued() {
      return queued.splice(0);
    },
    next() {
      const message = queued.shift();
      if (message !== undefined) return Promise.resolve(message);
      return new Promise((resolve) => {
        waiting = resolve;
      });
    },
  };
}

/**
 * The worker pool's scheduler (seed 000, run by the coordinator): up to `workers` tasks at once,
 * each in its own task space, started once every dependency is merged (or skipped). A finished
 * task merges into the run branch (`--no-ff`, one at a time, so in dependency order), then the
 * full suite runs there; a conflict or a red suite undoes the merge and re-runs the task on the
 * new base (up to `MAX_TASK_ATTEMPTS`), then blocks it. A failed or blocked task blocks its
 * dependents and nothing else. With `remote` (a queue), a task runs on whichever worker of the
 * queue takes it instead of in a local task space; everything else is the same. The run
 * completes when every task merged or was skipped, and otherwise fails `partial` with the
 * summary of every task (`details.tasks`).
 */
export async function* runTasks(
  context: RunContext<unknown>,
  file: TasksFile,
  workers: number,
  settings: TaskPipelineSettings,
  resumed: ResumedTasks = { tasks: [], reviews: [] },
  remote?: RemoteTaskPort,
): Steps<TasksResult> {
  const { run } = context;
  const spaces = context.taskSpaces;
  if (spaces === undefined) throw new RatchetError('internal', 'The engine gave this tasks run no task spaces.');
  const openSpace = (request: { key: string; attempt: number; startPoint: string }): Promise<TaskSpace> =>
    spaces.open(request);
  const prompts = await loadPrompts({ packageRoot: packageRoot(), repoRoot: run.repoRoot });
  const tasks = new Map(file.tasks.map((task) => [task.key, task]));
  const order = mergeOrder(file.tasks);
  const summary = new Map<string, TaskSummary>(
    file.tasks.map((task) => [
      task.key,
      { key: task.key, status: 'pending', attempts: 0, reason: null, mergeCommit: null },
    ]),
  );
  // A resumed run: what merged, failed, was blocked or skipped stays so; a task that was running
  // starts again as its next attempt (its killed attempt's branch is left, never merged); a task
  // that finished but whose merge was not recorded merges its branch without running again.
  const toMerge: Array<{ key: string; branch: string }> = [];
  for (const row of resumed.tasks) {
    const entry = summary.get(row.key);
    if (entry === undefined) continue;
    entry.attempts = row.attempts;
    if (row.status === 'done' && row.branch !== null) {
      entry.status = 'done';
      toMerge.push({ key: row.key, branch: row.branch });
    } else entry.status = row.status === 'running' || row.status === 'done' ? 'pending' : row.status;
  }
  const worktreeGit = new Git(run.worktree);
  const runGit = trackedHead(worktreeGit);
  const suite = createVerifierPort({
    worktree: run.worktree,
    repoRoot: run.repoRoot,
    outputDir: join(context.runDir, 'verify', 'merges'),
    command: settings.testCommand,
    framework: settings.framework,
    config: context.config,
    runner: context.commands.runner,
    environment: context.commands.environment,
    redact: context.redact.stored,
  });
  const lock = createCommitLock();
  const commandSlots = createSlots(availableParallelism());
  // Passing runs of the full suite by commit (the base, each merge): a task starting there reuses it.
  const suites = new Map<string, StoredTestRun>();
  const suiteAt = (commit: string): Promise<StoredTestRun | undefined> => Promise.resolve(suites.get(commit));
  // One breaker for the run: a review that keeps failing stops for every task, not task by task.
  // A resumed run's breaker counts what the review did before the stop (it may be open already).
  const breaker = createTestReviewBreaker(context.config.tdd.reviewFailureLimit);
  replayReviews(breaker, resumed.reviews);
  const testReview = context.config.tdd.reviewTests ? createStaticTestReview(breaker) : undefined;
  const inbox = createInbox();
  const running = new Map<string, { worker: string; space: TaskSpace | undefined }>();
  const freeWorkers = Array.from({ length: workers }, (_, index) => `worker-${index + 1}`);
  let interrupted: RatchetError | undefined;

  yield { type: 'tasks-plan', tasks: file.tasks, workers };

  const update = (key: string, status: TaskStatus, extra: Partial<Omit<TaskSummary, 'key' | 'status'>> = {}) => {
    const entry = summary.get(key);
    if (entry === undefined) return undefined;
    Object.assign(entry, { status, ...extra });
    return entry;
  };
  const settled = (key: string): boolean => {
    const status = summary.get(key)?.status;
    return status === 'merged' || status === 'skipped';
  };

  function start(task: TaskSpec, worker: string): EventInput {
    const entry = update(task.key, 'running');
    const attempt = (entry?.attempts ?? 0) + 1;
    if (entry) entry.attempts = attempt;
    running.set(task.key, { worker, space: undefined });
    const dependencies = task.dependsOn.flatMap((key) => tasks.get(key) ?? []);
    if (remote !== undefined) {
      void runRemote(remote, task, dependencies, attempt);
      return { type: 'log', message: `${task.key} queued (attempt ${attempt})`, task: task.key };
    }
    void (async () => {
      try {
        const startPoint = await runGit.head();
        await using space = await openSpace({ key: task.key, attempt, startPoint });
        const slot = running.get(task.key);
        if (slot) slot.space = space;
        inbox.push({
          kind: 'event',
          event: { type: 'task-update', task: task.key, status: 'running', attempt, branch: space.branch, worker },
        });
        const others = file.tasks.filter((other) => other.key !== task.key);
        const steps = runTaskPipeline(context, space, task, dependencies, settings, prompts, lock, {
          testReview,
          others,
          suiteAt,
          commandSlots,
          gitFor: (worktree) => worktreeGit.sibling(worktree),
        });
        for (;;) {
          const next = await steps.next();
          if (next.done) {
            inbox.push({ kind: 'finished', key: task.key, branch: space.branch, outcome: next.value });
            return;
          }
          inbox.push({ kind: 'event', event: next.value });
        }
      } catch (error) {
        inbox.push({ kind: 'crashed', key: task.key, error: toRatchetError(error) });
      }
    })();
    return { type: 'log', message: `${task.key} starts on ${worker} (attempt ${attempt})`, task: task.key };
  }

  /** One attempt on a worker of the queue: the same messages as a local attempt, its events from the worker. */
  async function runRemote(
    port: RemoteTaskPort,
    task: TaskSpec,
    dependencies: TaskSpec[],
    attempt: number,
  ): Promise<void> {
    try {
      const startPoint = await runGit.head();
      const baseline = suites.get(startPoint);
      const steps = port.run({
        task,
        dependencies,
        attempt,
        startPoint,
        settings,
        others: file.tasks.filter((other) => other.key !== task.key),
        ...(baseline === undefined ? {} : { baseline }),
      });
      for (;;) {
        const next = await steps.next();
        if (next.done) {
          inbox.push({ kind: 'finished', key: task.key, branch: next.value.branch, outcome: next.value.outcome });
          return;
        }
        inbox.push({ kind: 'event', event: next.value });
      }
    } catch (error) {
      inbox.push({ kind: 'crashed', key: task.key, error: toRatchetError(error) });
    }
  }

  function* block(key: string, why: string): Generator<EventInput> {
    for (const dependent of dependentsOf(file.tasks, key)) {
      const entry = summary.get(dependent);
      if (entry === undefined || entry.status !== 'pending') continue;
      update(dependent, 'blocked', { reason: why });
      yield { type: 'task-update', task: dependent, status: 'blocked', attempt: entry.attempts, reason: why };
    }
  }

  /** Merges a finished task into the run branch and runs the full suite there. */
  async function* merge(
    task: TaskSpec,
    branch: string,
  ): Steps<{ ok: true; commit: string } | { ok: false; why: string }> {
    const before = await runGit.head();
    let commit: string;
    try {
      commit = await runGit.merge(branch, `merge: ${task.key} ${task.title}`);
    } catch (error) {
      const failure = toRatchetError(error);
      if (failure.details?.conflict !== true) throw failure;
      const files = Array.isArray(failure.details.files) ? failure.details.files.join(', ') : '';
      return { ok: false, why: `its merge conflicted${files ? ` in ${files}` : ''}` };
    }
    const tests = yield* fullSuite();
    const gate = verifyGate(tests.result, []);
    if (!gate.accepted) {
      await runGit.resetHard(before);
      return { ok: false, why: `the full suite failed after its merge (${gate.reason})` };
    }
    suites.set(commit, tests);
    yield {
      type: 'checkpoint-create',
      stage: 'VERIFY',
      phase: 'COMPLETE',
      commit,
      subject: `merge: ${task.key} ${task.title}`,
    };
    return { ok: true, commit };
  }

  async function* fullSuite(): Steps<Awaited<ReturnType<typeof suite.runTests>>> {
    const tests = await suite.runTests('VERIFY', context.signal);
    yield { type: 'verify-end', stage: 'VERIFY', kind: 'test', result: tests.result, outputFile: tests.outputFile };
    return tests;
  }

  /** Merges a finished task; a conflict or a red suite sends it back to pending (bounded), then blocks it. */
  async function* mergeFinished(task: TaskSpec, branch: string, attempt: number): Steps<void> {
    yield* settle(task, attempt, yield* merge(task, branch));
  }

  /** Records how a task's merge went: merged, back to pending for a re-run on the new base, or blocked. */
  function* settle(
    task: TaskSpec,
    attempt: number,
    merged: { ok: true; commit: string } | { ok: false; why: string },
  ): Generator<EventInput> {
    if (merged.ok) {
      update(task.key, 'merged', { mergeCommit: merged.commit, reason: null });
      yield { type: 'task-update', task: task.key, status: 'merged', attempt, mergeCommit: merged.commit };
    } else if (attempt < MAX_TASK_ATTEMPTS) {
      update(task.key, 'pending', { reason: merged.why });
      yield {
        type: 'task-update',
        task: task.key,
        status: 'pending',
        attempt,
        reason: `${merged.why}: re-run on the new base`,
      };
    } else {
      const why = `${merged.why}, after ${attempt} attempts`;
      update(task.key, 'blocked', { reason: why });
      yield { type: 'task-update', task: task.key, status: 'blocked', attempt, reason: why };
      yield* block(task.key, `${task.key} is blocked`);
    }
  }

  /**
   * Merges the tasks that finished while the scheduler was busy (merging the one before), in
   * dependency order, and runs the full suite once after the last: the suite is the slow part of
   * a merge, and N tasks finishing together paid for N runs of it. A conflict is that task's alone
   * (as one by one) once the batch stands; a red suite undoes the whole batch, which then merges
   * one task at a time, each with its own suite run, so exactly the tasks that turn it red go
   * back. A task that conflicted within an undone batch merges again too: what it conflicted with
   * may be the task that goes back (settling its conflict at once re-ran it for nothing).
   */
  async function* mergeBatch(
    finished: ReadonlyArray<{ task: TaskSpec; branch: string; attempt: number }>,
  ): Steps<void> {
    const ordered = [...finished].sort((a, b) => order.indexOf(a.task.key) - order.indexOf(b.task.key));
    const [only] = ordered;
    if (only === undefined) return;
    if (ordered.length === 1) return yield* mergeFinished(only.task, only.branch, only.attempt);
    const before = await runGit.head();
    const merged: Array<{ task: TaskSpec; branch: string; attempt: number; commit: string }> = [];
    const conflicted: Array<{ task: TaskSpec; attempt: number; why: string }> = [];
    for (const entry of ordered) {
      try {
        merged.push({
          ...entry,
          commit: await runGit.merge(entry.branch, `merge: ${entry.task.key} ${entry.task.title}`),
        });
      } catch (error) {
        const failure = toRatchetError(error);
        if (failure.details?.conflict !== true) throw failure;
        const files = Array.isArray(failure.details.files) ? failure.details.files.join(', ') : '';
        conflicted.push({ ...entry, why: `its merge conflicted${files ? ` in ${files}` : ''}` });
      }
    }
    const last = merged.at(-1);
    if (last !== undefined) {
      const tests = yield* fullSuite();
      if (!verifyGate(tests.result, []).accepted) {
        await runGit.resetHard(before);
        for (const entry of ordered) yield* mergeFinished(entry.task, entry.branch, entry.attempt);
        return;
      }
      suites.set(last.commit, tests);
      for (const entry of merged) {
        const subject = `merge: ${entry.task.key} ${entry.task.title}`;
        yield { type: 'checkpoint-create', stage: 'VERIFY', phase: 'COMPLETE', commit: entry.commit, subject };
        yield* settle(entry.task, entry.attempt, { ok: true, commit: entry.commit });
      }
    }
    for (const entry of conflicted) yield* settle(entry.task, entry.attempt, { ok: false, why: entry.why });
  }

  for (const { key, branch } of toMerge) {
    const task = tasks.get(key);
    if (task !== undefined) yield* mergeFinished(task, branch, summary.get(key)?.attempts ?? 1);
  }
  // Dependents of what failed or is blocked (a retried task's included) wait no more.
  for (const entry of summary.values())
    if (entry.status === 'failed' || entry.status === 'blocked')
      yield* block(entry.key, `${entry.key} ${entry.status}`);

  // Every task that starts from the run's head needs the suite there as its baseline: one run here
  // instead of one per task (a red one is not kept; each task then stops on it as before).
  const head = await runGit.head();
  if (!suites.has(head) && [...summary.values()].some((entry) => entry.status === 'pending')) {
    const tests = await suite.runTests('PLAN', context.signal);
    yield { type: 'verify-end', stage: 'PLAN', kind: 'baseline', result: tests.result, outputFile: tests.outputFile };
    if (verifyGate(tests.result, []).accepted) suites.set(head, tests);
  }

  for (;;) {
    // Start what can start, in file order, while workers are free (none once interrupted).
    while (interrupted === undefined && freeWorkers.length > 0) {
      const ready = file.tasks.find(
        (task) => summary.get(task.key)?.status === 'pending' && task.dependsOn.every(settled),
      );
      const worker = ready === undefined ? undefined : freeWorkers.shift();
      if (ready === undefined || worker === undefined) break;
      yield start(ready, worker);
    }
    if (running.size === 0) break;
    // What arrived while the last merge ran comes in one go: its finished tasks merge together.
    const finished: Array<{ task: TaskSpec; branch: string; attempt: number }> = [];
    for (const message of [await inbox.next(), ...inbox.takeQueued()]) {
      if (message.kind === 'event') {
        yield message.event;
        continue;
      }
      const task = tasks.get(message.key);
      const slot = running.get(message.key);
      running.delete(message.key);
      if (slot) freeWorkers.push(slot.worker);
      if (task === undefined) continue;
      const attempt = summary.get(task.key)?.attempts ?? 1;
      if (message.kind === 'crashed' || message.outcome.status === 'failed') {
        const error = message.kind === 'crashed' ? message.error : undefined;
        if (error?.code === 'interrupted') {
          interrupted = error;
          update(task.key, 'pending');
          continue;
        }
        const reason =
          error?.message ??
          (message.kind === 'finished' && message.outcome.status === 'failed' ? message.outcome.reason : 'failed');
        update(task.key, 'failed', { reason });
        yield { type: 'task-update', task: task.key, status: 'failed', attempt, reason };
        yield* block(task.key, `${task.key} failed`);
        continue;
      }
      update(task.key, 'done');
      yield { type: 'task-update', task: task.key, status: 'done', attempt, branch: message.branch };
      finished.push({ task, branch: message.branch, attempt });
    }
    yield* mergeBatch(finished);
  }
  if (interrupted !== undefined) throw interrupted;
  const result: TasksResult = { tasks: order.flatMap((key) => summary.get(key) ?? []) };
  const done = result.tasks.filter((task) => task.status === 'merged' || task.status === 'skipped');
  if (done.length === result.tasks.length) return result;
  const merged = result.tasks.filter((task) => task.status === 'merged').length;
  const lines = result.tasks.map(
    (task) => `${task.key}: ${task.status}${task.reason === null ? '' : ` (${task.reason})`}`,
  );
  throw new RatchetError(
    'gate-failed',
    `partial: ${done.length} of ${result.tasks.length} tasks merged.\n${lines.join('\n')}`,
    {
      hint:
        merged > 0
          ? 'The merged tasks are on the run branch: `ratchet report` tells what happened in each stage of each task; `ratchet accept --force` keeps what merged.'
          : 'No task merged: `ratchet tasks status` and `ratchet report` tell what happened in each stage of each task (the logs of its checks are under .ratchet/runs/<run-id>/verify/); `ratchet tasks retry <task>` then `ratchet resume`, or `ratchet reject`.',
      details: { reason: 'partial', tasks: result.tasks },
    },
  );
}

/**
 * The run worktree's git, its HEAD asked of git once and then followed: only this function's
 * merges and resets move it (the suite runs in a sandbox that cannot write the repository's git
 * directory), so a task's start point and a merge's undo point cost no git process.
 */
function trackedHead(git: Git): Pick<Git, 'head' | 'merge' | 'resetHard'> {
  let known: Promise<string> | undefined;
  const moving = async (work: () => Promise<string>): Promise<string> => {
    known = undefined;
    const head = await work();
    known = Promise.resolve(head);
    return head;
  };
  return {
    head: () => {
      const read = (known ??= git.head());
      // A failed read is not kept.
      read.catch(() => {
        if (known === read) known = undefined;
      });
      return read;
    },
    merge: (ref, message) => moving(() => git.merge(ref, message)),
    resetHard: async (ref) => {
      await moving(async () => {
        await git.resetHard(ref);
        // A commit id is where HEAD now is; anything else is asked of git.
        return /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(ref) ? ref : git.head();
      });
    },
  };
}
