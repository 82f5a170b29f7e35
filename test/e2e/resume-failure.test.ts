/**
 * A run that fails in the middle of a stage — git killed inside a checkpoint after the commit was
 * made, or the model API failing after the agent committed by itself — must leave no commit
 * without its own handoff note behind a checkpoint: `ratchet resume` then finishes with exactly
 * the commits of an uninterrupted run. (Both used to leave a commit carrying the previous
 * stage's note, so resume either failed for ever or kept a foreign commit.)
 */
import { describe, expect, it } from 'vitest';
import type { AnthropicContentBlock } from '../support/fake-anthropic-server.js';
import { RESUME_ITEMS, RESUME_REFERENCE_SUBJECTS } from '../support/resume-brain.js';
import { expectCompletedLikeReference, expectStarts } from '../support/resume-checks.js';
import {
  branchCommits,
  describeResult,
  E2E_TIMEOUT_MS,
  handoffNote,
  killCommitOnceWhen,
  ledgerRun,
  resumeUntilDone,
  runCli,
  runIdOf,
  useResumeSuite,
  tddArgs,
  type ResumeProject,
} from '../support/resume-harness.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

const suite = useResumeSuite();
const newProject = (): Promise<ResumeProject> => suite.newProject();

async function branchSubjects(project: ResumeProject, runId: string): Promise<string[]> {
  const run = await ledgerRun(project, runId);
  return branchCommits(project, run.baseCommit ?? '', runId).map((commit) => commit.subject);
}

/** A run needs bubblewrap unless it opts out: where it is missing these runs do (the subject is resume, not the sandbox). */
const sandbox = sandboxForThisMachine();

describe(`resume after a failure inside a stage${sandbox.note}`, () => {
  it(
    'git killed inside a checkpoint, after the commit and before the note',
    async () => {
      const project = await newProject();
      await killCommitOnceWhen(project, 'feat: add');
      const failed = await runCli(project, tddArgs());
      expect(failed.code, describeResult(failed)).toBe(1);
      const runId = runIdOf(failed.events);
      // git dies by SIGKILL inside the checkpoint script (its shell reports exit 137).
      expect(failed.events.at(-1)).toMatchObject({
        type: 'run-end',
        status: 'failed',
        message: expect.stringMatching(/killed by a signal|exit 137/) as unknown,
      });
      // --json: the final object carries the resume command (the plain output prints it on stderr).
      expect(failed.lines.at(-1)).toMatchObject({
        type: 'run-end',
        next: { command: `ratchet resume ${runId}`, argv: ['resume', runId] },
      });
      expect((await ledgerRun(project, runId)).status).toBe('failed');
      // The half-made GREEN commit is gone; the error sits on the RED checkpoint, GREEN is next.
      expect(await branchSubjects(project, runId)).toEqual(RESUME_REFERENCE_SUBJECTS.slice(0, 2));
      const tip = project.repo.run('rev-parse', `ratchet/${runId}`);
      expect(handoffNote(project, tip)).toMatchObject({ phase: 'RED', nextPhase: 'GREEN', runId });
      expect(handoffNote(project, tip).error).toMatch(/killed by a signal|exit 137/);

      const results = await resumeUntilDone(project, undefined);
      expect(results).toHaveLength(1);
      await expectCompletedLikeReference(project, runId, RESUME_REFERENCE_SUBJECTS, {
        errorNoteOn: [RESUME_REFERENCE_SUBJECTS[1] ?? ''],
      });
      await expectStarts(project, runId, 1);
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'the agent commits by itself, then the model API fails: its commit is not kept',
    async () => {
      const project = await newProject();
      // The sandbox keeps git metadata read-only, so the agent's `git commit` fails there; without
      // it (no bwrap, or `sandbox = "off"`) the commit happens and must still be undone.
      await project.repo.write({ '.ratchet/config.toml': '[bash]\nsandbox = "off"\n' });
      const add = RESUME_ITEMS[0];
      if (!add) throw new Error('no items');
      const commitByItself: AnthropicContentBlock[] = [
        { type: 'tool_use', name: 'Write', input: { file_path: add.testFile, content: add.test } },
        { type: 'tool_use', name: 'Write', input: { file_path: add.implFile, content: add.stub } },
        {
          type: 'tool_use',
          name: 'Bash',
          input: { command: "git add -A && git commit --quiet -m 'agent: my own commit'" },
        },
      ];
      suite.provider.brain.override = (call) => {
        if (call.stage !== 'RED' || call.item?.fn !== 'add') return undefined;
        return call.turn === 0
          ? { kind: 'message', content: commitByItself }
          : { kind: 'error', status: 400, message: 'scripted failure' };
      };
      const failed = await runCli(project, tddArgs());
      expect(failed.code, describeResult(failed)).toBe(3);
      const runId = runIdOf(failed.events);
      const bash = failed.events.find((event) => event.type === 'tool-call' && event.tool === 'Bash');
      expect(bash).toMatchObject({ isError: false });
      expect(failed.events.at(-1)).toMatchObject({ type: 'run-end', status: 'failed' });
      expect(await branchSubjects(project, runId)).toEqual(RESUME_REFERENCE_SUBJECTS.slice(0, 1));

      suite.provider.brain.override = undefined;
      await resumeUntilDone(project, undefined);
      await expectCompletedLikeReference(project, runId, RESUME_REFERENCE_SUBJECTS, {
        errorNoteOn: [RESUME_REFERENCE_SUBJECTS[0] ?? ''],
      });
      await expectStarts(project, runId, 1);
    },
    E2E_TIMEOUT_MS,
  );
});
