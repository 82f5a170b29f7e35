import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCassette } from '../../src/llm/cassette.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { REFACTOR_FILES, refactorBrain, stageOf } from '../support/refactor-js-fixture.js';
import { describeResult, parseNdjson, runCli, type CliResult } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

/**
 * A refactor run recorded with `--record` replays with `--provider replay`: the planner, the
 * patcher and the critic of one run share one cassette, read (and written) in call order.
 */

interface Outcome {
  runId: string;
  batchEnds: string[];
  subjects: string[];
  diff: string;
}

function outcomeOf(result: CliResult, repo: string): Outcome {
  const lines = parseNdjson(result.stdout) as Array<{
    type: string;
    runId?: string;
    batch?: string;
    outcome?: string;
    attempts?: number;
  }>;
  const runId = lines.find((line) => line.type === 'run-start')?.runId ?? '';
  const branch = `ratchet/${runId}`;
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  return {
    runId,
    batchEnds: lines
      .filter((line) => line.type === 'batch-end')
      .map((line) => `${line.batch ?? ''} ${line.outcome ?? ''} ${String(line.attempts)}`),
    subjects: git('log', '--reverse', '--format=%s', `main..${branch}`).split('\n'),
    diff: git('diff', 'main', branch),
  };
}

/** The subject is the refactor run, not the sandbox: where bubblewrap is missing the runs opt out. */
const sandbox = sandboxForThisMachine();

describe(`ratchet refactor run --record, then --provider replay${sandbox.note}`, () => {
  let server: FakeAnthropicServer;
  const repos: TempRepo[] = [];

  beforeAll(async () => {
    server = await startFakeAnthropicServer();
    server.setFallback(refactorBrain);
  });

  afterAll(async () => {
    await server.close();
    for (const repo of repos) await repo.cleanup();
  });

  async function freshRepo(): Promise<TempRepo> {
    const repo = await createTempRepo({ files: REFACTOR_FILES });
    repos.push(repo);
    return repo;
  }

  it('replays the recorded run (planner, then patcher) in a fresh copy with the same batches and commits', async () => {
    const recordedRepo = await freshRepo();
    const cassette = recordedRepo.path('refactor.cassette.ndjson');
    const recordEnv = {
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-refactor-replay-000000',
      RATCHET_HOME: recordedRepo.path('ratchet-home'),
    };
    const recorded = await runCli(
      [
        'refactor',
        'run',
        recordedRepo.dir,
        '--provider',
        'anthropic',
        '--model',
        'claude-refactor-e2e',
        '--record',
        cassette,
        '--yes',
        '--json',
        ...sandbox.flags,
      ],
      { cwd: recordedRepo.dir, env: recordEnv },
    );
    expect(recorded.exitCode, describeResult(recorded)).toBe(0);
    const reference = outcomeOf(recorded, recordedRepo.dir);
    expect(reference.batchEnds).toEqual(['batch-001 committed 1', 'batch-002 noop 1']);
    expect(reference.subjects).toEqual(['checkpoint: batch-001 Remove dead code in src/math.js']);

    // One cassette, in call order: the planner's turn(s) first, then the patcher's.
    const { header, entries } = parseCassette(await readFile(cassette, 'utf8'), cassette);
    expect(header?.model).toBe('claude-refactor-e2e');
    const stages = entries.map((entry) => entry.match.stage);
    // The model list before the run (the provider check) is no model call and not recorded.
    const calls = server.requests.filter((request) => request.path === '/v1/messages');
    expect(stages.length).toBe(calls.length);
    expect(stages).toEqual(calls.map((request) => stageOf(request)));
    expect(stages[0]).toBe('Stage: PLANNER');
    expect(stages).toContain('Stage: PATCHER');

    const requestsBefore = server.requests.length;
    const replayRepo = await freshRepo();
    // No key and no endpoint: the replay never reaches a model.
    const replayed = await runCli(
      [
        'refactor',
        'run',
        replayRepo.dir,
        '--provider',
        'replay',
        '--cassette',
        cassette,
        '--yes',
        '--json',
        ...sandbox.flags,
      ],
      {
        cwd: replayRepo.dir,
        env: { RATCHET_HOME: replayRepo.path('ratchet-home') },
      },
    );
    expect(replayed.exitCode, describeResult(replayed)).toBe(0);
    const replay = outcomeOf(replayed, replayRepo.dir);
    expect(replay.batchEnds).toEqual(reference.batchEnds);
    expect(replay.subjects).toEqual(reference.subjects);
    expect(replay.diff).toBe(reference.diff);
    expect(server.requests.length).toBe(requestsBefore);

    // The run is recorded with the cassette's model, not the default Anthropic model.
    const status = await runCli(['status', replay.runId], {
      cwd: replayRepo.dir,
      env: { RATCHET_HOME: replayRepo.path('ratchet-home') },
    });
    expect(status.exitCode, describeResult(status)).toBe(0);
    expect(status.stdout).toMatch(/provider +replay claude-refactor-e2e/);
    expect(status.stdout).not.toContain('claude-opus');
  });
});
