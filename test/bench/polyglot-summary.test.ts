import { describe, expect, it } from 'vitest';
import type { ExerciseRecord } from '../../src/bench/polyglot/results.js';
import { summarize } from '../../src/bench/polyglot/summary.js';

function record(
  exercise: string,
  options: Partial<ExerciseRecord> & { costUsd?: number | null; timedOut?: boolean },
): ExerciseRecord {
  return {
    version: 1,
    language: 'go',
    exercise,
    mode: 'direct',
    provider: 'ollama',
    model: 'qwen',
    runIds: [],
    status: 'completed',
    tries: [
      {
        try: 1,
        passed: options.passedAtTry === 1,
        stage: 'completed',
        testExitCode: 1,
        testTimedOut: options.timedOut ?? false,
        testSeconds: 1,
        tests: { passed: 0, failed: 1, skipped: 0, total: 1 },
        testOutputHead: '',
        modelCalls: 1,
        malformedResponses: 0,
        inputTokens: 1,
        outputTokens: 1,
        costUsd: options.costUsd === undefined ? 0.5 : options.costUsd,
      },
    ],
    passedAtTry: null,
    seconds: 10,
    ...options,
  };
}

describe('the benchmark summary', () => {
  it('says the cost is unknown when any call had no price, never a smaller total', () => {
    const summary = summarize([record('a', {}), record('b', { costUsd: null })], 2);
    expect(summary.costUsd).toBeNull();
    expect(summary.costPerExercise).toBeNull();
    expect(summary.languages.go?.costUsd).toBeNull();
  });

  it('counts an exercise whose run failed as not passed, and says how many failed', () => {
    const summary = summarize(
      [record('a', { passedAtTry: 1 }), record('b', { status: 'error', error: 'provider: 500', tries: [] })],
      2,
    );
    expect(summary.passRate).toEqual([50, 50]);
    expect(summary.errors).toBe(1);
    expect(summary.exercises).toBe(2);
  });

  it('counts the tries whose tests timed out, and has a figure for every try asked for', () => {
    const summary = summarize([record('a', { timedOut: true })], 3);
    expect(summary.testTimeouts).toBe(1);
    expect(summary.passRate).toEqual([0, 0, 0]);
    expect(summarize([], 2)).toMatchObject({ exercises: 0, passRate: [0, 0], wellFormedPercent: null, costUsd: 0 });
  });
});
