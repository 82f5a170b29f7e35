/**
 * A run that stops inside a stage attempt (a provider error, an interruption) ends that attempt
 * as an error, and `resume` ends the attempts a killed process left open: `status` and the report
 * never show the attempts of a stopped run as still open.
 */
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { RatchetEvent } from '../../src/core/events.js';
import { createEngineServices } from '../../src/engine/effects.js';
import { resumeTdd, startTdd, type RunOutcome } from '../../src/library.js';
import { openLedger, type Ledger } from '../../src/ledger/ledger.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { PACKAGE_ROOT } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

let repo: TempRepo;
let ledger: Ledger;
let server: FakeAnthropicServer;

beforeEach(async () => {
  repo = await createTempRepo();
  await cp(join(PACKAGE_ROOT, 'demo', 'kata'), repo.dir, { recursive: true });
  await repo.git.commitAll('stack kata');
  ledger = await openLedger(repo.path('ledger.db'), { secrets: [] });
  // The key passes the provider check (the model list); every model call is answered 401.
  server = await startFakeAnthropicServer({ apiKey: 'sk-ant-test-the-accepted-key-000000' });
  server.setFallback(() => ({
    kind: 'raw',
    status: 401,
    body: JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }),
  }));
});

afterEach(async () => {
  await server.close();
  await ledger.close();
  await repo.cleanup();
});

async function drain(
  run: AsyncGenerator<RatchetEvent, RunOutcome>,
): Promise<{ events: RatchetEvent[]; outcome: RunOutcome }> {
  const events: RatchetEvent[] = [];
  for (;;) {
    const next = await run.next();
    if (next.done) return { events, outcome: next.value };
    events.push(next.value);
  }
}

const line = (row: { cycle: number; stage: string; attempt: number; outcome: string | null; reason: string | null }) =>
  `${row.cycle} ${row.stage}#${row.attempt} ${row.outcome ?? 'open'} ${row.reason ?? ''}`.trim();

/** The subject is the stage attempts, not the sandbox: where bubblewrap is missing the runs opt out. */
const sandbox = sandboxForThisMachine();

describe(`stage attempts of a run that stops${sandbox.note}`, () => {
  it('end as errors when the run fails inside them, and resume ends those a killed process left open', async () => {
    const env = {
      ...repo.env,
      RATCHET_HOME: repo.path('home'),
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-the-accepted-key-000000',
    };
    const config = await loadConfig({
      repoRoot: repo.dir,
      env,
      flags: { provider: 'anthropic', model: 'm', ...sandbox.configFlags },
    });
    const services = createEngineServices(ledger, env);
    const feature = 'A stack with push, pop and peek';

    const first = await drain(startTdd({ repoRoot: repo.dir, feature, config, allowDirty: false }, services));
    expect(first.outcome).toMatchObject({ status: 'failed', error: { code: 'auth' } });
    expect(first.events.slice(-2).map((event) => event.type)).toEqual(['stage-end', 'run-end']);
    expect(first.events.at(-2)).toMatchObject({ stage: 'PLAN', attempt: 1, outcome: 'error', reason: 'auth' });
    const runId = first.outcome.runId;
    expect((await ledger.stages(runId)).map(line)).toEqual(['1 PLAN#1 error auth']);
    expect(await ledger.summary(runId)).toMatchObject({ stageAttempts: { total: 1, error: 1, open: 0 } });

    // A process killed inside RED leaves its attempt open.
    await ledger.record({
      type: 'stage-start',
      stage: 'RED',
      phase: 'RED',
      cycle: 1,
      attempt: 1,
      id: `${runId}:${(await ledger.lastEventNumber(runId)) + 1}`,
      runId,
      timestamp: new Date().toISOString(),
    });
    expect((await ledger.stages(runId)).map(line)).toEqual(['1 PLAN#1 error auth', '1 RED#1 open']);

    const second = await drain(resumeTdd({ repoRoot: repo.dir, config, runId }, services));
    expect(second.outcome).toMatchObject({ status: 'failed', error: { code: 'auth' } });
    expect((await ledger.stages(runId)).map(line)).toEqual([
      '1 PLAN#1 error auth',
      '1 RED#1 error interrupted',
      '1 PLAN#1 error auth',
    ]);
  });
});
