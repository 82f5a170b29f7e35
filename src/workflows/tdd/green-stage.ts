import type { HandoffState, TestCase } from '../../core/handoff.js';
import type { StageName } from '../../core/stages.js';
import { fingerprintFiles } from '../../verify/fingerprint.js';
import { greenGate, verificationGate } from '../../verify/gates.js';
import { addedLines, suspectSpecialCasing } from '../../verify/special-cases.js';
import { diffVerification, type VerificationLock } from '../../verify/verification-files.js';
import picomatch from 'picomatch';
import {
  attemptRange,
  checkpoint,
  outcomeProblem,
  refreshCycleFiles,
  runAgentStage,
  runSuite,
  stageEnd,
  stageStart,
  subjectFor,
  type Step,
  type TddContext,
} from './context.js';
import type { StageResult } from './plan-stage.js';
import type { StoredCheck, StoredTestRun } from './ports.js';
import { testVariables } from './red-stage.js';
import { findPendingItem, markDone, parseTestList, TEST_LIST_FILE } from './test-list.js';

type Judgement =
  | { accepted: true; summary: string; run: StoredTestRun }
  | { accepted: false; reason: string; feedback: string; subjects?: string[] };

/**
 * What RED fixed for the rest of the cycle: the test files (by fingerprint), the tests that ran,
 * and the files that decide how the tests run and are reported.
 */
export interface LockedTests {
  /** The configured test globs plus the current item's test file (a runner may run files no glob names). */
  globs: string[];
  fingerprints: Record<string, string>;
  /**
   * Ids of the tests the last accepted run on this cycle's tree ran (none right after a resume):
   * those it skipped are left out, as they may stay skipped (autocfg's ignored doc-tests).
   */
  expected: string[];
  /** Test scripts, runner configuration, setup files, conftest.py, lint and typecheck settings. */
  verification: VerificationLock;
}

/** Locks the test files, the tests that ran and the files that define verification, as they are now. */
export async function lockTests(context: TddContext, test: TestCase): Promise<LockedTests> {
  const globs = [...context.policy.testGlobs, test.testFile];
  const head = await context.deps.workspace.head();
  const expected =
    context.lastRun?.commit === head
      ? context.lastRun.run.result.tests.filter((entry) => entry.status !== 'skipped').map((entry) => entry.id)
      : [];
  return {
    globs,
    fingerprints: await fingerprintFiles(context.deps.workspace.root, globs),
    expected,
    verification: await context.deps.verifier.lockVerification(),
  };
}

/**
 * Whether a file that decides how tests run and are reported changed since the lock (through
 * the agent's tools, its shell, or the code under test while the tests ran): when one did, the
 * locked files are put back as they were and the rejection is returned.
 */
async function verificationChanged(context: TddContext, locked: LockedTests): Promise<Judgement | undefined> {
  const now = await context.deps.verifier.lockVerification();
  const changes = diffVerification(locked.verification, now);
  const decision = verificationGate(changes);
  if (decision === undefined || decision.accepted) return undefined;
  const { workspace } = context.deps;
  for (const file of new Set(changes.map((change) => change.file))) {
    const was = locked.verification.contents[file];
    if (was === undefined) await workspace.removeFile(file);
    else await workspace.writeFile(file, was);
  }
  context.treeClean = false;
  return { accepted: false, reason: decision.reason, feedback: decision.feedback };
}

/**
 * The warning for an implementation that passes by recognising the test's exact inputs (see
 * `suspectSpecialCasing`), over the lines GREEN (and FIX) added outside the test files.
 */
async function specialCasing(context: TddContext, test: TestCase, locked: LockedTests): Promise<string | undefined> {
  const { workspace } = context.deps;
  const testText = await workspace.readFile(test.testFile);
  if (testText === null) return undefined;
  const head = await workspace.head();
  const isTest = picomatch(locked.globs, { dot: true });
  const evidence: string[] = [];
  const files: string[] = [];
  for (const file of await workspace.changedFilesSince(head)) {
    if (isTest(file) || file === TEST_LIST_FILE) continue;
    const now = await workspace.readFile(file);
    if (now === null) continue;
    const finding = suspectSpecialCasing(testText, addedLines(await workspace.readFileAt(head, file), now));
    if (finding === undefined) continue;
    files.push(file);
    evidence.push(...finding.evidence);
  }
  if (evidence.length === 0) return undefined;
  return `GREEN: special-cased inputs suspected in ${files.join(', ')}: ${evidence.map((line) => `\`${line}\``).join('; ')} returns the test's expected values for the test's exact inputs. A next test with other inputs will tell; check the implementation before accepting the run.`;
}

/** Tests pass and no test file changed since RED, then lint and typecheck (VERIFY / RE_VERIFY). */
export async function* judgeImplementation(
  context: TddContext,
  stage: StageName,
  locked: LockedTests,
  options: { checks: boolean; testedRun?: StoredTestRun },
): Step<Judgement> {
  // Checked before the tests run (the changed test command or runner configuration is not run at
  // all) and after (the code under test may have rewritten them while the tests ran).
  if (options.testedRun === undefined) {
    const changed = await verificationChanged(context, locked);
    if (changed !== undefined) return changed;
  }
  // VERIFY right after GREEN's gate reuses its run: nothing changed in between.
  const run = options.testedRun ?? (yield* runSuite(context, stage, { reuse: false }));
  const changed = options.testedRun === undefined ? await verificationChanged(context, locked) : undefined;
  if (changed !== undefined) return changed;
  const now = await fingerprintFiles(context.deps.workspace.root, locked.globs);
  const decision = greenGate(run.result, locked.fingerprints, now, locked.expected);
  if (!decision.accepted)
    return { accepted: false, reason: decision.reason, feedback: decision.feedback, subjects: decision.subjects };
  if (!options.checks) return { accepted: true, summary: decision.summary, run };
  context.treeClean = false;
  const checks: StoredCheck[] = await context.deps.verifier.runChecks(stage, context.signal);
  for (const check of checks) {
    yield { type: 'verify-end', stage, kind: check.kind, result: check.result, outputFile: check.outputFile };
  }
  const failed = checks.filter((check) => !check.result.ok);
  if (failed.length > 0) {
    return {
      accepted: false,
      reason: `${failed.map((check) => check.kind).join('+')}-failed`,
      feedback: failed
        .map(
          (check) =>
            `$ ${check.result.command} (exit ${String(check.result.exitCode)})\n${check.result.output.slice(-6000)}`,
        )
        .join('\n\n'),
    };
  }
  return {
    accepted: true,
    summary: `${decision.summary}; ${checks.map((check) => `${check.kind} ok`).join(', ') || 'no lint/typecheck configured'}`,
    run,
  };
}

/**
 * VERIFY after a passing GREEN; on failure FIX -> RE_VERIFY, up to the FIX stage's attempts.
 * FIX has attempts of its own, numbered from 1 like every stage's (RE_VERIFY #n gates FIX #n),
 * whichever GREEN attempt passed: the number in the ledger is the one in FIX's prompt. Returns
 * the verdict and the number of the last FIX attempt allowed.
 */
async function* verifyAndFix(
  context: TddContext,
  state: HandoffState,
  test: TestCase,
  lockedTests: LockedTests,
  testedRun: StoredTestRun,
): Step<{ verdict: Judgement; lastFix: number }> {
  const cycle = state.cycleNumber;
  const verify = attemptRange(context, 'VERIFY', cycle, 1).first;
  yield stageStart('VERIFY', 'GREEN', cycle, verify);
  let verdict = yield* judgeImplementation(context, 'VERIFY', lockedTests, { checks: true, testedRun });
  yield stageEnd(
    'VERIFY',
    'GREEN',
    cycle,
    verify,
    verdict.accepted ? 'accepted' : 'rejected',
    verdict.accepted ? verdict.summary : verdict.reason,
  );
  const fixes = attemptRange(context, 'FIX', cycle, context.policy.stage('FIX').maxAttempts);
  for (let attempt = fixes.first; !verdict.accepted && attempt <= fixes.last; attempt++) {
    await refreshCycleFiles(context);
    yield stageStart('FIX', 'GREEN', cycle, attempt);
    const outcome = yield* runAgentStage(context, {
      stage: 'FIX',
      phase: 'GREEN',
      cycle,
      attempt,
      variables: { ...testVariables(context, state, test), feedback: verdict.feedback },
      paths: { read: ['**'], write: ['**'], denyWrite: [...lockedTests.globs, TEST_LIST_FILE] },
      lastAttempt: fixes.last,
    });
    // Whatever the agent's own outcome, RE_VERIFY judges the tree it left (a FIX that hit its turn
    // limit may have fixed it), and FIX ends as RE_VERIFY decided, as REFACTOR does: a FIX whose
    // RE_VERIFY rejects it is a rejected attempt, never an accepted one.
    const problem = outcomeProblem(outcome);
    yield stageStart('RE_VERIFY', 'GREEN', cycle, attempt);
    verdict = yield* judgeImplementation(context, 'RE_VERIFY', lockedTests, { checks: true });
    const verdictReason = verdict.accepted ? verdict.summary : verdict.reason;
    yield stageEnd('RE_VERIFY', 'GREEN', cycle, attempt, verdict.accepted ? 'accepted' : 'rejected', verdictReason);
    yield stageEnd(
      'FIX',
      'GREEN',
      cycle,
      attempt,
      verdict.accepted ? 'accepted' : 'rejected',
      problem !== null && !verdict.accepted ? `${outcome.status}; ${verdict.reason}` : verdictReason,
    );
  }
  return { verdict, lastFix: fixes.last };
}

/** GREEN: the least code that passes, without touching the tests; retried with the failures. */
export async function* greenStage(
  context: TddContext,
  state: HandoffState,
  test: TestCase,
  refactorNext: (test: TestCase) => Promise<boolean>,
): Step<StageResult> {
  const { deps, policy } = context;
  const cycle = state.cycleNumber;
  const maxAttempts = policy.stage('GREEN').maxAttempts;
  const lockedTests = await lockTests(context, test);
  await refreshCycleFiles(context);
  const range = attemptRange(context, 'GREEN', cycle, maxAttempts);
  let feedback = '';
  let reason = range.prior?.rejections.at(-1) ?? '';
  for (let attempt = range.first; attempt <= range.last; attempt++) {
    yield stageStart('GREEN', 'GREEN', cycle, attempt);
    const outcome = yield* runAgentStage(context, {
      stage: 'GREEN',
      phase: 'GREEN',
      cycle,
      attempt,
      variables: { ...testVariables(context, state, test), feedback: feedback || '(none)' },
      paths: { read: ['**'], write: ['**'], denyWrite: [...lockedTests.globs, TEST_LIST_FILE] },
      lastAttempt: range.last,
    });
    const problem = outcomeProblem(outcome);
    const gate: Judgement = problem
      ? { accepted: false, reason: outcome.status, feedback: problem }
      : yield* judgeImplementation(context, 'GREEN', lockedTests, { checks: false });
    if (!gate.accepted) {
      yield stageEnd('GREEN', 'GREEN', cycle, attempt, 'rejected', gate.reason, gate.subjects);
      await deps.workspace.discardChanges();
      context.treeClean = true;
      feedback = gate.feedback;
      reason = gate.reason;
      continue;
    }
    yield stageEnd('GREEN', 'GREEN', cycle, attempt, 'accepted', gate.summary);
    const { verdict: verified, lastFix } = yield* verifyAndFix(context, state, test, lockedTests, gate.run);
    if (!verified.accepted) {
      await deps.workspace.discardChanges();
      context.treeClean = true;
      // GREEN and FIX may not change the test: when the checks fail in it, only RED can fix it.
      const inTest = verified.feedback.includes(test.testFile);
      return {
        accepted: false,
        attempts: policy.stage('FIX').maxAttempts,
        lastAttempt: lastFix,
        stage: 'FIX',
        reason: verified.reason,
        feedback: verified.feedback,
        ...(inTest
          ? {
              hint:
                `The checks fail in ${test.testFile}, the test RED wrote, which GREEN and FIX may not change. ` +
                "Roll the run back to this cycle's plan commit (`ratchet history` lists it; `ratchet rollback <commit>`), then `ratchet resume`: RED writes the test again.",
            }
          : {}),
      };
    }
    const suspected = await specialCasing(context, test, lockedTests);
    if (suspected !== undefined) yield { type: 'warning', stage: 'GREEN', message: suspected };
    const listText = await deps.workspace.readFile(TEST_LIST_FILE);
    const items = listText === null ? [] : parseTestList(listText);
    const item = findPendingItem(items, test.description);
    if (listText !== null && item) await deps.workspace.writeFile(TEST_LIST_FILE, markDone(listText, item.line));
    else
      yield {
        type: 'warning',
        stage: 'GREEN',
        message: `Could not find "${test.description}" unchecked in ${TEST_LIST_FILE} to mark it done.`,
      };
    const done = item
      ? [...state.completedTests.filter((text) => text !== item.text), item.text]
      : state.completedTests;
    const next: HandoffState = {
      ...state,
      phase: 'GREEN',
      nextPhase: (await refactorNext(test)) ? 'REFACTOR' : 'PLAN',
      completedTests: done,
      pendingTests: state.pendingTests.filter((text) => text !== item?.text),
      testResult: 'PASS',
      error: null,
      errorDetails: null,
      retryCount: attempt - 1,
    };
    const commit = yield* checkpoint(context, 'GREEN', subjectFor('feat', test.description), next);
    context.lastRun = { commit, run: verified.run };
    return { accepted: true, state: next };
  }
  return { accepted: false, attempts: maxAttempts, lastAttempt: range.last, reason, feedback };
}
