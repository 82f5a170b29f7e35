import { describe, expect, it } from 'vitest';
import type { TestQualityFinding } from '../../src/code/test-quality.js';
import {
  createTestReviewBreaker,
  replayReviews,
  type TestReviewInput,
  type TestReviewPort,
} from '../../src/workflows/tdd/test-review.js';
import { ADD, SUB, cycleScript, eventsOf, happyScript, redTurn, trace } from '../support/fake-tdd-harness.js';
import { useHarness } from '../support/fake-tdd-suite.js';

const setUp = useHarness({ files: { 'README.md': '# calculator\n', 'test-list.md': `- [ ] ${ADD.description}\n` } });

const NO_ASSERTION: TestQualityFinding = {
  rule: 'no-assertion',
  test: ADD.description,
  line: 3,
  message: `The test "${ADD.description}" asserts nothing.`,
};

/** A review port over scripted answers (a finding list, or an error to throw), recording its inputs. */
function scriptedReview(
  answers: ReadonlyArray<TestQualityFinding[] | Error>,
  limit = 3,
): TestReviewPort & { inputs: TestReviewInput[] } {
  const inputs: TestReviewInput[] = [];
  return {
    inputs,
    breaker: createTestReviewBreaker(limit),
    review(input) {
      inputs.push(input);
      const answer = answers[Math.min(inputs.length, answers.length) - 1] ?? [];
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  };
}

describe('RED: the static review of test quality (seed 000)', () => {
  it('sends a test the review refuses back to RED_FIX with its findings, and commits the one it accepts', async () => {
    const review = scriptedReview([[NO_ASSERTION], []]);
    const h = await setUp({ script: cycleScript({ RED_FIX: [redTurn(ADD)] }), testReview: review });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    const lines = trace(run.events);
    const red = lines.indexOf('stage-start RED#1');
    expect(lines.slice(red, red + 8)).toEqual([
      'stage-start RED#1',
      'verify-end RED test',
      'stage-end REVIEW_TESTS#1 rejected (no-assertion)',
      'stage-end RED#1 rejected (test-quality)',
      'stage-start RED_FIX#2',
      'verify-end RED_FIX test',
      'stage-end REVIEW_TESTS#2 accepted',
      'checkpoint-create test: adds two numbers',
    ]);
    // The review reads the test file RED wrote, and what it was before RED (nothing).
    expect(review.inputs[0]).toMatchObject({ testFile: ADD.testFile, implFile: ADD.implFile, before: null });
    expect(review.inputs[0]?.text).toContain(ADD.description);
    const feedback = String(h.agent.callsOf('RED_FIX')[0]?.variables.feedback);
    expect(feedback).toMatch(/static review of test quality refused it/);
    expect(feedback).toContain(`${ADD.testFile}:3 (no-assertion) The test "${ADD.description}" asserts nothing.`);
  });

  it('fails RED when the review refuses every attempt, saying why in the error', async () => {
    const review = scriptedReview([[NO_ASSERTION]]);
    const h = await setUp({
      script: cycleScript({ RED_FIX: [redTurn(ADD), redTurn(ADD)] }),
      testReview: review,
    });
    const run = await h.run();

    expect(run.error?.code).toBe('gate-failed');
    expect(run.error?.message).toMatch(/^RED failed after 3 attempts: test-quality \(.*asserts nothing/);
    expect(review.inputs).toHaveLength(3);
    expect(h.workspace.subjects()).not.toContain('test: adds two numbers');
  });

  it('trips its circuit breaker once when the review keeps failing internally: the run goes on without it and says so', async () => {
    const review = scriptedReview([new Error('parser crashed')], 1);
    const h = await setUp({
      files: { 'README.md': '# calculator\n' },
      script: happyScript({ refactor: false }),
      refactor: 'never',
      testReview: review,
    });
    const run = await h.run();

    expect(run.error).toBeUndefined();
    expect(h.workspace.subjects()).toContain(`test: ${SUB.description}`);
    // Called once: after the failure that opened the breaker, the review is not called again.
    expect(review.inputs).toHaveLength(1);
    const reviews = eventsOf(run.events, 'stage-end').filter((event) => event.stage === 'REVIEW_TESTS');
    expect(reviews.map((event) => [event.cycle, event.outcome, event.reason])).toEqual([
      [1, 'error', 'the review failed (1 of 1 in a row): parser crashed'],
      [2, 'skipped', 'circuit breaker open: parser crashed'],
    ]);
    const warnings = eventsOf(run.events, 'warning').filter((event) => /circuit breaker/.test(event.message));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(
      /failed 1 time in a row \(last: parser crashed\); its circuit breaker is open/,
    );
  });

  it('counts only failures in a row: a review that completes closes the count', () => {
    const breaker = createTestReviewBreaker(2);
    expect(breaker.recordFailure('one')).toBe(false);
    breaker.recordSuccess();
    expect(breaker.recordFailure('two')).toBe(false);
    expect(breaker.openedBy).toBeUndefined();
    expect(breaker.recordFailure('three')).toBe(true);
    expect(breaker.openedBy).toBe('three');
    // Open stays open: later failures do not open it again.
    expect(breaker.recordFailure('four')).toBe(false);
  });

  it('carries its count over `ratchet resume`: a fresh breaker replayed from the recorded reviews', () => {
    const failed = (n: number, message: string) => ({
      outcome: 'error' as const,
      reason: `the review failed (${n} of 3 in a row): ${message}`,
    });
    // Two failures in a row before the stop: the first failure after the resume opens it.
    const counting = createTestReviewBreaker(3);
    replayReviews(counting, [
      failed(1, 'crash a'),
      { outcome: 'accepted' },
      failed(1, 'crash b'),
      failed(2, 'crash c'),
    ]);
    expect(counting.failures).toBe(2);
    expect(counting.openedBy).toBeUndefined();
    expect(counting.recordFailure('crash d')).toBe(true);
    // Opened before the stop: it stays open, with the failure that opened it.
    const open = createTestReviewBreaker(3);
    replayReviews(open, [
      failed(1, 'x'),
      failed(2, 'y'),
      failed(3, 'parser crashed'),
      { outcome: 'skipped', reason: 'circuit breaker open: parser crashed' },
      { outcome: 'accepted' },
    ]);
    expect(open.openedBy).toBe('parser crashed');
  });
});
