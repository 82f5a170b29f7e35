/**
 * Assertions shared by the resume / interrupt end-to-end tests: a finished run must look exactly
 * like an uninterrupted one.
 */
import { expect } from 'vitest';
import type { Phase } from '../../src/core/stages.js';
import {
  branchCommits,
  handoffNote,
  ledgerRun,
  readLockPid,
  runStarts,
  worktreeStatus,
  worktreeTestList,
  type ResumeProject,
} from './resume-harness.js';
import { RESUME_ITEMS } from './resume-brain.js';

const PHASE_OF_PREFIX: Record<string, Phase> = { plan: 'PLAN', test: 'RED', feat: 'GREEN', refactor: 'REFACTOR' };

/**
 * The run is `completed` in the ledger; its branch holds exactly the reference commits (no
 * duplicated, no lost ones); every commit has a parseable handoff note of this run whose phase
 * matches the commit; the worktree is clean with every test-list item checked; no lock is left.
 */
export async function expectCompletedLikeReference(
  project: ResumeProject,
  runId: string,
  reference: readonly string[],
  options: { errorNoteOn?: readonly string[] } = {},
): Promise<void> {
  const run = await ledgerRun(project, runId);
  expect(run.status).toBe('completed');
  expect(run.baseCommit).not.toBeNull();
  const commits = branchCommits(project, run.baseCommit ?? '', runId);
  expect(commits.map((commit) => commit.subject)).toEqual([...reference]);
  for (const commit of commits) {
    const note = handoffNote(project, commit.sha);
    expect(note.runId, `note on ${commit.subject}`).toBe(runId);
    expect(note.phase, `phase of the note on ${commit.subject}`).toBe(
      PHASE_OF_PREFIX[commit.subject.split(':')[0] ?? ''],
    );
    // A failure is recorded in the note of the checkpoint the run resumed from, and stays there.
    if (options.errorNoteOn?.includes(commit.subject))
      expect(note.error, `error in the note on ${commit.subject}`).not.toBeNull();
    else expect(note.error, `error in the note on ${commit.subject}`).toBeNull();
  }
  const last = commits[commits.length - 1];
  if (last) expect(handoffNote(project, last.sha).nextPhase).toBe('COMPLETE');
  expect(run.worktree).not.toBeNull();
  const worktree = run.worktree ?? '';
  expect(worktreeStatus(project, worktree)).toBe('');
  expect(project.repo.run('-C', worktree, 'rev-parse', 'HEAD')).toBe(last?.sha);
  const list = await worktreeTestList(worktree);
  expect(list).not.toMatch(/- \[ \]/);
  expect(list.match(/- \[x\]/g)).toHaveLength(RESUME_ITEMS.length);
  expect(await readLockPid(project)).toBeNull();
}

/** The ledger shows one fresh start followed by `resumes` resumed starts. */
export async function expectStarts(project: ResumeProject, runId: string, resumes: number): Promise<void> {
  expect(await runStarts(project, runId)).toEqual([
    { resumed: false },
    ...Array.from({ length: resumes }, () => ({ resumed: true })),
  ]);
}
