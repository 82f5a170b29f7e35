/**
 * `ratchet resume` keeps the endpoint a run started with, also when it came from the environment
 * (`ANTHROPIC_BASE_URL`) and not from `--base-url`: a resume in a shell without the variable, or
 * with another value in it, must not send the code and the key to a different host. Only
 * `--base-url` given to `resume` chooses another endpoint.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { createResumeBrain } from '../support/resume-brain.js';
import { RESUME_REFERENCE_SUBJECTS } from '../support/resume-brain.js';
import { expectCompletedLikeReference, expectStarts } from '../support/resume-checks.js';
import {
  describeResult,
  E2E_TIMEOUT_MS,
  ledgerRun,
  runCli,
  startCli,
  tddArgs,
  useResumeSuite,
  type ResumeProject,
} from '../support/resume-harness.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

const suite = useResumeSuite();

/** Starts `ratchet tdd` (endpoint from ANTHROPIC_BASE_URL only) and kill -9s it after RED's checkpoint. */
async function killedRun(project: ResumeProject): Promise<string> {
  const cli = startCli(project, tddArgs());
  await cli.waitForEvent(
    (event) => event.type === 'checkpoint-create' && event.stage === 'RED',
    'checkpoint-create of RED',
  );
  cli.kill('SIGKILL');
  const result = await cli.exited;
  expect(result.signal, describeResult(result)).toBe('SIGKILL');
  const runId = result.events[0]?.runId ?? '';
  const run = await ledgerRun(project, runId);
  expect(run.status).toBe('running');
  // The endpoint the run used is recorded with it, though no --base-url named it.
  expect(z.object({ baseUrl: z.string() }).parse(run.config).baseUrl).toBe(suite.provider.server.url);
  return runId;
}

/** A second fake Anthropic endpoint, answering like the first (so a run could finish there too). */
async function otherEndpoint(): Promise<FakeAnthropicServer> {
  const server = await startFakeAnthropicServer({ apiKey: 'sk-ant-resume-test-key' });
  const brain = createResumeBrain();
  server.setFallback((request) => brain.reply(request));
  return server;
}

/** A run needs bubblewrap unless it opts out: where it is missing these runs do (the subject is resume, not the sandbox). */
const sandbox = sandboxForThisMachine();

describe(`ratchet resume and the endpoint from ANTHROPIC_BASE_URL${sandbox.note}`, () => {
  it(
    'without the variable at resume: continues at the recorded endpoint',
    async () => {
      const project = await suite.newProject();
      const runId = await killedRun(project);
      delete project.env.ANTHROPIC_BASE_URL;
      const calls = suite.provider.server.requests.length;
      const resumed = await runCli(project, ['resume', '--json']);
      expect(resumed.code, describeResult(resumed)).toBe(0);
      expect(suite.provider.server.requests.length).toBeGreaterThan(calls);
      await expectCompletedLikeReference(project, runId, RESUME_REFERENCE_SUBJECTS);
      await expectStarts(project, runId, 1);
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'with another value in the variable at resume: the recorded endpoint wins, and a notice says so',
    async () => {
      const project = await suite.newProject();
      const runId = await killedRun(project);
      const other = await otherEndpoint();
      try {
        project.env.ANTHROPIC_BASE_URL = other.url;
        const resumed = await runCli(project, ['resume']);
        expect(resumed.code, describeResult(resumed)).toBe(0);
        expect(other.requests).toEqual([]);
        expect(resumed.stdout).toContain(
          `ANTHROPIC_BASE_URL (${other.url}) is not used: run ${runId} continues at ${suite.provider.server.url}, the endpoint it started with (--base-url chooses another).`,
        );
        await expectCompletedLikeReference(project, runId, RESUME_REFERENCE_SUBJECTS);
      } finally {
        await other.close();
      }
    },
    E2E_TIMEOUT_MS,
  );

  it(
    '--base-url given to resume chooses another endpoint',
    async () => {
      const project = await suite.newProject();
      const runId = await killedRun(project);
      const other = await otherEndpoint();
      try {
        delete project.env.ANTHROPIC_BASE_URL;
        const calls = suite.provider.server.requests.length;
        const resumed = await runCli(project, ['resume', '--base-url', other.url, '--json']);
        expect(resumed.code, describeResult(resumed)).toBe(0);
        expect(other.requests.length).toBeGreaterThan(0);
        expect(suite.provider.server.requests.length).toBe(calls);
        await expectCompletedLikeReference(project, runId, RESUME_REFERENCE_SUBJECTS);
      } finally {
        await other.close();
      }
    },
    E2E_TIMEOUT_MS,
  );
});
