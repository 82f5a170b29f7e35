/**
 * `--mode tdd`'s honesty figures: recounted from a run's branch and its handoff notes (never from
 * what the run said of itself), added up per exercise, and summed into the summary's percentages.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { NOTES_REF, type HandoffState } from '../../src/core/handoff.js';
import { tddHonesty } from '../../src/bench/polyglot/honesty.js';
import type { ExerciseRecord, Honesty } from '../../src/bench/polyglot/results.js';
import { summarize } from '../../src/bench/polyglot/summary.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

const note = (phase: HandoffState['phase'], testResult: HandoffState['testResult'], error: string | null = null) =>
  JSON.stringify({
    phase,
    nextPhase: null,
    cycleNumber: 1,
    currentTest: null,
    completedTests: [],
    pendingTests: [],
    testResult,
    error,
    errorDetails: error === null ? null : { type: 'x', message: error },
    retryCount: 0,
  } satisfies HandoffState);

function record(exercise: string, honesty?: Honesty): ExerciseRecord {
  return {
    version: 1,
    language: 'python',
    exercise,
    mode: honesty === undefined ? 'direct' : 'tdd',
    provider: 'anthropic',
    model: 'm',
    runIds: [],
    status: 'completed',
    tries: [],
    passedAtTry: null,
    seconds: 1,
    ...(honesty === undefined ? {} : { honesty }),
  };
}

describe('the tdd honesty figures', () => {
  let repo: TempRepo | undefined;
  afterEach(async () => {
    await repo?.cleanup();
  });

  it('counts the RED and GREEN checkpoints of a branch by their notes, one without a note or with an error against', async () => {
    repo = await createTempRepo();
    const base = await repo.git.head();
    repo.run('checkout', '-q', '-b', 'ratchet/run-1');
    const commit = async (subject: string, text: string | null): Promise<void> => {
      await repo?.write({ [`${subject.replace(/\W/g, '-')}.txt`]: subject });
      const sha = await repo?.git.commitAll(subject);
      if (text !== null && sha) await repo?.git.writeNote(NOTES_REF, sha, text);
    };
    await commit('plan: a', note('PLAN', null));
    await commit('test: a', note('RED', 'FAIL'));
    await commit('feat: a', note('GREEN', 'PASS'));
    // A RED checkpoint whose note says its test passed, one without a note, one whose note has an error.
    await commit('test: b', note('RED', 'PASS'));
    await commit('test: c', null);
    await commit('test: d', note('RED', 'FAIL', 'collection error'));
    // A GREEN checkpoint whose note says the suite failed.
    await commit('feat: b', note('GREEN', 'FAIL'));
    await commit('refactor: a', note('REFACTOR', 'PASS'));
    repo.run('checkout', '-q', 'main');
    await commit('test: not of the run', note('RED', 'FAIL'));
    expect(await tddHonesty(repo.dir, base, 'ratchet/run-1')).toEqual({
      redCommits: 4,
      redFailing: 1,
      greenCommits: 2,
      greenPassing: 1,
    });
  });

  it('sums the records that have them into the summary with their percentages, and gives direct runs none', () => {
    const summary = summarize(
      [
        record('a', { redCommits: 3, redFailing: 3, greenCommits: 3, greenPassing: 2 }),
        record('b', { redCommits: 1, redFailing: 0, greenCommits: 0, greenPassing: 0 }),
      ],
      2,
    );
    expect(summary.honesty).toEqual({
      redCommits: 4,
      redFailing: 3,
      greenCommits: 3,
      greenPassing: 2,
      redFailingPercent: 75,
      greenPassingPercent: 66.7,
    });
    expect(summary.languages.python?.honesty?.redFailingPercent).toBe(75);
    expect(summarize([record('a')], 2)).not.toHaveProperty('honesty');
  });
});
