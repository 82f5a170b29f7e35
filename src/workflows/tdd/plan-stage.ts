import { normalize } from 'node:path';
import type { StageName } from '../../core/stages.js';
import { PlanOutputSchema, type HandoffState, type PlanOutput, type TestCase } from '../../core/handoff.js';
import {
  attemptRange,
  checkpoint,
  outcomeProblem,
  requireGreenBaseline,
  runAgentStage,
  runSuite,
  stageEnd,
  stageStart,
  subjectFor,
  type Step,
  type TddContext,
} from './context.js';
import type { TaskFiles } from './ports.js';
import { findPendingItem, parseTestList, progressOf, TEST_LIST_FILE, type TestListItem } from './test-list.js';

export type StageResult =
  | { accepted: true; state: HandoffState }
  | {
      accepted: false;
      attempts: number;
      reason: string;
      feedback: string;
      /** The number of the last attempt (after a resume, more than `attempts` when attempts were cut short). */
      lastAttempt?: number;
      /** The stage that ran out of attempts, when not the phase's own (FIX in GREEN). */
      stage?: StageName;
      /** What the user can do about it, when more is known than "fix the cause, then resume". */
      hint?: string;
    };

type Verdict =
  { ok: true; test: TestCase | null; items: TestListItem[] } | { ok: false; reason: string; feedback: string };

function isSafeRelative(path: string): boolean {
  return path.length > 0 && !path.startsWith('/') && !path.split(/[\\/]/).includes('..');
}

/** Deterministic checks of a PLAN answer against `test-list.md` (no model judgement). */
export function judgePlan(before: TestListItem[], listText: string | null, output: PlanOutput | undefined): Verdict {
  if (listText === null) {
    return {
      ok: false,
      reason: 'no-test-list',
      feedback: `${TEST_LIST_FILE} does not exist. Create it at the repository root with one "- [ ] behaviour" line per test.`,
    };
  }
  const items = parseTestList(listText);
  if (items.length === 0) {
    return { ok: false, reason: 'empty-test-list', feedback: `${TEST_LIST_FILE} has no "- [ ] ..." checkbox items.` };
  }
  const wasPending = new Set(before.filter((item) => !item.done).map((item) => item.text));
  const checkedByAgent = items.filter((item) => item.done && wasPending.has(item.text));
  if (checkedByAgent.length > 0) {
    return {
      ok: false,
      reason: 'checked-by-agent',
      feedback: `Do not mark items [x]; the orchestrator does that after GREEN. Uncheck: ${checkedByAgent.map((item) => item.text).join('; ')}`,
    };
  }
  // Progress only moves forward: an item done before must still be there, checked.
  const stillDone = new Set(items.filter((item) => item.done).map((item) => item.text));
  const undone = before.filter((item) => item.done && !stillDone.has(item.text));
  if (undone.length > 0) {
    return {
      ok: false,
      reason: 'done-items-changed',
      feedback: `Keep every checked item of ${TEST_LIST_FILE} exactly as it was; only the orchestrator changes checkboxes. Restore: ${undone.map((item) => `- [x] ${item.text}`).join('; ')}`,
    };
  }
  if (output === undefined)
    return { ok: false, reason: 'no-output', feedback: 'Answer with the StructuredOutput tool.' };
  const pending = items.filter((item) => !item.done);
  if (output.currentTest === null) {
    if (pending.length > 0) {
      return {
        ok: false,
        reason: 'pending-items-remain',
        feedback: `currentTest is null but these items are unchecked: ${pending.map((item) => item.text).join('; ')}`,
      };
    }
    return { ok: true, test: null, items };
  }
  const item = findPendingItem(items, output.currentTest.description);
  if (!item) {
    return {
      ok: false,
      reason: 'unknown-item',
      feedback: `currentTest.description must be the exact text of an unchecked item of ${TEST_LIST_FILE}. Unchecked items: ${pending.map((entry) => `"${entry.text}"`).join(', ')}`,
    };
  }
  const { testFile, implFile } = output.currentTest;
  if (!isSafeRelative(testFile) || !isSafeRelative(implFile)) {
    return {
      ok: false,
      reason: 'bad-paths',
      feedback: 'testFile and implFile must be paths relative to the repository root, without "..".',
    };
  }
  // GREEN may not touch the test file (it is fingerprinted after RED): one file cannot be both.
  if (normalize(testFile) === normalize(implFile)) {
    return {
      ok: false,
      reason: 'bad-paths',
      feedback: `testFile and implFile are the same file (${testFile}): GREEN may not change the test file, so the test must live in a file of its own (for Rust, an integration test under tests/; for Go, a _test.go file; for Python, a test_*.py module).`,
    };
  }
  return { ok: true, test: { description: item.text, testFile, implFile }, items };
}

/** A path as the tasks file and PLAN's answer are compared: normalised, `/`-separated. */
function samePath(left: string, right: string): boolean {
  return normalize(left).split('\\').join('/') === normalize(right).split('\\').join('/');
}

/**
 * In a tasks run, PLAN picks the task's files, not its own: each task owns its test and
 * implementation file (tasks never share one, `tasks plan` checks), and a PLAN that names others
 * would write into a file another task owns, or outside what the task's merge is about.
 */
function judgeTaskFiles(verdict: Verdict, files: TaskFiles | undefined): Verdict {
  if (files === undefined || !verdict.ok || verdict.test === null) return verdict;
  const wrong = (
    [
      ['testFile', verdict.test.testFile, files.testFile],
      ['implFile', verdict.test.implFile, files.implFile],
    ] as const
  ).filter(([, named, owned]) => !samePath(named, owned));
  if (wrong.length === 0) return verdict;
  const problems = wrong.map(([key, named, owned]) => {
    const owner = Object.entries(files.ownedByOthers).find(([path]) => samePath(path, named))?.[1];
    return `${key} is ${named}${owner === undefined ? '' : `, which task ${owner} owns`}; it must be ${owned}`;
  });
  return {
    ok: false,
    reason: 'not-task-files',
    feedback: `Task ${files.task} owns ${files.testFile} (its tests) and ${files.implFile} (its implementation): answer with exactly these files. ${problems.join('; ')}.`,
  };
}

/**
 * GREEN may not change a file that decides how the tests run (locked after RED, see
 * `lockVerification`): one cannot be the implementation file.
 */
async function judgeImplFile(context: TddContext, verdict: Verdict, test: TestCase): Promise<Verdict> {
  const lock = await context.deps.verifier.lockVerification();
  const implFile = normalize(test.implFile).split('\\').join('/');
  if (!lock.files.includes(implFile)) return verdict;
  const namedBy = lock.namedBy[implFile];
  return {
    ok: false,
    reason: 'bad-paths',
    feedback: `implFile ${test.implFile} decides how the tests run${namedBy === undefined ? '' : ` (${namedBy} names it)`}, and GREEN may not change such files: pick the file that holds the implementation.`,
  };
}

/**
 * PLAN: pick the next unchecked item of the test list (or report that none remain), on a suite
 * that passes (its run is RED's baseline). PLAN edits the test list and nothing else: anything
 * more the agent changed (through Bash, say) would slip into the `plan:` commit, untested. Such an
 * attempt is rejected and its changes discarded.
 */
export async function* planStage(context: TddContext, state: HandoffState): Step<StageResult> {
  const { deps, policy } = context;
  const settings = policy.stage('PLAN');
  const cycle = state.cycleNumber;
  const head = await deps.workspace.head();
  const baseline = yield* runSuite(context, 'PLAN', { reuse: true, baseline: true });
  requireGreenBaseline(baseline.result, 'PLAN');
  if (context.lastRun?.run !== baseline && !(await deps.workspace.hasChanges()))
    context.lastRun = { commit: head, run: baseline };
  const beforeText = await deps.workspace.readFile(TEST_LIST_FILE);
  const before = beforeText === null ? [] : parseTestList(beforeText);
  const range = attemptRange(context, 'PLAN', cycle, settings.maxAttempts);
  let feedback = '';
  let reason = range.prior?.rejections.at(-1) ?? '';
  for (let attempt = range.first; attempt <= range.last; attempt++) {
    yield stageStart('PLAN', 'PLAN', cycle, attempt);
    const progress = progressOf(before);
    const outcome = yield* runAgentStage(context, {
      stage: 'PLAN',
      phase: 'PLAN',
      cycle,
      attempt,
      variables: {
        feature: policy.feature,
        cycle,
        test_list: beforeText ?? '(test-list.md does not exist yet: create it)',
        completed_tests: progress.completed.join('\n') || '(none)',
        pending_tests: progress.pending.join('\n') || '(none)',
        test_command: deps.verifier.testCommand,
        feedback: feedback || '(none)',
      },
      paths: { read: ['**'], write: [TEST_LIST_FILE], denyWrite: [] },
      outputSchema: PlanOutputSchema,
      lastAttempt: range.last,
    });
    const problem = outcomeProblem(outcome);
    const previous = await deps.workspace.head();
    const changed = await deps.workspace.changedFilesSince(previous);
    // Changes outside the test list come back as `path-violation` (see runAgentStage).
    const judged: Verdict = problem
      ? { ok: false, reason: outcome.status, feedback: problem }
      : judgePlan(before, await deps.workspace.readFile(TEST_LIST_FILE), outcome.output);
    const forTask = judgeTaskFiles(judged, policy.taskFiles);
    const verdict = forTask.ok && forTask.test !== null ? await judgeImplFile(context, forTask, forTask.test) : forTask;
    if (!verdict.ok) {
      yield stageEnd('PLAN', 'PLAN', cycle, attempt, 'rejected', verdict.reason);
      await deps.workspace.discardChanges();
      context.treeClean = true;
      feedback = verdict.feedback;
      reason = verdict.reason;
      continue;
    }
    const progressAfter = progressOf(verdict.items);
    const next: HandoffState = {
      ...state,
      phase: 'PLAN',
      nextPhase: verdict.test === null ? 'COMPLETE' : 'RED',
      cycleNumber: cycle,
      currentTest: verdict.test,
      completedTests: progressAfter.completed,
      pendingTests: progressAfter.pending,
      testResult: null,
      error: null,
      errorDetails: null,
      retryCount: attempt - 1,
    };
    yield {
      type: 'plan-select',
      cycle,
      test: verdict.test?.description ?? null,
      testFile: verdict.test?.testFile ?? null,
      implFile: verdict.test?.implFile ?? null,
    };
    const subject = verdict.test === null ? 'plan: all tests done' : subjectFor('plan', verdict.test.description);
    context.cycleBase = yield* checkpoint(context, 'PLAN', subject, next, { allowEmpty: true });
    // Only the test list changed: the last test run still describes this tree (RED's baseline).
    if (context.lastRun?.commit === previous && changed.every((file) => file === TEST_LIST_FILE)) {
      context.lastRun = { ...context.lastRun, commit: context.cycleBase };
    }
    context.cycleFiles = [];
    yield stageEnd('PLAN', 'PLAN', cycle, attempt, 'accepted');
    return { accepted: true, state: next };
  }
  return { accepted: false, attempts: settings.maxAttempts, lastAttempt: range.last, reason, feedback };
}
