import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { RatchetError } from '../../core/errors.js';
import type { RatchetEvent } from '../../core/events.js';
import type { ResolvedConfig } from '../../config/resolved.js';
import type { ProcessRunner } from '../../process/types.js';
import type { StartServices } from '../../engine/start-run.js';
import { InProcessQueue } from '../../engine/queue/in-process-queue.js';
import { benchmarkLanguages, readExercises, type Exercise } from './benchmark.js';
import { LANGUAGES, type LanguageSpec } from './languages.js';
import { BENCH_MODES, readRecord, readRecords, writeRecord, type BenchMode, type ExerciseRecord } from './results.js';
import { runBenchExercise } from './run-exercise.js';
import { summarize, type BenchSummary } from './summary.js';

export type { BenchMode } from './results.js';

export interface BenchOptions {
  benchmarkDir: string;
  out: string;
  /** Only these languages / exercises (undefined: all). */
  languages?: readonly string[];
  exercises?: readonly string[];
  mode: BenchMode;
  tries: number;
  workers: number;
  /** Lines of the official tests' output a failed try passes to the next (Aider: 50). */
  feedbackLines: number;
  testTimeoutMs: number;
  /** Where the JavaScript exercises' dependencies (jest) are installed once: `<jsCache>/node_modules`. */
  jsCache: string;
  configFor: (repoRoot: string) => Promise<ResolvedConfig>;
  services: StartServices;
  now: () => number;
  signal?: AbortSignal;
  onEvent(event: BenchEvent): void;
}

/** What a benchmark run says as it goes (the CLI renders it; nothing here prints). */
export type BenchEvent =
  | { type: 'language-skip'; language: string; reason: string }
  | { type: 'dependencies-install'; language: string; into: string }
  | { type: 'exercise-skip'; language: string; exercise: string; passedAtTry: number | null }
  | { type: 'exercise-start'; language: string; exercise: string }
  | { type: 'exercise-event'; language: string; exercise: string; event: RatchetEvent }
  | { type: 'exercise-end'; record: ExerciseRecord };

/** `<out>/bench.json`: how the results were made (a resumed run must make them the same way) and what was skipped. */
const BenchFileSchema = z.object({
  version: z.literal(1),
  mode: z.enum(BENCH_MODES),
  tries: z.number().int(),
  skippedLanguages: z.array(z.object({ language: z.string(), reason: z.string() })),
});
type BenchFile = z.infer<typeof BenchFileSchema>;

/** The summary `<out>/summary.json` holds: every figure recounted from the per-exercise files. */
export interface BenchResult extends BenchSummary {
  mode: BenchMode;
  tries: number;
  skippedLanguages: BenchFile['skippedLanguages'];
}

/** The JavaScript dependencies of the published benchmark's exercises, pinned (Exercism's track). */
const JS_DEPENDENCIES = ['jest@29.7.0', 'babel-jest@29.7.0', '@exercism/babel-preset-javascript@0.7.0'];

async function readBenchFile(out: string): Promise<BenchFile | null> {
  const file = join(out, 'bench.json');
  if (!existsSync(file)) return null;
  return BenchFileSchema.parse(JSON.parse(await readFile(file, 'utf8')));
}

/** The summary of what `<out>` holds, as `summary.json` and `ratchet bench polyglot report` show it. */
export async function benchResult(out: string): Promise<BenchResult> {
  const file = await readBenchFile(out);
  if (file === null) {
    throw new RatchetError('usage', `${out} holds no benchmark results (no bench.json).`, {
      hint: 'Give the --out directory of a ratchet bench polyglot run.',
    });
  }
  return {
    mode: file.mode,
    tries: file.tries,
    skippedLanguages: file.skippedLanguages,
    ...summarize(await readRecords(out), file.tries),
  };
}

/** Why `command` does not run here, or null when it does. */
async function programProblem(runner: ProcessRunner, command: readonly string[]): Promise<string | null> {
  const [program = '', ...args] = command;
  const result = await runner.run({ command: program, args, cwd: process.cwd(), timeoutMs: 60_000 }).catch(() => null);
  if (result?.exitCode === 0) return null;
  const how =
    result === null || result.exitCode === 127 || result.exitCode === null ? 'cannot run' : `exited ${result.exitCode}`;
  return `\`${command.join(' ')}\` ${how}`;
}

/** The shared `node_modules` of the JavaScript exercises, installed once when missing; null with the reason when it cannot be. */
async function jsDependencies(options: BenchOptions): Promise<{ modules: string } | { problem: string }> {
  const modules = join(options.jsCache, 'node_modules');
  if (existsSync(join(modules, '.bin', 'jest'))) return { modules };
  options.onEvent({ type: 'dependencies-install', language: 'javascript', into: options.jsCache });
  await mkdir(options.jsCache, { recursive: true });
  const result = await options.services.runner.run({
    command: 'npm',
    args: ['install', '--prefix', options.jsCache, '--no-audit', '--no-fund', '--loglevel=error', ...JS_DEPENDENCIES],
    cwd: options.jsCache,
    timeoutMs: 600_000,
  });
  if (result.exitCode === 0 && existsSync(join(modules, '.bin', 'jest'))) return { modules };
  return {
    problem: `jest could not be installed into ${options.jsCache} (npm install exited ${result.exitCode ?? result.signal}); install it with: npm install --prefix ${options.jsCache} ${JS_DEPENDENCIES.join(' ')}`,
  };
}

/**
 * Runs the benchmark: every exercise of every language asked for whose toolchain is here, each
 * in a fresh repository, `workers` at a time on the in-process worker pool; one record per
 * exercise under `<out>/exercises/`, then `<out>/summary.json`. An exercise with a completed
 * record is not run again (an interrupted benchmark continues where it stopped); a language
 * whose toolchain is missing is skipped with its reason, in the events and in `bench.json`.
 */
export async function runBench(options: BenchOptions): Promise<BenchResult> {
  const previous = await readBenchFile(options.out);
  if (previous !== null && (previous.mode !== options.mode || previous.tries !== options.tries)) {
    throw new RatchetError(
      'usage',
      `${options.out} holds results of --mode ${previous.mode} --tries ${previous.tries}; this run asks for --mode ${options.mode} --tries ${options.tries}.`,
      { hint: 'Resume it with the same --mode and --tries, or give another --out directory.' },
    );
  }
  const present = await benchmarkLanguages(options.benchmarkDir);
  const asked = options.languages ?? present;
  const skipped: BenchFile['skippedLanguages'] = [];
  const only = options.exercises === undefined ? undefined : new Set(options.exercises);
  const jobs: { exercise: Exercise; language: LanguageSpec }[] = [];
  let nodeModules: string | null = null;
  for (const name of asked) {
    const skip = (reason: string): void => {
      skipped.push({ language: name, reason });
      options.onEvent({ type: 'language-skip', language: name, reason });
    };
    const language = LANGUAGES[name];
    if (language === undefined) {
      skip(`the benchmark does not know how to run ${name}'s tests (it knows ${Object.keys(LANGUAGES).join(', ')})`);
      continue;
    }
    if (!present.includes(name)) {
      skip(`${options.benchmarkDir} has no ${name}/exercises/practice/`);
      continue;
    }
    // TDD's gates judge each new test by its own result, and solve's gate refuses results it cannot
    // read: a build that runs the tests as one gives none (every try would fail, a silent zero).
    if (options.mode !== 'direct' && language.framework === 'custom') {
      skip(`--mode ${options.mode} needs per-test results, and ${name}'s tests report only an exit code`);
      continue;
    }
    const problems = (
      await Promise.all(language.toolchain.map((program) => programProblem(options.services.runner, program)))
    ).filter((problem): problem is string => problem !== null);
    if (problems.length > 0) {
      skip(`toolchain missing: ${problems.join('; ')}`);
      continue;
    }
    if (language.jsDependencies && nodeModules === null) {
      const installed = await jsDependencies(options);
      if ('problem' in installed) {
        skip(installed.problem);
        continue;
      }
      nodeModules = installed.modules;
    }
    for (const exercise of await readExercises(options.benchmarkDir, name, only)) jobs.push({ exercise, language });
  }
  await mkdir(options.out, { recursive: true });
  const file: BenchFile = { version: 1, mode: options.mode, tries: options.tries, skippedLanguages: skipped };
  await writeFile(join(options.out, 'bench.json'), `${JSON.stringify(file, null, 2)}\n`);
  await runJobs(jobs, nodeModules, options);
  const result = await benchResult(options.out);
  await writeFile(join(options.out, 'summary.json'), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

/** Runs the exercises that have no completed record, `workers` at a time. */
async function runJobs(
  jobs: readonly { exercise: Exercise; language: LanguageSpec }[],
  nodeModules: string | null,
  options: BenchOptions,
): Promise<void> {
  const queue = new InProcessQueue<{ language: string; exercise: string }, null>({ maxDeliveries: 1 });
  const interrupted = (): boolean => options.signal?.aborted === true;
  const byKey = new Map(jobs.map((job) => [`${job.exercise.language}/${job.exercise.name}`, job]));
  const worker = queue.startWorker(
    async ({ job, signal }) => {
      const found = byKey.get(job.taskKey);
      // Interrupted: the queued exercises are left for the resumed run, none started any more.
      if (found === undefined || interrupted()) return null;
      const { exercise, language } = found;
      options.onEvent({ type: 'exercise-start', language: exercise.language, exercise: exercise.name });
      const record = await runBenchExercise(exercise, language, options.mode, {
        workDir: join(options.out, 'work', exercise.language),
        hide: [options.benchmarkDir, options.out],
        tries: options.tries,
        feedbackLines: options.feedbackLines,
        testTimeoutMs: options.testTimeoutMs,
        nodeModules,
        configFor: options.configFor,
        services: options.services,
        now: options.now,
        signal: options.signal ? AbortSignal.any([options.signal, signal]) : signal,
        onEvent: (event) =>
          options.onEvent({ type: 'exercise-event', language: exercise.language, exercise: exercise.name, event }),
      });
      // An interrupted exercise leaves no record: a resumed benchmark runs it again.
      if (!interrupted()) {
        await writeRecord(options.out, record);
        options.onEvent({ type: 'exercise-end', record });
      }
      return null;
    },
    { concurrency: options.workers },
  );
  try {
    const handles = [];
    for (const { exercise } of jobs) {
      const finished = await readRecord(options.out, exercise.language, exercise.name);
      if (finished?.status === 'completed') {
        options.onEvent({
          type: 'exercise-skip',
          language: exercise.language,
          exercise: exercise.name,
          passedAtTry: finished.passedAtTry,
        });
        continue;
      }
      handles.push(
        await queue.enqueue({
          runId: 'bench',
          taskKey: `${exercise.language}/${exercise.name}`,
          attempt: 1,
          payload: { language: exercise.language, exercise: exercise.name },
        }),
      );
    }
    const outcomes = await Promise.all(handles.map((handle) => handle.outcome));
    const failed = outcomes.find((outcome) => outcome.status === 'failed');
    if (failed?.status === 'failed' && options.signal?.aborted !== true) {
      throw new RatchetError('config', `An exercise could not be run: ${failed.error}`);
    }
  } finally {
    await worker.close();
    await queue.close();
  }
}
