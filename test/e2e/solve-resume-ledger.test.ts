/**
 * `kill -9` of a solve run between a checkpoint's commit (with its progress note) and the
 * ledger's record of it, then `ratchet resume`: the checkpoint is recorded once, with the pass
 * that made it, and said so; nothing is made again and no commit is duplicated. The window is
 * too short to hit with a signal, so the test kills the run later (inside the next step) and then
 * takes the checkpoint's record out of the ledger, leaving what such a kill leaves: the commit
 * and its note on the branch, the ledger without its `checkpoint-create`.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/ledger.js';
import { modelCallRequests } from '../support/e2e-run.js';
import {
  startFakeAnthropicServer,
  type AnthropicReply,
  type FakeAnthropicServer,
} from '../support/fake-anthropic-server.js';
import type { RecordedRequest } from '../support/fake-http-server.js';
import { startCli } from '../support/resume-harness.js';
import { describeResult, parseNdjson, runCli } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { anthropicPrompt, anthropicSolveBrain, SOLVE_FILES, SOLVE_TASK } from '../support/solve-fixture.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

// The runs opt out of the sandbox where bubblewrap is missing (their subject is not the sandbox).
const sandbox = sandboxForThisMachine();
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

/** The run's checkpoints as the ledger records them: `<stage> <subject>`, in order. */
async function ledgerCheckpoints(runId: string): Promise<{ sha: string; line: string }[]> {
  const ledger = await openLedger(join(repo.dir, '.ratchet', 'ledger.db'), { secrets: [] });
  try {
    return (await ledger.checkpoints(runId)).map((row) => ({
      sha: row.commitSha,
      line: `${row.stage} ${row.subject}`,
    }));
  } finally {
    await ledger.close();
  }
}

it('records a checkpoint a kill left out of the ledger once, and makes nothing again', async () => {
  const env = {
    ...repo.env,
    RATCHET_HOME: repo.path('ratchet-home'),
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: 'sk-ant-test-solve-resume-000000',
  };
  const project = { repo, home: repo.path('ratchet-home'), env, cleanup: () => repo.cleanup() };
  const cli = startCli(project, ['solve', SOLVE_TASK, ...FLAGS, '--json']);
  const started = await cli.waitForEvent(
    (event) => event.type === 'solve-pass-start' && event.stepId === 's2' && event.passType === 'implement',
    'the implement pass of s2',
  );
  const runId = started.runId;
  while (!modelCallRequests(server).some(isImplementS2)) await sleep(20);
  cli.kill('SIGKILL');
  expect((await cli.exited).signal).toBe('SIGKILL');

  // s1's checkpoint: its commit and progress note are on the branch; its record goes.
  const recorded = await ledgerCheckpoints(runId);
  const s1 = recorded.find(({ line }) => line.startsWith('IMPLEMENT feat: s1'));
  if (s1 === undefined) throw new Error(`no s1 checkpoint in ${JSON.stringify(recorded)}`);
  const db = new Database(join(repo.dir, '.ratchet', 'ledger.db'));
  try {
    const row = db.prepare('SELECT seq FROM checkpoints WHERE run_id = ? AND commit_sha = ?').get(runId, s1.sha) as {
      seq: number;
    };
    db.prepare('DELETE FROM checkpoints WHERE run_id = ? AND seq = ?').run(runId, row.seq);
    db.prepare("DELETE FROM events WHERE run_id = ? AND seq = ? AND type = 'checkpoint-create'").run(runId, row.seq);
  } finally {
    db.close();
  }
  expect((await ledgerCheckpoints(runId)).map(({ line }) => line)).toEqual([
    'META_PLAN plan: Fix total and add median',
    'PART_PLAN plan: part p1: Fix total, then add median',
  ]);

  hold = false;
  const resumed = await runCli(['resume', runId, ...sandbox.flags, '--json'], { cwd: repo.dir, env });
  expect(resumed.exitCode, describeResult(resumed)).toBe(0);
  const events = parseNdjson(resumed.stdout);
  expect(events.filter((event) => event.type === 'warning').map((event) => event.message)).toContain(
    `Checkpoint ${s1.sha.slice(0, 8)} (feat: s1 Fix total so that the sum starts at 0) was made, but the process stopped before the ledger recorded all of it: recorded the checkpoint.`,
  );
  const passes = events
    .filter((event) => event.type === 'solve-pass-start')
    .map((event) => `${String(event.passType)} ${String(event.stepId)} #${String(event.attempt)}`);
  expect(passes).toEqual(['implement s2 #1', 'adjustment s2 #1']);

  const branch = execFileSync('git', ['log', '--format=%H %s', '--reverse', `main..ratchet/${runId}`], {
    cwd: repo.dir,
    encoding: 'utf8',
  })
    .trim()
    .split('\n');
  expect(branch.map((line) => line.slice(41))).toEqual([
    'plan: Fix total and add median',
    'plan: part p1: Fix total, then add median',
    'feat: s1 Fix total so that the sum starts at 0',
    'feat: s2 Add median(xs) to src/stats.js with a test',
  ]);
  // Every commit of the branch recorded once, s1 with the pass that made it.
  const after = await ledgerCheckpoints(runId);
  expect(after.map(({ sha }) => sha)).toEqual(branch.map((line) => line.slice(0, 40)));
  expect(after.map(({ line }) => line)).toEqual([
    'META_PLAN plan: Fix total and add median',
    'PART_PLAN plan: part p1: Fix total, then add median',
    'IMPLEMENT feat: s1 Fix total so that the sum starts at 0',
    'IMPLEMENT feat: s2 Add median(xs) to src/stats.js with a test',
  ]);
}, 120_000);
