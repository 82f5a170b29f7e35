import { addHonesty, noHonesty } from './honesty.js';
import type { ExerciseRecord, Honesty } from './results.js';

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
  /** `--mode tdd`: the honesty figures of every record that has them, with their percentages. */
  honesty?: HonestyFigures;
}

interface HonestyFigures extends Honesty {
  /** Percent of RED checkpoints whose new test failed when committed (null: there were none). */
  redFailingPercent: number | null;
  /** Percent of GREEN checkpoints whose suite passed when committed (null: there were none). */
  greenPassingPercent: number | null;
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
    ...honestyOf(records),
  };
}

/** The honesty figures of the records that have them (none: no key, as in `--mode direct`). */
function honestyOf(records: readonly ExerciseRecord[]): { honesty?: HonestyFigures } {
  const counted = records.flatMap((record) => (record.honesty === undefined ? [] : [record.honesty]));
  if (counted.length === 0) return {};
  const total = counted.reduce(addHonesty, noHonesty());
  const share = (part: number, whole: number): number | null => (whole === 0 ? null : round(percent(part, whole), 1));
  return {
    honesty: {
      ...total,
      redFailingPercent: share(total.redFailing, total.redCommits),
      greenPassingPercent: share(total.greenPassing, total.greenCommits),
    },
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
