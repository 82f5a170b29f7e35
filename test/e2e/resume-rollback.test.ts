/**
 * `ratchet rollback` + `ratchet resume` re-does a finished run from one of its checkpoints, and
 * `ratchet repair-notes` restores the handoff notes from the ledger after the notes ref was
 * destroyed; `resume` refuses (exit 2, naming repair-notes) a run whose checkpoints lost their
 * notes or carry one that does not parse, instead of dropping them. The built CLI runs against
 * the loopback Anthropic fake answered by the stateless script in test/support/resume-brain.ts.
 * The tests use one completed run: repair-notes leaves it as it found it, the refusals leave it
 * rolled back to its GREEN checkpoint, rollback comes last; each also works alone (`-t`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffStateSchema, NOTES_REF, type HandoffState } from '../../src/core/handoff.js';
import { RESUME_REFERENCE_SUBJECTS } from '../support/resume-brain.js';
import { expectCompletedLikeReference, expectStarts } from '../support/resume-checks.js';
import {
  branchCommits,
  createResumeProject,
  describeResult,
  errorLine,
  E2E_TIMEOUT_MS,
  handoffNote,
  ledgerRun,
  onlyLine,
  resumeArgs,
  resumeUntilDone,
  runCli,
  runIdOf,
  startResumeProvider,
  tddArgs,
  type BranchCommit,
  type ResumeProject,
  withLedger,
  type ResumeProvider,
} from '../support/resume-harness.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

let provider: ResumeProvider;
/** One completed run shared by the tests below: repair-notes leaves it as it found it, rollback goes last. */
let project: ResumeProject;
let runId = '';
let commits: BranchCommit[] = [];

beforeAll(async () => {
  provider = await startResumeProvider();
  project = await createResumeProject(provider);
  const result = await runCli(project, tddArgs());
  expect(result.code, describeResult(result)).toBe(0);
  runId = runIdOf(result.events);
  await expectCompletedLikeReference(project, runId, RESUME_REFERENCE_SUBJECTS);
  commits = branchCommits(project, (await ledgerRun(project, runId)).baseCommit ?? '', runId);
}, E2E_TIMEOUT_MS);

afterAll(async () => {
  await project.cleanup();
  await provider.close();
});

const RepairJsonSchema = z.object({ run: z.string(), movedAside: z.string().nullable(), rewritten: z.number() });

interface HistoryJson {
  run: string;
  checkpoints: Array<{ sha: string; subject: string; state: unknown; noteError: string | null }>;
}

function isHistoryJson(value: unknown): value is HistoryJson {
  return (
    typeof value === 'object' &&
    value !== null &&
    'run' in value &&
    'checkpoints' in value &&
    Array.isArray(value.checkpoints)
  );
}

/** A run needs bubblewrap unless it opts out: where it is missing these runs do (the subject is resume, not the sandbox). */
const sandbox = sandboxForThisMachine();

describe(`repair-notes${sandbox.note}`, () => {
  it(
    'restores every handoff note from the ledger after the notes ref was pointed at a blob',
    async () => {
      const before = new Map<string, HandoffState>(
        commits.map((commit) => [commit.sha, handoffNote(project, commit.sha)]),
      );

      const blob = project.repo.run('hash-object', '-w', 'README.md');
      project.repo.run('update-ref', NOTES_REF, blob);

      const status = await runCli(project, ['status']);
      expect(status.code, describeResult(status)).toBe(1);
      expect(status.stderr).toMatch(/^error: /m);
      expect(status.stderr).toContain('ratchet repair-notes');
      const statusJson = await runCli(project, ['status', '--json']);
      expect(statusJson.code, describeResult(statusJson)).toBe(1);
      const failure = errorLine(statusJson);
      expect(failure.code).toBe('notes');
      expect(failure.hint).toContain('ratchet repair-notes');

      const repair = await runCli(project, ['repair-notes', '--json']);
      expect(repair.code, describeResult(repair)).toBe(0);
      const repaired = RepairJsonSchema.parse(onlyLine(repair));
      expect(repaired).toMatchObject({ run: runId, rewritten: commits.length });
      // The broken ref was kept aside, not deleted.
      expect(repaired.movedAside).toMatch(/^refs\/notes\/tdd-handoffs-broken-/);
      expect(project.repo.run('rev-parse', repaired.movedAside ?? '')).toBe(blob);

      const history = await runCli(project, ['history', '--json']);
      expect(history.code, describeResult(history)).toBe(0);
      const listed = onlyLine(history);
      if (!isHistoryJson(listed)) throw new Error(`unexpected history output: ${history.stdout}`);
      expect(listed.run).toBe(runId);
      expect(listed.checkpoints.map((checkpoint) => checkpoint.sha)).toEqual(commits.map((commit) => commit.sha));
      for (const checkpoint of listed.checkpoints) {
        expect(checkpoint.noteError, checkpoint.subject).toBeNull();
        expect(HandoffStateSchema.parse(checkpoint.state), checkpoint.subject).toEqual(before.get(checkpoint.sha));
      }
      // status works again and shows the finished run.
      const healed = await runCli(project, ['status', '--json']);
      expect(healed.code, describeResult(healed)).toBe(0);
      expect(onlyLine(healed)).toMatchObject({
        run: { id: runId, status: 'completed' },
        handoff: { nextPhase: 'COMPLETE' },
      });
    },
    E2E_TIMEOUT_MS,
  );
});

describe(`resume and the handoff notes of the checkpoints${sandbox.note}`, () => {
  it(
    'refuses (exit 2, repair-notes hint) when the notes ref is gone, and when a note is not JSON; repair-notes restores them',
    async () => {
      const green = commits.find((commit) => commit.subject.startsWith('feat: '));
      if (!green) throw new Error('no GREEN commit');
      const rollback = await runCli(project, ['rollback', green.sha, '--json']);
      expect(rollback.code, describeResult(rollback)).toBe(0);
      const onBranch = commits.slice(0, commits.indexOf(green) + 1);
      const tip = () => project.repo.run('rev-parse', `ratchet/${runId}`);
      const eventsBefore = await withLedger(project, async (ledger) => (await ledger.events(runId)).length);

      // The notes ref deleted: the ledger still records every checkpoint, so nothing is dropped.
      project.repo.run('update-ref', '-d', NOTES_REF);
      const refused = await runCli(project, resumeArgs());
      expect(refused.code, describeResult(refused)).toBe(2);
      const error = errorLine(refused);
      expect(error.code).toBe('usage');
      expect(error.message).toContain(`Run ${runId} cannot be resumed: ${onBranch.length} checkpoints on branch`);
      expect(error.message).toContain(`have no handoff note in ${NOTES_REF}, though the ledger records them`);
      expect(error.message).toContain(green.sha.slice(0, 8));
      expect(error.hint).toContain(`ratchet repair-notes ${runId}`);
      expect(refused.events.filter((event) => event.type === 'warning')).toEqual([]);
      expect(tip()).toBe(green.sha);
      expect((await ledgerRun(project, runId)).status).toBe('interrupted');
      expect(await withLedger(project, async (ledger) => (await ledger.events(runId)).length)).toBe(eventsBefore);
      const plain = await runCli(project, ['resume']);
      expect(plain.code, describeResult(plain)).toBe(2);
      expect(plain.stderr).not.toContain('Dropped');
      expect(plain.stderr).toContain(`hint: Run \`ratchet repair-notes ${runId}\``);

      const repair = await runCli(project, ['repair-notes', '--json']);
      expect(repair.code, describeResult(repair)).toBe(0);
      expect(RepairJsonSchema.parse(onlyLine(repair))).toMatchObject({ run: runId, rewritten: onBranch.length });
      for (const commit of onBranch) expect(handoffNote(project, commit.sha).runId).toBe(runId);

      // A note that is not JSON: a usage error with the same hint (exit 1 is for failed gates).
      project.repo.run('notes', `--ref=${NOTES_REF}`, 'add', '-f', '-m', '{"phase": "GREEN", broken', green.sha);
      const broken = await runCli(project, resumeArgs());
      expect(broken.code, describeResult(broken)).toBe(2);
      expect(errorLine(broken)).toMatchObject({
        code: 'usage',
        message: `Run ${runId} cannot be resumed: the handoff note on ${green.sha.slice(0, 8)} is not valid JSON.`,
        hint: expect.stringContaining(`ratchet repair-notes ${runId}`) as unknown,
      });
      expect(tip()).toBe(green.sha);
      const healed = await runCli(project, ['repair-notes', '--json']);
      expect(healed.code, describeResult(healed)).toBe(0);
      expect(RepairJsonSchema.parse(onlyLine(healed))).toMatchObject({ rewritten: 1 });
      expect(handoffNote(project, green.sha)).toMatchObject({ phase: 'GREEN', nextPhase: 'REFACTOR', runId });
    },
    E2E_TIMEOUT_MS,
  );
});

describe(`rollback, then resume${sandbox.note}`, () => {
  it(
    're-does every stage after the GREEN checkpoint of cycle 1',
    async () => {
      const greenIndex = commits.findIndex((commit) => commit.subject.startsWith('feat: '));
      const green = commits[greenIndex];
      if (!green) throw new Error('no GREEN commit');

      const rollback = await runCli(project, ['rollback', green.sha, '--json']);
      expect(rollback.code, describeResult(rollback)).toBe(0);
      expect(onlyLine(rollback)).toMatchObject({
        run: runId,
        commit: green.sha,
        state: { phase: 'GREEN', nextPhase: 'REFACTOR', runId },
      });
      expect(project.repo.run('rev-parse', `ratchet/${runId}`)).toBe(green.sha);
      expect((await ledgerRun(project, runId)).status).toBe('interrupted');

      const results = await resumeUntilDone(project, undefined);
      expect(results[0]?.events[0]).toMatchObject({ type: 'run-start', runId, resumed: true });
      // Resuming from the checkpoint itself drops nothing.
      expect(results.flatMap((result) => result.events).filter((event) => event.type === 'warning')).toEqual([]);
      await expectCompletedLikeReference(project, runId, RESUME_REFERENCE_SUBJECTS);
      await expectStarts(project, runId, 1);
      const after = branchCommits(project, (await ledgerRun(project, runId)).baseCommit ?? '', runId);
      // The checkpoints up to the rollback point are the very same commits; the rest was redone.
      expect(after.slice(0, greenIndex + 1)).toEqual(commits.slice(0, greenIndex + 1));
      expect(after.slice(greenIndex + 1).map((commit) => commit.subject)).toEqual(
        RESUME_REFERENCE_SUBJECTS.slice(greenIndex + 1),
      );
      // REFACTOR of cycle 1 ran again: the second run-start is followed by its stage-start.
      expect(results[0]?.events.find((event) => event.type === 'stage-start')).toMatchObject({
        stage: 'REFACTOR',
        cycle: 1,
        attempt: 1,
      });
    },
    E2E_TIMEOUT_MS,
  );
});
