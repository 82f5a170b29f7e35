import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createEngineServices } from '../../src/engine/effects.js';
import { startTdd } from '../../src/library.js';
import { openLedger, type Ledger } from '../../src/ledger/ledger.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;
let ledger: Ledger;

beforeEach(async () => {
  repo = await createTempRepo({ files: { 'package.json': '{"scripts":{"test":"node --test"}}\n' } });
  ledger = await openLedger(repo.path('ledger.db'), { secrets: [] });
});

afterEach(async () => {
  await ledger.close();
  await repo.cleanup();
});

describe('ratchet tdd with an empty feature', () => {
  it.each(['', '   \n'])('is a usage error before any run, branch or worktree exists (%j)', async (feature) => {
    const env = { ...repo.env, RATCHET_HOME: repo.path('home') };
    const config = await loadConfig({
      repoRoot: repo.dir,
      env,
      flags: { provider: 'replay', cassette: repo.path('none.ndjson') },
    });
    const run = startTdd({ repoRoot: repo.dir, feature, config, allowDirty: false }, createEngineServices(ledger, env));

    await expect(run.next()).rejects.toMatchObject({
      code: 'usage',
      message: 'The feature to build is empty.',
      hint: expect.stringContaining('ratchet tdd "') as unknown,
    });
    expect(await ledger.listRuns(10)).toEqual([]);
    expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');
  });
});
