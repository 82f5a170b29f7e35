/**
 * A TDD run replayed from a cassette (`--provider replay --cassette X`) that is killed can be
 * resumed with a plain `ratchet resume`: the cassette continues where the run's last checkpoint
 * left it, however often the run was killed and resumed. The cassette is recorded first, with
 * `--record`, from a run against the loopback Anthropic fake answered by the resume brain.
 * Replay runs are recorded with the cassette's model, not the configured default. A recorded
 * session that failed a gate and was then resumed replays the same way: the replayed run fails
 * as the recorded one did, and its `resume` continues after the answers the failure used.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCassette } from '../../src/llm/cassette.js';
import { RESUME_ITEMS, RESUME_REFERENCE_SUBJECTS } from '../support/resume-brain.js';
import { expectCompletedLikeReference, expectStarts } from '../support/resume-checks.js';
import {
  createResumeProject,
  describeResult,
  E2E_TIMEOUT_MS,
  holdTestsWhen,
  ledgerRun,
  readLockPid,
  releaseTests,
  resumeArgs,
  resumeUntilDone,
  runCli,
  runIdOf,
  startCli,
  startResumeProvider,
  tddArgs,
  waitForHeldTests,
  withLedger,
  RESUME_MODEL,
  type ResumeProject,
  type ResumeProvider,
} from '../support/resume-harness.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

let provider: ResumeProvider;
let cassette = '';
const projects: ResumeProject[] = [];

async function newProject(): Promise<ResumeProject> {
  const project = await createResumeProject(provider);
  projects.push(project);
  return project;
}

function replayArgs(): string[] {
  return ['tdd', 'Build a tiny arithmetic module', '--provider', 'replay', '--cassette', cassette, '--json'];
}

beforeAll(async () => {
  provider = await startResumeProvider();
  const recording = await newProject();
  cassette = recording.repo.path('tdd.cassette.ndjson');
  const recorded = await runCli(recording, [...tddArgs(), '--record', cassette]);
  expect(recorded.code, describeResult(recorded)).toBe(0);
  await expectCompletedLikeReference(recording, runIdOf(recorded.events), RESUME_REFERENCE_SUBJECTS);
  const { header, entries } = parseCassette(await readFile(cassette, 'utf8'), cassette);
  expect(header?.model).toBe(RESUME_MODEL);
  expect(entries.length).toBe(provider.brain.calls.length);
}, E2E_TIMEOUT_MS);

afterAll(async () => {
  for (const project of projects.splice(0)) await project.cleanup();
  await provider.close();
});

/** A run needs bubblewrap unless it opts out: where it is missing these runs do (the subject is resume, not the sandbox). */
const sandbox = sandboxForThisMachine();

describe(`ratchet tdd --provider replay${sandbox.note}`, () => {
  it(
    'replays the recorded run, recorded in the ledger, status and report with the cassette model',
    async () => {
      const project = await newProject();
      const calls = provider.brain.calls.length;
      const result = await runCli(project, replayArgs());
      expect(result.code, describeResult(result)).toBe(0);
      const runId = runIdOf(result.events);
      await expectCompletedLikeReference(project, runId, RESUME_REFERENCE_SUBJECTS);
      expect(provider.brain.calls.length, 'a replay calls no model').toBe(calls);

      const run = await ledgerRun(project, runId);
      expect({ provider: run.provider, model: run.model }).toEqual({ provider: 'replay', model: RESUME_MODEL });
      const models = await withLedger(project, async (ledger) => [
        ...new Set((await ledger.modelCalls(runId)).map((call) => call.model)),
      ]);
      expect(models).toEqual([RESUME_MODEL]);
      const status = await runCli(project, ['status', runId]);
      expect(status.stdout).toMatch(new RegExp(`provider +replay ${RESUME_MODEL}\\n`));
      const report = await runCli(project, ['report', runId]);
      expect(report.code, describeResult(report)).toBe(0);
      expect(report.stdout).toContain(`| Provider | replay \`${RESUME_MODEL}\` |`);
      expect(`${status.stdout}${report.stdout}`).not.toContain('claude-opus');

      // --model given explicitly still names the model.
      const named = await newProject();
      const explicit = await runCli(named, [...replayArgs(), '--model', 'my-replay-name']);
      expect(explicit.code, describeResult(explicit)).toBe(0);
      expect((await ledgerRun(named, runIdOf(explicit.events))).model).toBe('my-replay-name');
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'killed twice with kill -9, each plain `ratchet resume` continues the cassette from the last checkpoint',
    async () => {
      const project = await newProject();
      // First kill: GREEN of cycle 1 has written add, its gate is running the suite.
      await holdTestsWhen(project, 'src/add.js', 'a + b');
      const first = startCli(project, replayArgs());
      await waitForHeldTests(project);
      first.kill('SIGKILL');
      const killed = await first.exited;
      expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
      const runId = runIdOf(killed.events);
      expect((await ledgerRun(project, runId)).status).toBe('running');
      await releaseTests(project);

      // Second kill, of the resume: GREEN attempt 2 of cycle 2 (attempt 1 was rejected).
      await holdTestsWhen(project, 'src/subtract.js', 'a - b');
      const second = startCli(project, ['resume', '--json']);
      await waitForHeldTests(project);
      second.kill('SIGKILL');
      const killedAgain = await second.exited;
      expect(killedAgain.signal, describeResult(killedAgain)).toBe('SIGKILL');
      expect(killedAgain.events[0]).toMatchObject({ type: 'run-start', runId, resumed: true });
      expect(
        killedAgain.events.some(
          (event) =>
            event.type === 'stage-end' && event.stage === 'GREEN' && event.cycle === 2 && event.outcome === 'rejected',
        ),
      ).toBe(true);
      expect(await readLockPid(project)).toBe(second.child.pid);
      await releaseTests(project);

      // No flags: the run's provider, model and cassette, at the position of its last checkpoint.
      const calls = provider.brain.calls.length;
      const results = await resumeUntilDone(project, undefined, 1);
      expect(results[0]?.events.at(-1)).toMatchObject({ type: 'run-end', status: 'completed' });
      await expectCompletedLikeReference(project, runId, RESUME_REFERENCE_SUBJECTS);
      await expectStarts(project, runId, 2);
      expect(provider.brain.calls.length).toBe(calls);
      expect((await ledgerRun(project, runId)).model).toBe(RESUME_MODEL);
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'a recorded session that failed a gate and was resumed replays as recorded: the same failure, then `resume` finishes',
    async () => {
      // Recorded: GREEN of `add` writes a product instead of a sum in each of its 3 attempts, so
      // the run fails (exit 1) on its RED checkpoint; resumed with the script's answers, the
      // recording continues into the same cassette and the run completes.
      const recording = await newProject();
      const session = recording.repo.path('failed-then-resumed.ndjson');
      const add = RESUME_ITEMS[0];
      if (!add) throw new Error('no items');
      const product = add.impl.replace('a + b', 'a * b');
      provider.brain.override = (call) =>
        call.stage === 'GREEN' && call.item?.fn === 'add' && call.turn === 0
          ? {
              kind: 'message',
              content: [
                { type: 'text', text: 'Implement add.' },
                { type: 'tool_use', name: 'Write', input: { file_path: add.implFile, content: product } },
              ],
            }
          : undefined;
      let failed;
      try {
        failed = await runCli(recording, [...tddArgs(), '--record', session]);
      } finally {
        provider.brain.override = undefined;
      }
      expect(failed.code, describeResult(failed)).toBe(1);
      const recordedRun = runIdOf(failed.events);
      const failure = failed.events.at(-1);
      expect(failure).toMatchObject({ type: 'run-end', status: 'failed' });
      const recordedResume = await runCli(recording, resumeArgs(recordedRun));
      expect(recordedResume.code, describeResult(recordedResume)).toBe(0);
      const errorNoteOn = [RESUME_REFERENCE_SUBJECTS[1] ?? ''];
      await expectCompletedLikeReference(recording, recordedRun, RESUME_REFERENCE_SUBJECTS, { errorNoteOn });

      // Replayed in a fresh project: it fails as recorded, and a plain `resume` (more than once
      // if need be, as a user would) plays what the recorded resume answered, to the end.
      const project = await newProject();
      const calls = provider.brain.calls.length;
      const replayed = await runCli(project, [
        'tdd',
        'Build a tiny arithmetic module',
        '--provider',
        'replay',
        '--cassette',
        session,
        '--json',
      ]);
      expect(replayed.code, describeResult(replayed)).toBe(1);
      const runId = runIdOf(replayed.events);
      expect(replayed.events.at(-1)).toMatchObject({
        type: 'run-end',
        status: 'failed',
        message: failure?.type === 'run-end' ? failure.message : '(no message)',
      });
      const resumed = await runCli(project, resumeArgs());
      expect(resumed.code, describeResult(resumed)).toBe(0);
      await expectCompletedLikeReference(project, runId, RESUME_REFERENCE_SUBJECTS, { errorNoteOn });
      await expectStarts(project, runId, 1);
      expect(provider.brain.calls.length, 'a replay calls no model').toBe(calls);
    },
    E2E_TIMEOUT_MS,
  );
});
