/**
 * The summary of `ratchet bench polyglot`, recounted by the tests from the per-exercise files
 * alone, written apart from `src/bench/polyglot/summary.ts` (loops over the records, no shared
 * helper), so a test that compares the two catches a figure the summary gets wrong.
 */
import type { ExerciseRecord } from '../../src/bench/polyglot/results.js';

/** Rounded as the summary states its figures: to `digits` decimals, as `toFixed` rounds. */
const to = (value: number, digits: number): number => Number(value.toFixed(digits));

interface Recounted {
  exercises: number;
  passRate: number[];
  wellFormedPercent: number | null;
  modelCalls: number;
  costUsd: number | null;
  costPerExercise: number | null;
  secondsPerExercise: number;
  testTimeouts: number;
  errors: number;
  honesty?: {
    redCommits: number;
    redFailing: number;
    greenCommits: number;
    greenPassing: number;
    redFailingPercent: number | null;
    greenPassingPercent: number | null;
  };
}

function recount(records: readonly ExerciseRecord[], tries: number): Recounted {
  let calls = 0;
  let malformed = 0;
  let cost: number | null = 0;
  let seconds = 0;
  let timeouts = 0;
  let errors = 0;
  const passedBy = new Array<number>(tries).fill(0);
  const honesty = { redCommits: 0, redFailing: 0, greenCommits: 0, greenPassing: 0 };
  let withHonesty = 0;
  for (const record of records) {
    seconds += record.seconds;
    if (record.status === 'error') errors += 1;
    const at = record.passedAtTry;
    if (at !== null) for (let k = at; k <= tries; k += 1) passedBy[k - 1] = (passedBy[k - 1] ?? 0) + 1;
    for (const entry of record.tries) {
      calls += entry.modelCalls;
      malformed += entry.malformedResponses;
      if (entry.testTimedOut) timeouts += 1;
      cost = cost === null || entry.costUsd === null ? null : cost + entry.costUsd;
    }
    if (record.honesty !== undefined) {
      withHonesty += 1;
      honesty.redCommits += record.honesty.redCommits;
      honesty.redFailing += record.honesty.redFailing;
      honesty.greenCommits += record.honesty.greenCommits;
      honesty.greenPassing += record.honesty.greenPassing;
    }
  }
  const n = records.length;
  return {
    exercises: n,
    passRate: passedBy.map((passed) => (n === 0 ? 0 : to((100 * passed) / n, 1))),
    wellFormedPercent: calls === 0 ? null : to((100 * (calls - malformed)) / calls, 1),
    modelCalls: calls,
    costUsd: cost === null ? null : to(cost, 6),
    costPerExercise: cost === null || n === 0 ? null : to(to(cost, 6) / n, 6),
    secondsPerExercise: n === 0 ? 0 : to(seconds / n, 1),
    testTimeouts: timeouts,
    errors,
    ...(withHonesty === 0
      ? {}
      : {
          honesty: {
            ...honesty,
            redFailingPercent: honesty.redCommits === 0 ? null : to((100 * honesty.redFailing) / honesty.redCommits, 1),
            greenPassingPercent:
              honesty.greenCommits === 0 ? null : to((100 * honesty.greenPassing) / honesty.greenCommits, 1),
          },
        }),
  };
}

/** Every figure of `summary.json` (all exercises and each language), recounted from `records`. */
export function recountBenchSummary(
  records: readonly ExerciseRecord[],
  tries: number,
): Recounted & { languages: Record<string, Recounted> } {
  const languages: Record<string, Recounted> = {};
  for (const language of [...new Set(records.map((record) => record.language))].sort()) {
    languages[language] = recount(
      records.filter((record) => record.language === language),
      tries,
    );
  }
  return { ...recount(records, tries), languages };
}
