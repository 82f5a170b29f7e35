import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RatchetEvent } from '../../core/events.js';
import type { ResolvedConfig } from '../../config/resolved.js';
import { Git } from '../../git/git.js';
import { runBranch } from '../../engine/run-paths.js';
import type { RunOutcome } from '../../engine/run-process.js';
import { startRun, type StartServices } from '../../engine/start-run.js';
import type { WorkflowDefinition, WorkflowTypes } from '../../workflows/definition.js';
import { solveWorkflow } from '../../workflows/solve/definition.js';
import { tddWorkflow } from '../../workflows/tdd/definition.js';
import { exerciseWorkflow, type ExerciseRequest } from '../../workflows/exercise/definition.js';
import { exerciseResultOf } from '../../workflows/exercise/workflow.js';
import type { Exercise } from './benchmark.js';
import { createExerciseRepo } from './exercise-repo.js';
import { addHonesty, noHonesty, tddHonesty } from './honesty.js';
import type { LanguageSpec } from './languages.js';
import type { BenchMode, ExerciseRecord, TryRecord } from './results.js';

/** What runs one exercise: where, how, with what model, and the effects it uses. */
export interface ExerciseRunOptions {
  /** `<out>/work/<language>`: the exercise's repository is made in it. */
  workDir: string;
  /** What the model must never see: the benchmark checkout and the results directory. */
  hide: readonly string[];
  tries: number;
  feedbackLines: number;
  testTimeoutMs: number;
  /** The shared JavaScript dependencies (`node_modules`), for a language that needs them. */
  nodeModules: string | null;
  /** The configuration of a run in `repoRoot` (the CLI's: config files, environment, flags). */
  configFor: (repoRoot: string) => Promise<ResolvedConfig>;
  services: StartServices;
  now: () => number;
  signal?: AbortSignal;
  /** Every event of the exercise's run, as it happens (progress display). */
  onEvent?(event: RatchetEvent): void;
}

type Spent = Pick<TryRecord, 'modelCalls' | 'malformedResponses' | 'inputTokens' | 'outputTokens' | 'costUsd'>;

const nothingSpent = (): Spent => ({
  modelCalls: 0,
  malformedResponses: 0,
  inputTokens: 0,
  outputTokens: 0,
  costUsd: 0,
});

/** What a model call spent, added to `spent` (a call without a known price makes the cost unknown). */
function addCall(spent: Spent, event: Extract<RatchetEvent, { type: 'model-call' }>): void {
  spent.modelCalls += 1;
  const response = event.response;
  // Not a usable response: the call failed, or the reply was cut off at the output limit.
  if (
    event.error !== null ||
    response === null ||
    response.finishReason === 'length' ||
    response.finishReason === 'error'
  )
    spent.malformedResponses += 1;
  spent.inputTokens += response?.usage.inputTokens ?? 0;
  spent.outputTokens += response?.usage.outputTokens ?? 0;
  spent.costUsd = spent.costUsd === null || response?.costUsd == null ? null : spent.costUsd + response.costUsd;
}

const round = (value: number): number => Number(value.toFixed(3));

/**
 * Runs one exercise: a fresh repository without its tests, then one try after another, each from
 * the commit of the one before (its branch merged into the repository), until one passes; its
 * record, with the model's calls, tokens and cost per try counted from the runs' events.
 * `direct`: a try is one exercise run (`exerciseWorkflow`: the EXERCISE stage, then the official
 * tests). `tdd`: a try is a `ratchet tdd` run on the instructions, with the language's test
 * command as the repository's `[test] command`; its branch is merged, then an exercise run that
 * only grades (`gradeOnly`) runs the official tests on it. `solve`: the same with a `ratchet
 * solve` run.
 */
export async function runBenchExercise(
  exercise: Exercise,
  language: LanguageSpec,
  mode: BenchMode,
  options: ExerciseRunOptions,
): Promise<ExerciseRecord> {
  const started = options.now();
  const repo = await createExerciseRepo(
    exercise,
    options.workDir,
    options.services.runner,
    language.jsDependencies ? options.nodeModules : null,
  );
  const tests = await Promise.all(
    exercise.testFiles.map(async (path) => ({
      path,
      content: language.enableSkipped(await readFile(join(exercise.dir, path), 'utf8')),
    })),
  );
  const testCommand = language.testCommand(exercise.name);
  // Outside git (`.ratchet/` is excluded once a run starts): the runs read it, no commit holds it.
  if (mode !== 'direct') await writeTestCommand(repo, testCommand);
  const config = await options.configFor(repo);
  const tries: TryRecord[] = [];
  const runIds: string[] = [];
  const model = { provider: config.provider.name as string, model: config.provider.model };
  let error: string | undefined;
  let honesty = mode === 'tdd' ? noHonesty() : null;
  for (let attempt = 1; attempt <= options.tries; attempt += 1) {
    const feedback = tries.at(-1)?.testOutputHead ?? '';
    const request: ExerciseRequest = {
      exercise: exercise.name,
      language: exercise.language,
      instructions: exercise.instructions,
      solutionFiles: exercise.solutionFiles,
      tests,
      testCommand,
      framework: language.framework,
      try: attempt,
      feedback,
      feedbackLines: options.feedbackLines,
      testTimeoutMs: options.testTimeoutMs,
      gradeOnly: mode !== 'direct',
    };
    const spent = nothingSpent();
    let stage: string | null = null;
    if (mode !== 'direct') {
      const base = await new Git(repo).head();
      const task = taskText(exercise, mode, feedback);
      const work =
        mode === 'tdd'
          ? await runCounted(repo, tddWorkflow, { feature: task }, config, options, model, spent)
          : await runCounted(repo, solveWorkflow, { task, stages: null, plan: null }, config, options, model, spent);
      runIds.push(work.runId);
      if (honesty !== null) honesty = addHonesty(honesty, await tddHonesty(repo, base, runBranch(work.runId)));
      // A run that stopped short still leaves its checkpoints: they are graded as they are.
      await new Git(repo).mergeFastForward(runBranch(work.runId));
      stage = work.outcome.status === 'completed' ? 'completed' : (work.outcome.error?.code ?? work.outcome.status);
      // Refused before the model had a turn (e.g. tdd's baseline cannot read the results of the
      // language's test command, or finds them failing): not the model's failure, an error.
      if (work.outcome.status !== 'completed' && spent.modelCalls === 0) {
        error = `the ${mode} run stopped before any model call: ${work.outcome.error?.message ?? work.outcome.status}`;
        break;
      }
    }
    const one = await runTry(repo, request, config, options, model, spent);
    runIds.push(one.runId);
    if (one.record === null) {
      error = one.error ?? 'the run ended without a result';
      break;
    }
    tries.push(stage === null ? one.record : { ...one.record, stage });
    if (one.record.passed) break;
    // The next try continues from this one's commit.
    if (mode === 'direct') await new Git(repo).mergeFastForward(runBranch(one.runId));
  }
  return {
    version: 1,
    language: exercise.language,
    exercise: exercise.name,
    mode,
    provider: model.provider,
    model: model.model,
    runIds,
    status: error === undefined ? 'completed' : 'error',
    ...(error === undefined ? {} : { error }),
    tries,
    passedAtTry: tries.find((entry) => entry.passed)?.try ?? null,
    seconds: round((options.now() - started) / 1000),
    ...(honesty === null ? {} : { honesty }),
  };
}

/** `.ratchet/config.toml` of the exercise's repository: `[test] command` (a JSON string is a TOML basic string). */
async function writeTestCommand(repo: string, command: string): Promise<void> {
  await mkdir(join(repo, '.ratchet'), { recursive: true });
  await writeFile(join(repo, '.ratchet', 'config.toml'), `[test]\ncommand = ${JSON.stringify(command)}\n`);
}

/** What a `tdd` or `solve` try asks for: the exercise's instructions, where the solution goes, and the last try's test output. */
function taskText(exercise: Exercise, mode: BenchMode, feedback: string): string {
  const lines = [
    `Solve the ${exercise.language} exercise ${exercise.name}: its solution goes in ${exercise.solutionFiles.join(', ')}.`,
  ];
  // solve's gate wants a passing suite, and some runners fail one with no test (pytest exits 5, jest 1).
  if (mode === 'solve') {
    lines.push(
      'The repository has no tests (the official ones are withheld): add tests of your own with the solution.',
    );
  }
  lines.push('', exercise.instructions);
  if (feedback !== '') {
    lines.push('', 'A previous attempt failed the official tests. The first lines of their output:', '', feedback);
  }
  return lines.join('\n');
}

/** One exercise run (a whole try, or the grading of one), its events counted into `spent`. */
async function runTry(
  repo: string,
  request: ExerciseRequest,
  config: ResolvedConfig,
  options: ExerciseRunOptions,
  model: { provider: string; model: string },
  spent: Spent,
): Promise<{ runId: string; record: TryRecord | null; error?: string }> {
  const { runId, outcome } = await runCounted(repo, exerciseWorkflow, request, config, options, model, spent);
  const result = exerciseResultOf(outcome.result);
  if (outcome.status !== 'completed' || result === null) {
    return { runId, record: null, error: outcome.error?.message ?? outcome.status };
  }
  return {
    runId,
    record: {
      try: result.try,
      passed: result.passed,
      stage: result.stage,
      testExitCode: result.testExitCode,
      testTimedOut: result.testTimedOut,
      testSeconds: round(result.testDurationMs / 1000),
      tests: result.counts,
      testOutputHead: result.outputHead,
      ...spent,
    },
  };
}

/** One run of `workflow` in the exercise's repository, its model calls counted into `spent`; its worktree removed afterwards (its branch stays). */
async function runCounted<T extends WorkflowTypes>(
  repo: string,
  workflow: WorkflowDefinition<T>,
  request: T['request'],
  config: ResolvedConfig,
  options: ExerciseRunOptions,
  model: { provider: string; model: string },
  spent: Spent,
): Promise<{ runId: string; outcome: RunOutcome }> {
  const run = startRun(
    workflow,
    {
      directory: repo,
      request,
      config,
      allowDirty: false,
      // The benchmark checkout (official tests, example solutions) and the results: never shown.
      hidden: options.hide,
      ...(options.signal ? { signal: options.signal } : {}),
    },
    options.services,
  );
  let worktree: string | null = null;
  let next = await run.next();
  while (!next.done) {
    const event = next.value;
    options.onEvent?.(event);
    if (event.type === 'run-start') worktree = event.worktree;
    if (event.type === 'model-call') {
      model.provider = event.provider;
      model.model = event.model;
      addCall(spent, event);
    }
    next = await run.next();
  }
  const outcome = next.value;
  // Build output and all: not needed any more, and nothing of it may reach the next try.
  if (worktree !== null) await new Git(repo).removeWorktree(worktree, { force: true }).catch(() => undefined);
  return { runId: outcome.runId, outcome };
}
