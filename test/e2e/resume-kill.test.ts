/**
 * `kill -9` at any moment, then `ratchet resume`, finishes the run from its last checkpoint with
 * no duplicated and no lost commits.
 *
 * The built CLI runs a two-item TDD feature against the loopback Anthropic fake answered by a
 * stateless script (test/support/resume-brain.ts). An uninterrupted run gives the reference
 * commit subjects; each test then SIGKILLs a fresh run at one moment, picked from the NDJSON
 * events on its stdout (or from the request the fake is holding), and resumes it to the end.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RatchetEvent } from '../../src/core/events.js';
import { NOTES_REF } from '../../src/core/handoff.js';
import { systemClock } from '../../src/engine/effects.js';
import { createEnveloper } from '../../src/engine/event-stream.js';
import { RESUME_ITEMS, RESUME_REFERENCE_SUBJECTS, type BrainCall } from '../support/resume-brain.js';
import { expectCompletedLikeReference, expectStarts } from '../support/resume-checks.js';
import {
  branchCommits,
  createResumeProject,
  describeResult,
  E2E_TIMEOUT_MS,
  handoffNote,
  HOLD_MS,
  holdTestsWhen,
  ledgerRun,
  readLockPid,
  releaseTests,
  resumeUntilDone,
  runCli,
  runIdOf,
  startCli,
  startResumeProvider,
  tddArgs,
  waitForHeldTests,
  withLedger,
  type CliProcess,
  type CliResult,
  type ResumeProject,
  type ResumeProvider,
} from '../support/resume-harness.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

let provider: ResumeProvider;
let reference: string[] = [];
const projects: ResumeProject[] = [];

async function newProject(): Promise<ResumeProject> {
  const project = await createResumeProject(provider);
  projects.push(project);
  return project;
}

beforeAll(async () => {
  provider = await startResumeProvider();
  const project = await newProject();
  const result = await runCli(project, tddArgs());
  expect(result.code, describeResult(result)).toBe(0);
  const runId = runIdOf(result.events);
  const run = await ledgerRun(project, runId);
  reference = branchCommits(project, run.baseCommit ?? '', runId).map((commit) => commit.subject);
  // The script is deterministic, so the reference is known in advance too.
  expect(reference).toEqual(RESUME_REFERENCE_SUBJECTS);
  await expectCompletedLikeReference(project, runId, reference);
}, E2E_TIMEOUT_MS);

afterEach(async () => {
  provider.brain.delayMs = undefined;
  for (const project of projects.splice(1)) await project.cleanup();
});

afterAll(async () => {
  for (const project of projects.splice(0)) await project.cleanup();
  await provider.close();
});

/** Holds the first model call of `stage` for `fn` (its reply would take minutes). */
function holdCall(stage: string, fn: string): (call: BrainCall) => number | undefined {
  return (call) => (call.stage === stage && call.turn === 0 && call.item?.fn === fn ? HOLD_MS : undefined);
}

interface Killed {
  runId: string;
  result: CliResult;
  cli: CliProcess;
}

/**
 * Starts `args` (default `ratchet tdd`), waits for `moment`, SIGKILLs the CLI and checks it died
 * mid-run: no `run-end`, the ledger still says `running`, and its lock file is left behind.
 */
async function killAt(
  project: ResumeProject,
  moment: (cli: CliProcess) => Promise<void>,
  args: string[] = tddArgs(),
): Promise<Killed> {
  const cli = startCli(project, args);
  await moment(cli);
  cli.kill('SIGKILL');
  const result = await cli.exited;
  expect(result.signal, describeResult(result)).toBe('SIGKILL');
  expect(result.events.filter((event) => event.type === 'run-end')).toEqual([]);
  const runId = runIdOf(result.events);
  expect((await ledgerRun(project, runId)).status).toBe('running');
  expect(await readLockPid(project), 'the killed process leaves its (now stale) lock behind').toBe(cli.child.pid);
  return { runId, result, cli };
}

/** Resumes until done and checks the outcome against the reference. */
async function resumeAndCheck(
  project: ResumeProject,
  runId: string,
  options: { withId: boolean; resumes: number },
): Promise<CliResult[]> {
  provider.brain.delayMs = undefined;
  const results = await resumeUntilDone(project, options.withId ? runId : undefined);
  // The script is deterministic: one resume must be enough.
  expect(
    results.map((result) => result.code),
    results[0] ? describeResult(results[0]) : '',
  ).toEqual([0]);
  const first = results[0];
  expect(first?.events[0]).toMatchObject({ type: 'run-start', runId, resumed: true });
  const end = { type: 'run-end', status: 'completed', hint: null, next: null };
  expect(results[results.length - 1]?.events.at(-1)).toMatchObject(end);
  await expectCompletedLikeReference(project, runId, reference);
  await expectStarts(project, runId, options.resumes);
  return results;
}

/** The ledger's attempts of `stage` in `cycle`: `GREEN#2 accepted`, `GREEN#1 error interrupted`. */
async function stageRows(project: ResumeProject, runId: string, cycle: number, stage: string): Promise<string[]> {
  const rows = await withLedger(project, (ledger) => ledger.stages(runId));
  return rows
    .filter((row) => row.cycle === cycle && row.stage === stage)
    .map(
      (row) =>
        `${row.stage}#${row.attempt} ${row.outcome ?? 'open'}${row.outcome === 'error' ? ` ${row.reason ?? ''}` : ''}`,
    );
}

const isStage = (event: RatchetEvent, type: 'stage-start' | 'stage-end', stage: string, cycle: number): boolean =>
  event.type === type && event.stage === stage && event.cycle === cycle;

/** A run needs bubblewrap unless it opts out: where it is missing these runs do (the subject is resume, not the sandbox). */
const sandbox = sandboxForThisMachine();

describe(`kill -9, then ratchet resume${sandbox.note}`, () => {
  it(
    'during a model call: RED of cycle 2 is waiting for its reply',
    async () => {
      const project = await newProject();
      provider.brain.delayMs = holdCall('RED', 'subtract');
      const since = provider.brain.calls.length;
      const { runId, cli } = await killAt(project, async (running) => {
        const started = await running.waitForEvent(
          (event) => isStage(event, 'stage-start', 'RED', 2),
          'stage-start RED cycle 2',
        );
        await provider.brain.waitForCall((call) => call.stage === 'RED' && call.item?.fn === 'subtract', since);
        // The fake holds the reply: the call is in flight, no model-call event has come back yet.
        expect(running.events.slice(running.events.indexOf(started)).some((event) => event.type === 'model-call')).toBe(
          false,
        );
      });
      // The last checkpoint is cycle 2's PLAN.
      expect(cli.events.filter((event) => event.type === 'checkpoint-create').at(-1)).toMatchObject({
        subject: reference[4],
      });
      // The ledger still says running; status says the process is gone and how to go on.
      const status = await runCli(project, ['status', runId]);
      expect(status.stdout).toContain(
        `running, but its process is gone (killed?)\n  next      \`ratchet resume ${runId}\` continues from the last checkpoint\n`,
      );
      const statusJson = await runCli(project, ['status', runId, '--json']);
      expect(JSON.parse(statusJson.stdout.trim())).toMatchObject({ run: { status: 'running' }, active: false });
      // So does the list of runs.
      const history = await runCli(project, ['history']);
      expect(history.stdout).toMatch(new RegExp(`${runId}\\s+running, but its process is gone \\(killed\\?\\)`));
      const historyJson = await runCli(project, ['history', '--json']);
      expect(JSON.parse(historyJson.stdout.trim())).toMatchObject({
        runs: [{ id: runId, status: 'running', active: false }],
      });
      await resumeAndCheck(project, runId, { withId: false, resumes: 1 });
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'right after a checkpoint-create (around the note write), resumed with the run id',
    async () => {
      const project = await newProject();
      const { runId, result } = await killAt(project, async (running) => {
        await running.waitForEvent(
          (event) => event.type === 'checkpoint-create' && event.stage === 'RED',
          'checkpoint-create of RED',
        );
      });
      const created = result.events.find((event) => event.type === 'checkpoint-create' && event.stage === 'RED');
      expect(created).toMatchObject({ subject: reference[1] });
      await resumeAndCheck(project, runId, { withId: true, resumes: 1 });
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'between the checkpoint commit and its note: the note-less commit is dropped and redone once',
    async () => {
      const project = await newProject();
      // Holding GREEN's first call keeps the RED commit at the branch tip while we look.
      provider.brain.delayMs = holdCall('GREEN', 'add');
      const { runId, result } = await killAt(project, async (running) => {
        const created = await running.waitForEvent(
          (event) => event.type === 'checkpoint-create' && event.stage === 'RED',
          'checkpoint-create of RED',
        );
        await running.waitForEvent((event) => event.type === 'note-write', 'its note-write', created);
      });
      const created = result.events.find((event) => event.type === 'checkpoint-create' && event.stage === 'RED');
      if (created?.type !== 'checkpoint-create') throw new Error('no RED checkpoint');
      expect(project.repo.run('rev-parse', `ratchet/${runId}`)).toBe(created.commit);
      // Recreate the crash window a kill can only hit by luck: GREEN's checkpoint commit exists,
      // its note does not, and the process died before the ledger heard of it.
      const worktree = (await ledgerRun(project, runId)).worktree ?? '';
      const add = RESUME_ITEMS[0];
      if (!add) throw new Error('no items');
      await writeFile(join(worktree, add.implFile), add.impl);
      project.repo.run('-C', worktree, 'commit', '--quiet', '-am', reference[2] ?? 'feat');
      const noteless = project.repo.run('rev-parse', `ratchet/${runId}`);

      // A checkpoint the ledger recorded whose note is gone (a lost notes ref) is not dropped
      // with it: resume refuses, changing nothing, until repair-notes restores the note.
      await project.repo.git.removeNote(NOTES_REF, created.commit);
      const refused = await runCli(project, ['resume', runId, '--json']);
      expect(refused.code, describeResult(refused)).toBe(2);
      expect(refused.lines).toEqual([
        expect.objectContaining({
          type: 'error',
          code: 'usage',
          message: expect.stringContaining(
            `1 checkpoint on branch ratchet/${runId} has no handoff note in ${NOTES_REF}, though the ledger records it (the newest: ${created.commit.slice(0, 8)} ${reference[1]})`,
          ) as unknown,
          hint: expect.stringContaining(`ratchet repair-notes ${runId}`) as unknown,
        }),
      ]);
      expect(project.repo.run('rev-parse', `ratchet/${runId}`)).toBe(noteless);
      const repaired = await runCli(project, ['repair-notes', runId]);
      expect(repaired.code, describeResult(repaired)).toBe(0);
      expect(repaired.stdout).toContain(`Rewrote 1 handoff note(s) of run ${runId} from the ledger.`);

      const [resumed] = await resumeAndCheck(project, runId, { withId: false, resumes: 1 });
      expect(
        resumed?.events
          .filter((event) => event.type === 'warning')
          .map((event) => (event.type === 'warning' ? event.message : '')),
      ).toEqual([
        `Dropped 1 commit(s) after the last checkpoint ${created.commit.slice(0, 8)} (they had no handoff note).`,
      ]);
      // GREEN was redone, so the branch now has a different commit with the same subject.
      const commits = branchCommits(project, (await ledgerRun(project, runId)).baseCommit ?? '', runId);
      expect(commits.map((commit) => commit.sha)).toContain(created.commit);
      expect(commits.map((commit) => commit.sha)).not.toContain(noteless);
    },
    E2E_TIMEOUT_MS,
  );

  it.each([
    {
      window: 'before the checkpoint reached the ledger',
      recorded: false,
      said: 'the checkpoint, its handoff note and its RED attempt 1 as accepted',
    },
    {
      window: 'between its checkpoint-create and note-write events',
      recorded: true,
      said: 'its handoff note and its RED attempt 1 as accepted',
    },
  ])(
    'killed after the checkpoint commit and note, $window: resume records what the ledger lacks and continues from it',
    async ({ recorded, said }) => {
      const project = await newProject();
      // Killed while RED of `add` waits for its reply: its attempt is open, PLAN is the last checkpoint.
      provider.brain.delayMs = holdCall('RED', 'add');
      const since = provider.brain.calls.length;
      const { runId, result } = await killAt(project, async () => {
        await provider.brain.waitForCall((call) => call.stage === 'RED' && call.item?.fn === 'add', since);
      });
      const plan = result.events.find((event) => event.type === 'checkpoint-create');
      if (plan?.type !== 'checkpoint-create') throw new Error('no PLAN checkpoint');
      // Recreate the window a kill can only hit by luck: RED's checkpoint commit and its note are
      // written, the process died before the ledger recorded them (or all of them), and before
      // RED's stage-end.
      const worktree = (await ledgerRun(project, runId)).worktree ?? '';
      const add = RESUME_ITEMS[0];
      if (!add) throw new Error('no items');
      for (const [file, text] of [
        [add.testFile, add.test],
        [add.implFile, add.stub],
      ] as const) {
        await mkdir(dirname(join(worktree, file)), { recursive: true });
        await writeFile(join(worktree, file), text);
      }
      project.repo.run('-C', worktree, 'add', '-A');
      project.repo.run('-C', worktree, 'commit', '--quiet', '-m', reference[1] ?? 'test');
      const red = project.repo.run('rev-parse', `ratchet/${runId}`);
      const redNote = {
        ...handoffNote(project, plan.commit),
        phase: 'RED',
        nextPhase: 'GREEN',
        testResult: 'FAIL',
        retryCount: 0,
      };
      project.repo.run('notes', `--ref=${NOTES_REF}`, 'add', '-m', JSON.stringify(redNote, null, 2), red);
      const before = await withLedger(project, async (ledger) => {
        if (recorded) {
          const envelope = createEnveloper(runId, systemClock, await ledger.lastEventNumber(runId));
          const subject = reference[1] ?? '';
          await ledger.record(
            envelope({ type: 'checkpoint-create', stage: 'RED', phase: 'RED', commit: red, subject }),
          );
        }
        return {
          checkpoints: (await ledger.checkpoints(runId)).map((row) => row.commitSha),
          stages: (await ledger.stages(runId)).map((row) => `${row.stage}#${row.attempt} ${row.outcome ?? 'open'}`),
        };
      });
      expect(before).toEqual({
        checkpoints: recorded ? [plan.commit, red] : [plan.commit],
        stages: ['PLAN#1 accepted', 'RED#1 open'],
      });

      const [resumed] = await resumeAndCheck(project, runId, { withId: false, resumes: 1 });
      // Not dropped, not redone: recorded, and said so.
      expect(
        resumed?.events
          .filter((event) => event.type === 'warning')
          .map((event) => event.type === 'warning' && event.message),
      ).toEqual([
        `Checkpoint ${red.slice(0, 8)} (${reference[1]}) was made, but the process stopped before the ledger recorded all of it: recorded ${said}.`,
      ]);
      expect(
        resumed?.events.some((event) => event.type === 'stage-start' && event.stage === 'RED' && event.cycle === 1),
      ).toBe(false);
      const commits = branchCommits(project, (await ledgerRun(project, runId)).baseCommit ?? '', runId);
      expect(commits[1]?.sha).toBe(red);
      const after = await withLedger(project, async (ledger) => ({
        checkpoints: (await ledger.checkpoints(runId)).map((row) => row.commitSha),
        redRows: (await ledger.stages(runId))
          .filter((row) => row.cycle === 1 && row.phase === 'RED')
          .map((row) => `${row.stage}#${row.attempt} ${row.outcome ?? 'open'} ${row.reason ?? ''}`),
        notes: (await ledger.events(runId, { types: ['note-write'] })).flatMap((event) =>
          event.type === 'note-write' ? [event.commit] : [],
        ),
      }));
      expect(after.checkpoints).toEqual(commits.map((commit) => commit.sha));
      expect(after.notes).toEqual(commits.map((commit) => commit.sha));
      expect(after.redRows).toEqual(['RED#1 accepted checkpoint recorded by resume']);
      // status and history agree on the checkpoints.
      const status = await runCli(project, ['status', runId, '--json']);
      const history = await runCli(project, ['history', runId, '--json']);
      const summary = z
        .object({
          summary: z.object({
            checkpoints: z.number(),
            modelCalls: z.object({
              costUsd: z.number().nullable(),
              unpricedCalls: z.number(),
              costPartial: z.boolean(),
            }),
          }),
        })
        .parse(JSON.parse(status.stdout.trim())).summary;
      const listed = z.object({ checkpoints: z.array(z.unknown()) }).parse(JSON.parse(history.stdout.trim()));
      expect(summary.checkpoints).toBe(reference.length);
      expect(listed.checkpoints).toHaveLength(reference.length);
      // The fake's model has no known price: the cost is unknown (null), not $0.
      expect(summary.modelCalls).toMatchObject({ costUsd: null, costPartial: false });
      expect(summary.modelCalls.unpricedCalls).toBeGreaterThan(0);
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'during a test run: GREEN has written the code, the gate is running the suite',
    async () => {
      const project = await newProject();
      // The first suite run that sees GREEN's implementation of add blocks until released.
      await holdTestsWhen(project, 'src/add.js', 'a + b');
      const { runId } = await killAt(project, async (running) => {
        await running.waitForEvent(
          (event) => event.type === 'tool-call' && event.stage === 'GREEN' && event.tool === 'Write',
          'tool-call Write in GREEN',
        );
        await waitForHeldTests(project);
        expect(running.events.some((event) => event.type === 'verify-end' && event.stage === 'GREEN')).toBe(false);
      });
      // The orphaned test process of the killed run may go now; so may every later suite run.
      await releaseTests(project);
      await resumeAndCheck(project, runId, { withId: false, resumes: 1 });
      // GREEN goes on with attempt 2: the killed attempt keeps its number (the note counts it as
      // a retry) but does not use up one of the stage's attempts.
      expect(await stageRows(project, runId, 1, 'GREEN')).toEqual(['GREEN#1 error interrupted', 'GREEN#2 accepted']);
      const commits = branchCommits(project, (await ledgerRun(project, runId)).baseCommit ?? '', runId);
      const feat = commits.find((commit) => commit.subject === reference[2]);
      expect(handoffNote(project, feat?.sha ?? '')).toMatchObject({ phase: 'GREEN', retryCount: 1 });
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'right after a rejected stage (GREEN attempt 1 of cycle 2)',
    async () => {
      const project = await newProject();
      const { runId, result } = await killAt(project, async (running) => {
        await running.waitForEvent(
          (event) => event.type === 'stage-end' && event.outcome === 'rejected',
          'stage-end rejected',
        );
      });
      expect(result.events.find((event) => event.type === 'stage-end' && event.outcome === 'rejected')).toMatchObject({
        stage: 'GREEN',
        cycle: 2,
        attempt: 1,
        reason: 'tests-failing',
      });
      const [resumed] = await resumeAndCheck(project, runId, { withId: false, resumes: 1 });
      // The resumed GREEN is attempt 2 (its prompt says so), as in the run that was not killed.
      expect(resumed?.events.find((event) => event.type === 'stage-start')).toMatchObject({
        stage: 'GREEN',
        cycle: 2,
        attempt: 2,
      });
      expect(await stageRows(project, runId, 2, 'GREEN')).toEqual(['GREEN#1 rejected', 'GREEN#2 accepted']);
    },
    E2E_TIMEOUT_MS,
  );

  it(
    "with git's lock files left behind: resume removes the run's (never the main checkout's) and says so",
    async () => {
      const project = await newProject();
      provider.brain.delayMs = holdCall('GREEN', 'add');
      const since = provider.brain.calls.length;
      const { runId } = await killAt(project, async () => {
        await provider.brain.waitForCall((call) => call.stage === 'GREEN' && call.item?.fn === 'add', since);
      });
      // What a git killed mid-commit (or mid-note) leaves: the worktree's index.lock in its private
      // git dir, and the locks of the run's branch and of the notes ref in the common git dir.
      const run = await ledgerRun(project, runId);
      const worktree = run.worktree ?? '';
      const common = project.repo.run('rev-parse', '--path-format=absolute', '--git-common-dir');
      const privateDir = project.repo.run('-C', worktree, 'rev-parse', '--path-format=absolute', '--git-dir');
      expect(privateDir).toBe(join(common, 'worktrees', runId));
      const stale = [
        join(common, 'refs', 'heads', 'ratchet', `${runId}.lock`),
        join(common, 'refs', 'notes', 'tdd-handoffs.lock'),
        join(privateDir, 'index.lock'),
      ];
      const mainIndexLock = join(common, 'index.lock');
      for (const file of [...stale, mainIndexLock]) await writeFile(file, '');
      const env = { ...process.env, ...project.repo.env };
      const blocked = spawnSync('git', ['-C', worktree, 'reset', '--hard', '--quiet', 'HEAD'], {
        env,
        encoding: 'utf8',
      });
      expect(blocked.stderr).toMatch(/index\.lock': File exists/);

      provider.brain.delayMs = undefined;
      // Plain output, for the line people see; the ledger has the event.
      // No flags: the run's own provider and model (it is never swapped for the configured default).
      const resumed = await runCli(project, ['resume']);
      expect(resumed.code, describeResult(resumed)).toBe(0);
      expect(resumed.stdout).toContain(`Resuming ${runId} on anthropic / claude-resume-model, as it started`);
      const line = `Removed 3 stale git lock file(s) left by an interrupted git process: ${stale.join(', ')}`;
      expect(resumed.stdout).toContain(line);
      for (const file of stale) expect(existsSync(file), file).toBe(false);
      expect(existsSync(mainIndexLock), "the main checkout's index.lock").toBe(true);
      await rm(mainIndexLock);
      const removals = await withLedger(project, (ledger) => ledger.events(runId, { types: ['git-lock-remove'] }));
      expect(removals).toMatchObject([{ type: 'git-lock-remove', runId, files: stale }]);
      await expectCompletedLikeReference(project, runId, reference);
      await expectStarts(project, runId, 1);
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'twice: the run and then its resume are killed, a second resume (with the id) finishes',
    async () => {
      const project = await newProject();
      provider.brain.delayMs = holdCall('RED', 'subtract');
      const since = provider.brain.calls.length;
      const { runId } = await killAt(project, async () => {
        await provider.brain.waitForCall((call) => call.stage === 'RED' && call.item?.fn === 'subtract', since);
      });
      provider.brain.delayMs = undefined;
      const second = await killAt(
        project,
        async (running) => {
          const start = await running.waitForEvent((event) => event.type === 'run-start', 'run-start');
          expect(start).toMatchObject({ runId, resumed: true });
          await running.waitForEvent(
            (event) => event.type === 'stage-end' && event.outcome === 'rejected',
            'stage-end rejected',
          );
        },
        ['resume', '--provider', 'anthropic', '--model', 'claude-resume-model', '--json'],
      );
      expect(second.runId).toBe(runId);
      await resumeAndCheck(project, runId, { withId: true, resumes: 2 });
    },
    E2E_TIMEOUT_MS,
  );
});
