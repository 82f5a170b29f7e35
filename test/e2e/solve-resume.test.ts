import { execFileSync } from 'node:child_process';
import { modelCallRequests } from '../support/e2e-run.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  startFakeAnthropicServer,
  type AnthropicReply,
  type FakeAnthropicServer,
} from '../support/fake-anthropic-server.js';
import type { RecordedRequest } from '../support/fake-http-server.js';
import { startCli } from '../support/resume-harness.js';
import { describeResult, parseNdjson, runCli } from '../support/run-cli.js';
import { anthropicPrompt, anthropicSolveBrain, SOLVE_FILES, SOLVE_TASK } from '../support/solve-fixture.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

// The runs opt out of the sandbox where bubblewrap is missing (their subject is not the sandbox).
const sandbox = sandboxForThisMachine();

/**
 * `kill -9` of a solve run in the middle of a step, then `ratchet resume`: the run continues from
 * its last checkpoint's progress note. The plans and the finished step are not made again; the
 * step that was cut off runs from its start; no commit is duplicated or lost.
 */

const FLAGS = ['--provider', 'anthropic', '--model', 'claude-sonnet-4-5', ...sandbox.flags];

let server: FakeAnthropicServer;
let repo: TempRepo;
let hold = true;

function isImplementS2(request: RecordedRequest): boolean {
  const { system, user } = anthropicPrompt(request);
  return system.startsWith('Stage: IMPLEMENT') && user.includes('Step to implement:\ns2');
}

beforeAll(async () => {
  server = await startFakeAnthropicServer();
  // The first IMPLEMENT of s2 is held (its answer would take minutes): the run is killed there.
  server.setFallback((request): AnthropicReply => {
    const reply = anthropicSolveBrain(request);
    return hold && isImplementS2(request) && reply.kind === 'message' ? { ...reply, delayMs: 120_000 } : reply;
  });
  repo = await createTempRepo({ files: SOLVE_FILES });
});

afterAll(async () => {
  await server.close();
  await repo.cleanup();
});

it('resumes a solve run killed inside a step from its last checkpoint, without redoing the plans or the steps done', async () => {
  const home = repo.path('ratchet-home');
  const env = {
    ...repo.env,
    RATCHET_HOME: home,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: 'sk-ant-test-solve-resume-000000',
  };
  const project = { repo, home, env, cleanup: () => repo.cleanup() };
  const cli = startCli(project, ['solve', SOLVE_TASK, ...FLAGS, '--json']);
  const started = await cli.waitForEvent(
    (event) => event.type === 'solve-pass-start' && event.stepId === 's2' && event.passType === 'implement',
    'the implement pass of s2',
  );
  const runId = started.runId;
  while (!modelCallRequests(server).some(isImplementS2)) await sleep(20);
  cli.kill('SIGKILL');
  const killed = await cli.exited;
  expect(killed.signal).toBe('SIGKILL');
  const before = modelCallRequests(server).length;

  hold = false;
  const resumed = await runCli(['resume', runId, ...sandbox.flags, '--json'], { cwd: repo.dir, env });
  expect(resumed.exitCode, describeResult(resumed)).toBe(0);
  const events = parseNdjson(resumed.stdout);
  const passes = events
    .filter((event) => event.type === 'solve-pass-start')
    .map((event) => `${String(event.passType)} ${String(event.stepId)} #${String(event.attempt)}`);
  expect(passes).toEqual(['implement s2 #1', 'adjustment s2 #1']);
  // Pass numbers continue after those of the killed process.
  expect(events.find((event) => event.type === 'solve-pass-start')?.pass).toBe(6);
  expect(events.filter((event) => event.type === 'solve-progress').at(-1)).toMatchObject({
    status: 'complete',
    stepsCompleted: 2,
  });
  const stagesAfter = modelCallRequests(server)
    .slice(before)
    .map((request) => anthropicPrompt(request).system.split('\n')[0]);
  expect(stagesAfter).not.toContain('Stage: META_PLAN');
  expect(stagesAfter).not.toContain('Stage: PART_PLAN');

  const subjects = execFileSync('git', ['log', '--format=%s', `main..ratchet/${runId}`], {
    cwd: repo.dir,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .reverse();
  expect(subjects).toEqual([
    'plan: Fix total and add median',
    'plan: part p1: Fix total, then add median',
    'feat: s1 Fix total so that the sum starts at 0',
    'feat: s2 Add median(xs) to src/stats.js with a test',
  ]);
}, 120_000);
