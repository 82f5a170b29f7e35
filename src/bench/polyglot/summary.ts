import type { ExerciseRecord } from './results.js';

/** The figures of a set of exercises, in the terms of Aider's leaderboard. */
export interface BenchFigures {
  exercises: number;
  /** Percent of exercises passed by try k (index 0: try 1), k up to the most tries any exercise had. */
  passRate: number[];
  /** Percent of model responses that were usable (not failed, not cut off). */
  wellFormedPercent: number | null;
  modelCalls: number;
  /** USD; null when any call's price was unknown. */
  costUsd: number | null;
  costPerExercise: number | null;
  secondsPerExercise: number;
  testTimeouts: number;
  errors: number;
}

export interface BenchSummary extends BenchFigures {
  languages: Record<string, BenchFigures>;
}

const percent = (part: number, whole: number): number => (whole === 0 ? 0 : (100 * part) / whole);
const round = (value: number, digits: number): number => Number(value.toFixed(digits));

/** The figures of `records` run with up to `tries` tries each (pure: the report and the tests recount them the same way). */
function figuresOf(records: readonly ExerciseRecord[], tries: number): BenchFigures {
  const passRate = Array.from({ length: tries }, (_, index) =>
    round(
      percent(
        records.filter((record) => record.passedAtTry !== null && record.passedAtTry <= index + 1).length,
        records.length,
      ),
      1,
    ),
  );
  const allTries = records.flatMap((record) => record.tries);
  const modelCalls = allTries.reduce((sum, entry) => sum + entry.modelCalls, 0);
  const malformed = allTries.reduce((sum, entry) => sum + entry.malformedResponses, 0);
  const costs = allTries.map((entry) => entry.costUsd);
  const costUsd = costs.some((cost) => cost === null)
    ? null
    : round(
        costs.reduce<number>((sum, cost) => sum + (cost ?? 0), 0),
        6,
      );
  return {
    exercises: records.length,
    passRate,
    wellFormedPercent: modelCalls === 0 ? null : round(percent(modelCalls - malformed, modelCalls), 1),
    modelCalls,
    costUsd,
    costPerExercise: costUsd === null || records.length === 0 ? null : round(costUsd / records.length, 6),
    secondsPerExercise:
      records.length === 0
        ? 0
        : round(records.reduce((total, record) => total + record.seconds, 0) / records.length, 1),
    testTimeouts: allTries.filter((entry) => entry.testTimedOut).length,
    errors: records.filter((record) => record.status === 'error').length,
  };
}

/** The whole benchmark's figures and each language's (`tries`: the `--tries` of the run). */
export function summarize(records: readonly ExerciseRecord[], tries: number): BenchSummary {
  const languages: Record<string, BenchFigures> = {};
  for (const language of [...new Set(records.map((record) => record.language))].sort()) {
    languages[language] = figuresOf(
      records.filter((record) => record.language === language),
      tries,
    );
  }
  return { ...figuresOf(records, tries), languages };
}
