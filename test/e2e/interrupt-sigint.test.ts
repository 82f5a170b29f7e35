/**
 * SIGINT stops a run cleanly (exit 130, resume hint, ledger `interrupted`, lock released) and the
 * run resumes to the same commits as an uninterrupted one; a second run on a repository with an
 * active run is refused with `locked` (exit 2).
 *
 * The built CLI runs against the loopback Anthropic fake answered by the stateless script in
 * test/support/resume-brain.ts; a held (delayed) reply keeps a run busy while the test acts.
 */
import { describe, expect, it } from 'vitest';
import { RESUME_REFERENCE_SUBJECTS, type BrainCall } from '../support/resume-brain.js';
import { expectCompletedLikeReference, expectStarts } from '../support/resume-checks.js';
import {
  branchCommits,
  describeResult,
  errorLine,
  E2E_TIMEOUT_MS,
  HOLD_MS,
  holdCommitWhen,
  holdTestsWhen,
  ledgerRun,
  onlyLine,
  PROVIDER_ARGS,
  readLockPid,
  releaseCommit,
  releaseTests,
  resumeArgs,
  resumeUntilDone,
  runCli,
  runIdOf,
  startCli,
  useResumeSuite,
  tddArgs,
  waitForHeldCommit,
  waitForHeldTests,
  withLedger,
  type ResumeProject,
} from '../support/resume-harness.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

const suite = useResumeSuite();
const newProject = (): Promise<ResumeProject> => suite.newProject();

function holdCall(stage: string, fn: string): (call: BrainCall) => number | undefined {
  return (call) => (call.stage === stage && call.turn === 0 && call.item?.fn === fn ? HOLD_MS : undefined);
}

interface StatusJson {
  run: { id: string; status: string };
  handoff: { phase: string; nextPhase: string | null } | null;
  checkpoint: string | null;
}

function isStatusJson(value: unknown): value is StatusJson {
  return typeof value === 'object' && value !== null && 'run' in value && 'handoff' in value && 'checkpoint' in value;
}

async function statusJson(project: ResumeProject): Promise<StatusJson> {
  const result = await runCli(project, ['status', '--json']);
  expect(result.code, describeResult(result)).toBe(0);
  const value = onlyLine(result);
  if (!isStatusJson(value)) throw new Error(`unexpected status output: ${result.stdout}`);
  return value;
}

/** After the interrupted run: resume (no id) finishes it exactly like an uninterrupted run. */
async function resumeToReference(project: ResumeProject, runId: string): Promise<void> {
  suite.provider.brain.delayMs = undefined;
  const results = await resumeUntilDone(project, undefined);
  expect(results[0]?.events[0]).toMatchObject({ type: 'run-start', runId, resumed: true });
  await expectCompletedLikeReference(project, runId, RESUME_REFERENCE_SUBJECTS);
  await expectStarts(project, runId, 1);
}

/** A run needs bubblewrap unless it opts out: where it is missing these runs do (the subject is resume, not the sandbox). */
const sandbox = sandboxForThisMachine();

describe(`SIGINT${sandbox.note}`, () => {
  it(
    'during a model call: exit 130 with the resume hint, status interrupted, then resume completes it',
    async () => {
      const project = await newProject();
      suite.provider.brain.delayMs = holdCall('RED', 'add');
      const since = suite.provider.brain.calls.length;
      // Plain output: the hint is for people. The held RED call tells us the run is mid-stage.
      const cli = startCli(project, ['tdd', 'Build a tiny arithmetic module', ...PROVIDER_ARGS]);
      await suite.provider.brain.waitForCall((call) => call.stage === 'RED' && call.item?.fn === 'add', since);
      cli.kill('SIGINT');
      const result = await cli.exited;
      expect(result.code, describeResult(result)).toBe(130);
      expect(result.stderr).toMatch(/SIGINT: stopping at the next safe point/);

      const status = await statusJson(project);
      const runId = status.run.id;
      // One final line says what stopped the run and how to go on (not "interrupted: Interrupted").
      expect(result.stderr).toContain(`Run ${runId} interrupted (SIGINT); resume with: ratchet resume ${runId}`);
      expect(`${result.stdout}\n${result.stderr}`).not.toMatch(/Interrupted|Resume with/);
      expect(status.run.status).toBe('interrupted');
      // The last checkpoint is cycle 1's PLAN; RED is next.
      expect(status.handoff).toMatchObject({ phase: 'PLAN', nextPhase: 'RED' });
      const run = await ledgerRun(project, runId);
      expect(run.status).toBe('interrupted');
      expect(branchCommits(project, run.baseCommit ?? '', runId).map((commit) => commit.subject)).toEqual(
        RESUME_REFERENCE_SUBJECTS.slice(0, 1),
      );
      expect(status.checkpoint).toBe(project.repo.run('rev-parse', `ratchet/${runId}`));
      const ends = await withLedger(project, (ledger) => ledger.events(runId, { types: ['run-end'] }));
      expect(ends).toMatchObject([{ type: 'run-end', status: 'interrupted' }]);
      expect(await readLockPid(project), 'a clean stop releases the lock').toBeNull();

      await resumeToReference(project, runId);
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'during a test run (--json): exit 130, run-end interrupted, then resume completes it',
    async () => {
      const project = await newProject();
      // The first suite run that sees GREEN's implementation of add blocks until released.
      await holdTestsWhen(project, 'src/add.js', 'a + b');
      const cli = startCli(project, tddArgs());
      await waitForHeldTests(project);
      expect(cli.events.filter((event) => event.type === 'verify-end' && event.stage === 'GREEN')).toEqual([]);
      cli.kill('SIGINT');
      const result = await cli.exited;
      expect(result.code, describeResult(result)).toBe(130);
      await releaseTests(project);
      const runId = runIdOf(result.events);
      // The runner killed the test process group; the engine stopped inside the gate.
      expect(result.events.at(-1)).toMatchObject({
        type: 'run-end',
        status: 'interrupted',
        message: 'Interrupted while running the tests',
      });
      // The final JSON object says how to go on, as the plain output's "Resume with:" line does.
      expect(result.lines.at(-1)).toMatchObject({
        type: 'run-end',
        hint: null,
        next: { command: `ratchet resume ${runId}`, argv: ['resume', runId] },
      });
      expect(result.stderr).not.toContain('Resume with:');
      // Interrupting is not failing: no error note is written, GREEN is simply redone.
      expect(result.events.filter((event) => event.type === 'note-write' && event.state.error !== null)).toEqual([]);
      const status = await statusJson(project);
      expect(status.run).toMatchObject({ id: runId, status: 'interrupted' });
      expect(status.handoff).toMatchObject({ phase: 'RED', nextPhase: 'GREEN' });
      expect(await readLockPid(project)).toBeNull();

      await resumeToReference(project, runId);
    },
    E2E_TIMEOUT_MS,
  );
});

describe(`Ctrl-C in a terminal (SIGINT to the whole foreground process group)${sandbox.note}`, () => {
  it(
    'during a checkpoint commit: git is not killed under the run, exit 130, then resume completes it',
    async () => {
      const project = await newProject();
      // GREEN's checkpoint of cycle 1 is committed, then held inside its `git commit`.
      await holdCommitWhen(project, 'feat: add');
      const cli = startCli(project, tddArgs(), { processGroup: true });
      await waitForHeldCommit(project);
      const checkpoints = cli.events.filter((event) => event.type === 'checkpoint-create').length;
      cli.signalGroup('SIGINT');
      await cli.waitForStderr(/SIGINT: stopping at the next safe point/);
      await releaseCommit(project);
      const result = await cli.exited;
      expect(result.code, describeResult(result)).toBe(130);
      const runId = runIdOf(result.events);
      expect(result.events.at(-1)).toMatchObject({ type: 'run-end', status: 'interrupted' });
      // The checkpoint that was in progress completed (commit and note), and nothing after it.
      expect(result.events.filter((event) => event.type === 'checkpoint-create').slice(checkpoints)).toMatchObject([
        { stage: 'GREEN', subject: RESUME_REFERENCE_SUBJECTS[2] },
      ]);
      expect(result.events.filter((event) => event.type === 'note-write' && event.state.error !== null)).toEqual([]);
      const status = await statusJson(project);
      expect(status.run).toMatchObject({ id: runId, status: 'interrupted' });
      expect(status.handoff).toMatchObject({ phase: 'GREEN', nextPhase: 'REFACTOR' });

      await resumeToReference(project, runId);
    },
    E2E_TIMEOUT_MS,
  );
});

describe(`the repository lock${sandbox.note}`, () => {
  it(
    'refuses a second tdd (and a resume) while a run is active, with exit 2 and a locked message',
    async () => {
      const project = await newProject();
      suite.provider.brain.delayMs = (call) => (call.stage === 'PLAN' && call.turn === 0 ? HOLD_MS : undefined);
      const since = suite.provider.brain.calls.length;
      const first = startCli(project, tddArgs());
      const start = await first.waitForEvent((event) => event.type === 'run-start', 'run-start');
      await suite.provider.brain.waitForCall((call) => call.stage === 'PLAN', since);
      expect(await readLockPid(project)).toBe(first.child.pid);

      const second = await runCli(project, tddArgs());
      expect(second.code, describeResult(second)).toBe(2);
      const refused = errorLine(second);
      expect(refused.code).toBe('locked');
      expect(refused.message).toMatch(
        new RegExp(`^The repository is locked by run ${start.runId} \\(pid ${String(first.child.pid)} `),
      );
      const plain = await runCli(project, ['tdd', 'Another feature', ...PROVIDER_ARGS]);
      expect(plain.code, describeResult(plain)).toBe(2);
      expect(plain.stderr).toMatch(/error: The repository is locked by run .*\(pid \d+/);
      const resume = await runCli(project, resumeArgs(start.runId));
      expect(resume.code, describeResult(resume)).toBe(2);
      expect(errorLine(resume).code).toBe('locked');
      // Plain output does not claim it is resuming a run it will refuse.
      const plainResume = await runCli(project, ['resume', start.runId, ...PROVIDER_ARGS]);
      expect(plainResume.code, describeResult(plainResume)).toBe(2);
      expect(plainResume.stdout).not.toContain('Resuming');
      expect(plainResume.stderr).toMatch(/error: The repository is locked by run/);

      // None of the refused commands created a run or touched the active one.
      const runs = await withLedger(project, (ledger) => ledger.listRuns(10));
      expect(runs.map((run) => [run.id, run.status])).toEqual([[start.runId, 'running']]);
      expect(await readLockPid(project)).toBe(first.child.pid);

      first.kill('SIGINT');
      const stopped = await first.exited;
      expect(stopped.code, describeResult(stopped)).toBe(130);
      expect((await ledgerRun(project, start.runId)).status).toBe('interrupted');
      expect(await readLockPid(project)).toBeNull();
    },
    E2E_TIMEOUT_MS,
  );
});
