import { join } from 'node:path';
import type { AgentRuntime } from '../../core/agent.js';
import { handsOver, type EventInput } from '../../core/events.js';
import { RatchetError, toRatchetError } from '../../core/errors.js';
import { createSlots, type Slots } from '../../core/slots.js';
import { stageSettings } from '../../config/resolved.js';
import { renderTemplate, stagePrompt, type PromptSet } from '../../config/prompts.js';
import { Git } from '../../git/git.js';
import { checkNeedsRefactor } from '../../code/size-check.js';
import type { Framework } from '../../verify/detect.js';
import type { RunContext, TaskAttemptOutcome, TaskSpace } from '../definition.js';
import { createGitWorkspace } from '../tdd/git-workspace.js';
import type { StoredTestRun, TddDependencies, TddPolicy, VerifierPort, Workspace } from '../tdd/ports.js';
import { TEST_LIST_FILE } from '../tdd/test-list.js';
import type { TestReviewPort } from '../tdd/test-review.js';
import { createVerifierPort } from '../tdd/verifier-port.js';
import { initialHandoff, runTdd } from '../tdd/workflow.js';
import type { TaskSpec } from './tasks-file.js';

/** What one attempt of one task needs beyond its task: the run's test command and refactor mode. */
export interface TaskPipelineSettings {
  testCommand: string;
  framework: Framework;
  refactor: 'always' | 'when-needed' | 'never';
}

/**
 * The request a task's TDD pipeline works on: its goal and acceptance criteria, the files it owns,
 * and what the tasks it depends on export (merged into its base already), so its prompts say what
 * to import rather than rebuild.
 */
function taskFeature(task: TaskSpec, dependencies: readonly TaskSpec[]): string {
  const lines = [
    `Task ${task.key}: ${task.title}`,
    task.goal,
    '',
    'Acceptance criteria (each needs at least one test):',
    ...task.acceptanceCriteria.map((criterion) => `- ${criterion}`),
    '',
    `Write the tests in ${task.testFile} and the implementation in ${task.implFile}; this task owns those two files.`,
  ];
  if (task.exports.length > 0) lines.push(`${task.implFile} must export: ${task.exports.join(', ')}.`);
  if (dependencies.length > 0) {
    lines.push('', 'Already in the repository, from the tasks this one depends on (import them, do not rewrite them):');
    for (const dependency of dependencies) {
      const exported = dependency.exports.length > 0 ? `exports ${dependency.exports.join(', ')}` : 'no named exports';
      lines.push(`- ${dependency.implFile} (${dependency.key}, ${dependency.title}): ${exported}`);
    }
  }
  return lines.join('\n');
}

/**
 * One lock for every task's commits and notes: the tasks' worktrees share one repository and
 * its `refs/notes/tdd-handoffs`, which git updates under a lock that a concurrent writer fails on.
 */
export function createCommitLock(): Slots {
  return createSlots(1);
}

function lockedWorkspace(workspace: Workspace, lock: ReturnType<typeof createCommitLock>): Workspace {
  return {
    ...workspace,
    root: workspace.root,
    head: () => workspace.head(),
    refresh: () => workspace.refresh(),
    checkpoint: (subject, options) => lock(() => workspace.checkpoint(subject, options)),
    writeNote: (commit, state) => lock(() => workspace.writeNote(commit, state)),
  };
}

/** Runs `work`, which may change the worktree, telling `changed` before and after. */
async function changing<T>(changed: () => void, work: () => Promise<T>): Promise<T> {
  changed();
  try {
    return await work();
  } finally {
    changed();
  }
}

function changingVerifier(changed: () => void, verifier: VerifierPort, slots: Slots = (work) => work()): VerifierPort {
  return {
    testCommand: verifier.testCommand,
    runTests: (stage, signal) => slots(() => changing(changed, () => verifier.runTests(stage, signal))),
    runChecks: (stage, signal) => slots(() => changing(changed, () => verifier.runChecks(stage, signal))),
    lockVerification: () => verifier.lockVerification(),
  };
}

function changingAgent(changed: () => void, agent: AgentRuntime): AgentRuntime {
  return {
    name: agent.name,
    ...(agent.guardsWrites === undefined ? {} : { guardsWrites: agent.guardsWrites }),
    runStage: (request) => changing(changed, () => agent.runStage(request)),
  };
}

/** What the run's tasks share beyond their settings (optional: a worker elsewhere may lack it). */
export interface TaskPipelineShared {
  /** The run's static review of test quality, one circuit breaker for all its tasks (undefined: off). */
  testReview?: TestReviewPort;
  /** The run's other tasks: the files they own, which PLAN may not name (see `judgeTaskFiles`). */
  others?: readonly TaskSpec[];
  /**
   * A passing run of the full suite on a commit, when the coordinator has one (it ran the suite on
   * the run's base and after every merge): a task starting from that commit takes it as PLAN's
   * baseline instead of running the same suite on the same tree again.
   */
  suiteAt?: (commit: string) => Promise<StoredTestRun | undefined>;
  /**
   * Where the tasks' test, lint and typecheck commands take turns (undefined: no limit). They are
   * CPU work while the model calls wait: with as many at once as there are cores, a task whose
   * suite ran goes on to its next model call while the others' run, instead of every task's
   * suite contending at once and every task waiting for the slowest.
   */
  commandSlots?: Slots;
  /**
   * Makes the git of the task's worktree (default `new Git(worktree)`): the local pool's shares
   * the run worktree's commit identity (`Git.sibling`), looked up once for all its tasks.
   */
  gitFor?: (worktree: string) => Git;
}

export type TaskPipelineOutcome = TaskAttemptOutcome;

/**
 * Runs one attempt of one task: the TDD pipeline (PLAN -> RED -> GREEN -> VERIFY -> REFACTOR ...)
 * in the task's space, its events tagged with the task. When it completes, the task's
 * `test-list.md` is dropped in a last commit: every task keeps its own list, and the run branch
 * they merge into keeps none (they would all conflict there).
 */
export async function* runTaskPipeline(
  context: RunContext<unknown>,
  space: TaskSpace,
  task: TaskSpec,
  dependencies: readonly TaskSpec[],
  settings: TaskPipelineSettings,
  prompts: PromptSet,
  lock: ReturnType<typeof createCommitLock>,
  shared: TaskPipelineShared = {},
): AsyncGenerator<EventInput, TaskPipelineOutcome> {
  const { testReview, others = [] } = shared;
  const { run, config } = context;
  const git = shared.gitFor?.(space.worktree) ?? new Git(space.worktree);
  const baseCommit = space.head;
  // `git status` is read once until the worktree may have changed: besides the workspace itself,
  // only the agents (their tools, shell or CLI) and the verifier's commands (tests, lint,
  // typecheck: the model's code) can change it, and each says so before and after it runs. The
  // prompts, the refactor check and the test review only read. (A pool runs eight tasks at once,
  // and each git process costs the coordinator milliseconds.)
  // The files of commits the stages read (the test review's, the special-casing check's) come
  // from one `git cat-file --batch` for the whole attempt, not a git process each.
  await using objects = git.objects();
  const tree = createGitWorkspace(space.worktree, git, context.redact.commits, {
    head: baseCommit,
    statusUntilChanged: true,
    objects,
  });
  const workspace = lockedWorkspace(tree, lock);
  const deps: TddDependencies = {
    workspace,
    verifier: changingVerifier(
      tree.changed,
      createVerifierPort({
        worktree: space.worktree,
        repoRoot: run.repoRoot,
        outputDir: join(context.runDir, 'verify', task.key),
        command: settings.testCommand,
        framework: settings.framework,
        config,
        runner: space.commands.runner,
        environment: space.commands.environment,
        redact: context.redact.stored,
      }),
      shared.commandSlots,
    ),
    agentFor: (stage) => changingAgent(tree.changed, space.agents.forStage(stage)),
    prompt(stage, variables) {
      const template = stagePrompt(prompts, stage);
      return { system: renderTemplate(template.system, variables), user: renderTemplate(template.user, variables) };
    },
    async refactorCheck(files) {
      const check = await checkNeedsRefactor(files, space.worktree, config.refactorCheck);
      return { needsRefactor: check.needsRefactor, reasons: check.reasons };
    },
    ...(testReview === undefined ? {} : { testReview }),
  };
  const policy: TddPolicy = {
    feature: taskFeature(task, dependencies),
    refactor: settings.refactor,
    testGlobs: config.test.patterns,
    bashTimeoutMs: config.bash.timeoutMs,
    runId: run.id,
    baseCommit,
    taskFiles: {
      task: task.key,
      testFile: task.testFile,
      implFile: task.implFile,
      ownedByOthers: Object.fromEntries(
        others.flatMap((other) => [
          [other.testFile, other.key],
          [other.implFile, other.key],
        ]),
      ),
    },
    stage: (stage) => {
      const limits = stageSettings(config, stage);
      return { maxAttempts: limits.maxAttempts, maxTurns: limits.maxTurns, timeoutMs: limits.timeoutMs };
    },
  };
  const known = await shared.suiteAt?.(baseCommit);
  const steps = runTdd(policy, deps, initialHandoff(run.id), context.signal, {
    ...(known === undefined ? {} : { knownRun: { commit: baseCommit, run: known } }),
  });
  // The sandbox's restores (a shared dependency folder swapped) come out as the task's warnings,
  // before the step's next event, as a run's own do: shown, recorded, and streamed by a queue
  // worker. Where the agent's work leaves its hands (a stage's end, a checkpoint, the pipeline's
  // end) the folders are put back first, as for a run's own sandbox.
  const notices = async (handedOver: boolean): Promise<EventInput[]> => {
    if (handedOver) await space.restoreShared();
    return space.takeNotices().map((message) => ({ type: 'warning', message, task: task.key }));
  };
  try {
    for (;;) {
      const next = await steps.next();
      yield* await notices(next.done === true || handsOver(next.value));
      if (next.done) break;
      yield { ...next.value, task: task.key };
    }
  } catch (error) {
    yield* await notices(true);
    const failure = toRatchetError(error);
    if (failure.code === 'interrupted') throw failure;
    return { status: 'failed', reason: failure.message, code: failure.code };
  }
  // Every commit since the start went through the workspace, which knows its HEAD.
  const finished = await workspace.head();
  const [listNow, listAtBase] = await Promise.all(
    [finished, baseCommit].map(async (commit) => (await objects.read(`${commit}:${TEST_LIST_FILE}`))?.type === 'blob'),
  );
  if (listNow === true && listAtBase !== true) {
    await workspace.removeFile(TEST_LIST_FILE);
    const commit = await workspace.checkpoint(`chore: ${task.key} done, its test list dropped`);
    yield { type: 'log', message: `${task.key}: test list dropped in ${commit.slice(0, 8)}`, task: task.key };
  }
  const head = await workspace.head();
  if (head === baseCommit)
    throw new RatchetError('gate-failed', `Task ${task.key} finished without a commit.`, {
      details: { task: task.key },
    });
  return { status: 'done', head };
}
