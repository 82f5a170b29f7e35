import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createIdGenerator, systemClock } from '../../src/engine/effects.js';
import { resumeTdd } from '../../src/library.js';
import { openLedger, type Ledger } from '../../src/ledger/ledger.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;
let ledger: Ledger;

beforeEach(async () => {
  repo = await createTempRepo();
  ledger = await openLedger(repo.path('ledger.db'), { secrets: [] });
});

afterEach(async () => {
  await ledger.close();
  await repo.cleanup();
});

describe('ratchet resume on a run of another workflow', () => {
  it('refuses a refactor run with what to do instead, touching nothing', async () => {
    const baseCommit = await repo.git.head();
    await ledger.createRun({
      id: 'refactor-1',
      workflow: 'refactor',
      repoRoot: repo.dir,
      feature: 'whole-repository refactor',
      branch: 'ratchet/refactor-1',
      baseBranch: 'main',
      baseCommit,
      worktree: repo.path('worktrees', 'refactor-1'),
    });
    await ledger.updateRun('refactor-1', { status: 'interrupted' });
    const config = await loadConfig({ repoRoot: repo.dir, env: { RATCHET_HOME: repo.path('home') } });
    const services = {
      ledger,
      clock: systemClock,
      ids: createIdGenerator(systemClock),
      runner: createProcessRunner(),
      env: {},
    };

    const resumed = resumeTdd({ repoRoot: repo.dir, config, runId: 'refactor-1' }, services);

    await expect(resumed.next()).rejects.toMatchObject({
      code: 'usage',
      message: 'Run refactor-1 is a refactor run; only tdd, tasks, and solve runs can be resumed.',
      hint: expect.stringContaining('ratchet accept refactor-1 --force') as unknown,
    });
    expect((await ledger.getRun('refactor-1'))?.status).toBe('interrupted');
    expect(await repo.git.branchExists('ratchet/refactor-1')).toBe(false);
  });
});
