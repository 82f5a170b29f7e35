import { mkdir, rm, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { dirname, join } from 'node:path';
import type { StageOutcome } from '../../core/agent.js';
import { pipeEvents } from '../../core/event-pipe.js';
import { isRatchetError } from '../../core/errors.js';
import type { TestRunResult } from '../../core/verification.js';
import { renderTemplate } from '../../config/prompts.js';
import { stageSettings } from '../../config/resolved.js';
import { Git } from '../../git/git.js';
import { runTests } from '../../verify/run-tests.js';
import type { RunContext, Steps } from '../definition.js';
import type { ExerciseSettings } from './definition.js';
import type { ExercisePrompts } from './prompts.js';

/** How one try ended: the agent's stage, then the official tests. */
export interface ExerciseResult {
  try: number;
  /** The EXERCISE stage: `completed`, or why it stopped (`turn-limit`, `invalid-output`, `timeout`...). */
  stage: StageOutcome['status'];
  /** The official tests passed: they ran, exited 0, none failed, and their results can be trusted. */
  passed: boolean;
  testExitCode: number | null;
  testTimedOut: boolean;
  testDurationMs: number;
  counts: TestRunResult['counts'];
  /** The first `feedbackLines` lines of the official tests' output (the next try's feedback). */
  outputHead: string;
}

const DEFAULT_FEEDBACK_LINES = 50;
const DEFAULT_TEST_TIMEOUT_MS = 180_000;

/**
 * Whether a run of the official tests counts as a pass: exit 0, in time, no test failed, at
 * least one passed (the official tests are there: an empty suite is code that kept them from
 * running), and results that can be trusted. A `custom` runner (the C++ exercises' CMake build,
 * which runs the tests after linking) has no per-test results to read: its exit code decides, as
 * in Aider's.
 */
function passedOf(result: TestRunResult, framework: ExerciseSettings['framework']): boolean {
  const custom = framework === 'custom';
  const trusted = result.problem === undefined || (custom && result.problem.kind === 'unreadable');
  const ran = custom || result.counts.passed > 0;
  return result.exitCode === 0 && !result.timedOut && trusted && ran && result.counts.failed === 0;
}

function headOf(output: string, lines: number): string {
  return output.split('\n').slice(0, lines).join('\n');
}

/**
 * One try at an exercise (Aider's protocol): the EXERCISE stage writes the solution with the
 * official tests absent (a try after a failed one is told the first lines of that one's test
 * output); its work is committed (`bench: try N`); the tests are written in and run in the run's
 * sandbox, then removed and the tree put back to the commit. Each try is a run of its own, started
 * from the commit of the one before: what the code under test wrote while the tests ran (in the
 * worktree, ignored files included, or in the sandbox's private /tmp) goes with its run's worktree
 * and sandbox, and never reaches the next try's model.
 */
export async function* runExercise(
  context: RunContext<ExerciseSettings>,
  prompts: ExercisePrompts,
): Steps<ExerciseResult> {
  const { run, settings } = context;
  const git = new Git(run.worktree);
  const attempt = settings.try ?? 1;
  yield { type: 'stage-start', stage: 'EXERCISE', phase: 'BENCH', cycle: 1, attempt };
  const stage = settings.gradeOnly === true ? 'completed' : yield* solveStep(context, prompts, git, attempt);
  const result = yield* officialTests(context, git);
  const passed = passedOf(result, settings.framework);
  yield {
    type: 'stage-end',
    stage: 'EXERCISE',
    phase: 'BENCH',
    cycle: 1,
    attempt,
    outcome: passed ? 'accepted' : 'rejected',
    ...(passed ? {} : { reason: stage === 'completed' ? 'official tests failed' : stage }),
  };
  return {
    try: attempt,
    stage,
    passed,
    testExitCode: result.exitCode,
    testTimedOut: result.timedOut,
    testDurationMs: result.durationMs,
    counts: result.counts,
    outputHead: headOf(result.output, settings.feedbackLines ?? DEFAULT_FEEDBACK_LINES),
  };
}

/** The model's turn: the EXERCISE stage, its work committed (`bench: try N`); none when grading only. */
async function* solveStep(
  context: RunContext<ExerciseSettings>,
  prompts: ExercisePrompts,
  git: Git,
  attempt: number,
): Steps<StageOutcome['status']> {
  const { run, settings } = context;
  const solutionFiles = settings.solutionFiles ?? [];
  const previous = settings.feedback ?? '';
  const variables = {
    exercise: settings.exercise ?? run.feature,
    language: settings.language ?? '',
    instructions: settings.instructions ?? '',
    solution_files: solutionFiles.join(', '),
    feedback: previous === '' ? '' : renderTemplate(prompts.retry, { test_output: previous }),
  };
  const stage = yield* runStage(context, {
    system: renderTemplate(prompts.system, variables),
    user: renderTemplate(prompts.user, variables),
    write: solutionFiles,
    deny: (settings.tests ?? []).map((file) => file.path),
  });
  const subject = `bench: try ${attempt} of ${variables.exercise}`;
  const commit = await git.commitAll(context.redact.commits(subject), { allowEmpty: true });
  if (commit !== null) yield { type: 'checkpoint-create', stage: 'EXERCISE', phase: 'BENCH', commit, subject };
  return stage;
}

/** Runs the EXERCISE stage to its end; a stage over its time limit is a try that ends, not a failed run. */
async function* runStage(
  context: RunContext<ExerciseSettings>,
  prompt: { system: string; user: string; write: string[]; deny: string[] },
): Steps<StageOutcome['status']> {
  const { config, run } = context;
  // The stage writes code: the model and limits of `[stages.green]`.
  const limits = stageSettings(config, 'GREEN');
  const timer = AbortSignal.timeout(limits.timeoutMs);
  try {
    const outcome = yield* pipeEvents((emit) =>
      context.agents.forStage('GREEN').runStage({
        stage: 'EXERCISE',
        worktree: run.worktree,
        systemPrompt: prompt.system,
        prompt: prompt.user,
        paths: { read: ['**'], write: prompt.write, denyWrite: prompt.deny },
        maxTurns: limits.maxTurns,
        bashTimeoutMs: config.bash.timeoutMs,
        signal: context.signal ? AbortSignal.any([context.signal, timer]) : timer,
        emit,
      }),
    );
    return outcome.status;
  } catch (error) {
    const overTime = (timer.aborted && context.signal?.aborted !== true) || isRatchetError(error, 'timeout');
    if (!overTime) throw error;
    return 'timeout';
  }
}

/** Writes the official tests in, runs them in the run's sandbox, then removes them and puts the tree back. */
async function* officialTests(context: RunContext<ExerciseSettings>, git: Git): Steps<TestRunResult> {
  const { run, settings } = context;
  const tests = settings.tests ?? [];
  for (const file of tests) {
    const path = join(run.worktree, file.path);
    // Whatever the model left at a test's path (a file, a link) is replaced, never written through.
    await rm(path, { recursive: true, force: true });
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.content, { flag: 'wx' });
  }
  try {
    const result = await runTests({
      command: settings.testCommand ?? '',
      framework: settings.framework ?? 'custom',
      cwd: run.worktree,
      runner: context.commands.runner,
      environment: context.commands.environment,
      timeoutMs: settings.testTimeoutMs ?? DEFAULT_TEST_TIMEOUT_MS,
      ...(context.signal ? { signal: context.signal } : {}),
    });
    yield { type: 'verify-end', stage: 'EXERCISE', kind: 'test', result, outputFile: null };
    return result;
  } finally {
    for (const file of tests) await rm(join(run.worktree, file.path), { recursive: true, force: true });
    await git.resetHard('HEAD');
    await git.clean();
  }
}

const ExerciseResultSchema = z.object({
  try: z.number(),
  stage: z.enum(['completed', 'turn-limit', 'invalid-output', 'path-violation', 'timeout']),
  passed: z.boolean(),
  testExitCode: z.number().nullable(),
  testTimedOut: z.boolean(),
  testDurationMs: z.number(),
  counts: z.object({ passed: z.number(), failed: z.number(), skipped: z.number(), total: z.number() }),
  outputHead: z.string(),
});

/** An exercise run's result as the engine hands it back (`RunOutcome.result`, untyped there); null when it has none. */
export function exerciseResultOf(result: unknown): ExerciseResult | null {
  return ExerciseResultSchema.safeParse(result).data ?? null;
}
