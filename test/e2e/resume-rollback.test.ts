/**
 * `ratchet rollback` + `ratchet resume` re-does a finished run from one of its checkpoints, and
 * `ratchet repair-notes` restores the handoff notes from the ledger after the notes ref was
 * destroyed. The built CLI runs against the loopback Anthropic fake answered by the stateless
 * script in test/support/resume-brain.ts. Both tests use one completed run: repair-notes leaves
 * it as it found it, rollback comes last; either also works alone (`-t`).
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
  resumeUntilDone,
  runCli,
  runIdOf,
  startResumeProvider,
  tddArgs,
  type BranchCommit,
  type ResumeProject,
  type ResumeProvider,
} from '../support/resume-harness.js';

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

describe('repair-notes', () => {
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

describe('rollback, then resume', () => {
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
