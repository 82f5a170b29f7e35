import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RatchetEvent } from '../../core/events.js';
import type { ResolvedConfig } from '../../config/resolved.js';
import { Git } from '../../git/git.js';
import { startRun, type StartServices } from '../../engine/start-run.js';
import { exerciseWorkflow } from '../../workflows/exercise/definition.js';
import { exerciseResultOf } from '../../workflows/exercise/workflow.js';
import type { Exercise } from './benchmark.js';
import { createExerciseRepo } from './exercise-repo.js';
import type { LanguageSpec } from './languages.js';
import type { ExerciseRecord, TryRecord } from './results.js';

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
 * Runs one exercise in `direct` mode: a fresh repository without its tests, one exercise run
 * (`exerciseWorkflow`: the EXERCISE stage, then the official tests, up to `tries` times), and its
 * record, with the model's calls, tokens and cost per try counted from the run's events.
 */
export async function runDirectExercise(
  exercise: Exercise,
  language: LanguageSpec,
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
  const config = await options.configFor(repo);
  const run = startRun(
    exerciseWorkflow,
    {
      directory: repo,
      request: {
        exercise: exercise.name,
        language: exercise.language,
        instructions: exercise.instructions,
        solutionFiles: exercise.solutionFiles,
        tests,
        testCommand: language.testCommand(exercise.name),
        framework: language.framework,
        tries: options.tries,
        feedbackLines: options.feedbackLines,
        testTimeoutMs: options.testTimeoutMs,
        hide: [...options.hide],
      },
      config,
      allowDirty: false,
      ...(options.signal ? { signal: options.signal } : {}),
    },
    options.services,
  );
  const spent = new Map<number, Spent>();
  let current = 1;
  let provider: string = config.provider.name;
  let model = '';
  let worktree: string | null = null;
  let next = await run.next();
  while (!next.done) {
    const event = next.value;
    options.onEvent?.(event);
    if (event.type === 'run-start') worktree = event.worktree;
    if (event.type === 'stage-start' && event.stage === 'EXERCISE') current = event.attempt;
    if (event.type === 'model-call') {
      provider = event.provider;
      model = event.model;
      if (!spent.has(current)) spent.set(current, nothingSpent());
      addCall(spent.get(current) ?? nothingSpent(), event);
    }
    next = await run.next();
  }
  const outcome = next.value;
  // The run's branch keeps its commits; its worktree (build output and all) is not needed any more.
  if (worktree !== null) await new Git(repo).removeWorktree(worktree, { force: true }).catch(() => undefined);
  const result = exerciseResultOf(outcome.result);
  const tries: TryRecord[] = (result?.tries ?? []).map((entry) => ({
    try: entry.try,
    passed: entry.passed,
    stage: entry.stage,
    testExitCode: entry.testExitCode,
    testTimedOut: entry.testTimedOut,
    testSeconds: round(entry.testDurationMs / 1000),
    tests: entry.counts,
    testOutputHead: entry.outputHead,
    ...(spent.get(entry.try) ?? nothingSpent()),
  }));
  const error = outcome.status === 'completed' ? undefined : (outcome.error?.message ?? outcome.status);
  return {
    version: 1,
    language: exercise.language,
    exercise: exercise.name,
    mode: 'direct',
    provider,
    model: model === '' ? config.provider.model : model,
    runIds: [outcome.runId],
    status: error === undefined ? 'completed' : 'error',
    ...(error === undefined ? {} : { error }),
    tries,
    passedAtTry: tries.find((entry) => entry.passed)?.try ?? null,
    seconds: round((options.now() - started) / 1000),
  };
}
