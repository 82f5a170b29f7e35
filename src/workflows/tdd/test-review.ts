import { isRatchetError, toRatchetError } from '../../core/errors.js';
import type { TestCase } from '../../core/handoff.js';
import type { StageName } from '../../core/stages.js';
import type { Ledger } from '../../ledger/types.js';
import { reviewTestQuality, type TestQualityFinding } from '../../code/test-quality.js';
import { stageEnd, type Step, type TddContext } from './context.js';

/**
 * Seed 000's static review circuit breaker: a review that fails internally (its parser throws, a
 * file it cannot read) lets the test through, and after `limit` such failures in a row it is not
 * called again for the rest of the run, so a broken review never stalls the pipeline nor costs
 * its time again and again. A review that completes (whatever it found) closes the count. One
 * breaker serves a whole run: every task of a tasks run shares it.
 */
export interface TestReviewBreaker {
  readonly limit: number;
  /** Internal failures in a row. */
  readonly failures: number;
  /** The failure that opened it; undefined while it is closed. */
  readonly openedBy: string | undefined;
  recordSuccess(): void;
  /** Counts a failure; true when this one opened the breaker. */
  recordFailure(message: string): boolean;
}

export function createTestReviewBreaker(limit: number): TestReviewBreaker {
  let failures = 0;
  let openedBy: string | undefined;
  return {
    limit,
    get failures() {
      return failures;
    },
    get openedBy() {
      return openedBy;
    },
    recordSuccess() {
      if (openedBy === undefined) failures = 0;
    },
    recordFailure(message) {
      if (openedBy !== undefined) return false;
      failures++;
      if (failures < limit) return false;
      openedBy = message;
      return true;
    },
  };
}

/** A REVIEW_TESTS stage end as a run recorded it (in the ledger's order). */
export interface RecordedReview {
  outcome: 'accepted' | 'rejected' | 'error' | 'skipped';
  reason?: string;
}

/**
 * Replays the reviews a run recorded before it stopped into `breaker` (a fresh one), so its count
 * of failures in a row, and whether it is open, carry over `ratchet resume`: without this a
 * review that kept failing was called `limit` more times after every resume.
 */
export function replayReviews(breaker: TestReviewBreaker, reviews: readonly RecordedReview[]): void {
  for (const review of reviews) {
    if (review.outcome === 'error')
      breaker.recordFailure(review.reason?.replace(/^the review failed \(\d+ of \d+ in a row\): /, '') ?? 'it failed');
    else if (review.outcome === 'accepted' || review.outcome === 'rejected') breaker.recordSuccess();
  }
}

/** The REVIEW_TESTS stage ends a run recorded, oldest first (every process of it): what a resume replays. */
export async function recordedReviews(ledger: Pick<Ledger, 'events'>, runId: string): Promise<RecordedReview[]> {
  return (await ledger.events(runId, { types: ['stage-end'] })).flatMap((event) =>
    event.type === 'stage-end' && event.stage === STAGE
      ? [{ outcome: event.outcome, ...(event.reason === undefined ? {} : { reason: event.reason }) }]
      : [],
  );
}

/** The review of one test file after RED (see `reviewTestQuality` in `code/test-quality.ts`). */
export interface TestReviewInput {
  testFile: string;
  implFile: string;
  /** The file after RED. */
  text: string;
  /** The file at the checkpoint RED started from (null: RED created it). */
  before: string | null;
}

export interface TestReviewPort {
  /** Findings (none: the tests pass the review); undefined when the file's language is not reviewed. Throws when the review itself fails. */
  review(input: TestReviewInput): Promise<TestQualityFinding[] | undefined>;
  breaker: TestReviewBreaker;
}

/** What the review decided about a RED attempt the gate accepted. */
export type TestReviewVerdict = { refused: false } | { refused: true; reason: string; feedback: string };

/** The stage name of the review's rows (`attempts.stage = 'review'` in a task's ledger). */
const STAGE: StageName = 'REVIEW_TESTS';

/**
 * Reviews the test file of a RED (or RED_FIX) attempt its gate accepted, as attempt `attempt` of
 * REVIEW_TESTS (one `stage-end` row: accepted, rejected with the rules broken, `error` when the
 * review failed, `skipped` when it did not run). A refusal sends the attempt back like a gate
 * rejection (RED_FIX, within RED's attempts). A failure lets the test through and counts towards
 * the breaker; when that opens it, a warning says so, and later reviews are `skipped` with why.
 */
export async function* reviewNewTests(
  context: TddContext,
  test: TestCase,
  cycle: number,
  attempt: number,
  redStage: StageName,
): Step<TestReviewVerdict> {
  const port = context.deps.testReview;
  if (port === undefined) return { refused: false };
  const { breaker } = port;
  if (breaker.openedBy !== undefined) {
    yield stageEnd(STAGE, 'RED', cycle, attempt, 'skipped', `circuit breaker open: ${breaker.openedBy}`);
    return { refused: false };
  }
  const { workspace } = context.deps;
  let findings: TestQualityFinding[] | undefined;
  try {
    const text = await workspace.readFile(test.testFile);
    if (text === null) {
      yield stageEnd(STAGE, 'RED', cycle, attempt, 'skipped', `${test.testFile} does not exist`);
      return { refused: false };
    }
    const before = await workspace.readFileAt(await workspace.head(), test.testFile);
    findings = await port.review({ testFile: test.testFile, implFile: test.implFile, text, before });
  } catch (error) {
    if (isRatchetError(error, 'interrupted') || context.signal?.aborted === true) throw error;
    const message = toRatchetError(error).message.replace(/\s+/g, ' ').slice(0, 300);
    const opened = breaker.recordFailure(message);
    yield stageEnd(
      STAGE,
      'RED',
      cycle,
      attempt,
      'error',
      `the review failed (${breaker.failures} of ${breaker.limit} in a row): ${message}`,
    );
    if (opened)
      yield {
        type: 'warning',
        stage: redStage,
        message: `The static review of test quality failed ${breaker.limit} time${breaker.limit === 1 ? '' : 's'} in a row (last: ${message}); its circuit breaker is open and it is not run again in this run. Tests are still gated by RED.`,
      };
    return { refused: false };
  }
  if (findings === undefined) {
    yield stageEnd(STAGE, 'RED', cycle, attempt, 'skipped', `${test.testFile}: a language the review does not read`);
    return { refused: false };
  }
  breaker.recordSuccess();
  if (findings.length === 0) {
    yield stageEnd(STAGE, 'RED', cycle, attempt, 'accepted');
    return { refused: false };
  }
  const rules = [...new Set(findings.map((finding) => finding.rule))].join(', ');
  yield stageEnd(STAGE, 'RED', cycle, attempt, 'rejected', rules);
  const lines = findings.map((finding) => `- ${test.testFile}:${finding.line} (${finding.rule}) ${finding.message}`);
  return {
    refused: true,
    reason: 'test-quality',
    feedback: `The test fails as it should, but the static review of test quality refused it:\n${lines.join('\n')}\nFix these in ${test.testFile}; the test must still fail on its assertion.`,
  };
}

/** The review as the TDD and tasks workflows run it: `reviewTestQuality` behind `breaker`. */
export function createStaticTestReview(breaker: TestReviewBreaker): TestReviewPort {
  return { breaker, review: (input) => reviewTestQuality(input) };
}
