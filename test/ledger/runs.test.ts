import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { steppingClock, tempDir } from './helpers.js';

describe('run lifecycle', () => {
  let ledger: Ledger;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    const temp = await tempDir();
    cleanup = temp.cleanup;
    ledger = await openLedger(join(temp.dir, '.ratchet', 'ledger.db'), {
      secrets: [],
      now: steppingClock(),
    });
  });
  afterEach(async () => {
    await ledger.close();
    await cleanup();
  });

  it('creates a running run with defaults and reads it back', async () => {
    const created = await ledger.createRun({
      id: '20260101-000000-a1b2',
      workflow: 'tdd',
      repoRoot: '/repo',
      feature: 'add a sum function',
      branch: 'ratchet/20260101-000000-a1b2',
      baseBranch: 'main',
      baseCommit: 'abc123',
      worktree: '/home/u/.ratchet/worktrees/20260101-000000-a1b2',
      provider: 'anthropic',
      model: 'claude-test',
      config: { maxRetries: 3, stages: { red: { model: 'x' } } },
    });
    expect(created).toEqual({
      id: '20260101-000000-a1b2',
      workflow: 'tdd',
      repoRoot: '/repo',
      feature: 'add a sum function',
      status: 'running',
      branch: 'ratchet/20260101-000000-a1b2',
      baseBranch: 'main',
      baseCommit: 'abc123',
      worktree: '/home/u/.ratchet/worktrees/20260101-000000-a1b2',
      provider: 'anthropic',
      model: 'claude-test',
      config: { maxRetries: 3, stages: { red: { model: 'x' } } },
      error: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: null,
    });
    expect(await ledger.getRun(created.id)).toEqual(created);
    expect(await ledger.getRun('missing')).toBeUndefined();
  });

  it('stores optional fields as null', async () => {
    const run = await ledger.createRun({
      id: 'r1',
      workflow: 'solve',
      repoRoot: '/repo',
      feature: 'f',
    });
    expect(run).toMatchObject({
      branch: null,
      baseBranch: null,
      worktree: null,
      provider: null,
      model: null,
      config: null,
    });
  });

  it('finishes, fails, interrupts and resumes a run, managing finishedAt', async () => {
    await ledger.createRun({
      id: 'r1',
      workflow: 'tdd',
      repoRoot: '/repo',
      feature: 'f',
    });

    const interrupted = await ledger.updateRun('r1', { status: 'interrupted' });
    expect(interrupted.status).toBe('interrupted');
    expect(interrupted.finishedAt).toBe(interrupted.updatedAt);

    const resumed = await ledger.updateRun('r1', { status: 'running' });
    expect(resumed.finishedAt).toBeNull();

    const failed = await ledger.updateRun('r1', {
      status: 'failed',
      error: 'GREEN failed its gate after 3 attempts',
    });
    expect(failed).toMatchObject({
      status: 'failed',
      error: 'GREEN failed its gate after 3 attempts',
    });
    expect(failed.finishedAt).not.toBeNull();
    expect(failed.updatedAt > resumed.updatedAt).toBe(true);

    const explicit = await ledger.updateRun('r1', {
      status: 'completed',
      error: null,
      finishedAt: '2030-01-01T00:00:00.000Z',
    });
    expect(explicit).toMatchObject({
      status: 'completed',
      error: null,
      finishedAt: '2030-01-01T00:00:00.000Z',
    });

    const patched = await ledger.updateRun('r1', {
      worktree: '/w',
      config: { a: 1 },
    });
    expect(patched).toMatchObject({
      status: 'completed',
      worktree: '/w',
      config: { a: 1 },
      finishedAt: '2030-01-01T00:00:00.000Z',
    });

    // Accepting keeps the time the run finished.
    const accepted = await ledger.updateRun('r1', { status: 'accepted' });
    expect(accepted).toMatchObject({ status: 'accepted', finishedAt: '2030-01-01T00:00:00.000Z' });
    await ledger.createRun({ id: 'r2', workflow: 'tdd', repoRoot: '/repo', feature: 'g' });
    const rejected = await ledger.updateRun('r2', { status: 'rejected' });
    expect(rejected.finishedAt).toBe(rejected.updatedAt);
  });

  it('rejects unknown runs and duplicate ids with typed errors', async () => {
    await expect(ledger.updateRun('nope', { status: 'failed' })).rejects.toMatchObject({
      name: 'RatchetError',
      code: 'not-found',
    });
    await expect(ledger.summary('nope')).rejects.toMatchObject({
      code: 'not-found',
    });
    await ledger.createRun({
      id: 'r1',
      workflow: 'tdd',
      repoRoot: '/repo',
      feature: 'f',
    });
    await expect(
      ledger.createRun({
        id: 'r1',
        workflow: 'tdd',
        repoRoot: '/repo',
        feature: 'f',
      }),
    ).rejects.toMatchObject({
      code: 'internal',
      message: expect.stringContaining('already exists') as unknown,
    });
  });

  it('finds the latest run, optionally by status, and lists runs newest first', async () => {
    expect(await ledger.latestRun()).toBeUndefined();
    await ledger.createRun({
      id: 'r1',
      workflow: 'tdd',
      repoRoot: '/repo',
      feature: 'one',
    });
    await ledger.createRun({
      id: 'r2',
      workflow: 'tdd',
      repoRoot: '/repo',
      feature: 'two',
    });
    await ledger.createRun({
      id: 'r3',
      workflow: 'refactor',
      repoRoot: '/repo',
      feature: 'three',
    });
    await ledger.updateRun('r1', { status: 'interrupted' });
    await ledger.updateRun('r3', { status: 'completed' });

    expect((await ledger.latestRun())?.id).toBe('r3');
    expect((await ledger.latestRun({ status: 'interrupted' }))?.id).toBe('r1');
    expect((await ledger.latestRun({ status: 'running' }))?.id).toBe('r2');
    expect(await ledger.latestRun({ status: 'failed' })).toBeUndefined();
    expect((await ledger.latestRun({ status: ['running', 'interrupted'] }))?.id).toBe('r2');
    expect((await ledger.latestRun({ workflow: 'tdd' }))?.id).toBe('r2');
    expect((await ledger.latestRun({ workflow: 'tdd', status: 'interrupted' }))?.id).toBe('r1');
    expect(await ledger.latestRun({ workflow: 'refactor', status: 'running' })).toBeUndefined();
    expect(await ledger.latestRun({ status: [] })).toBeUndefined();
    expect((await ledger.listRuns()).map((run) => run.id)).toEqual(['r3', 'r2', 'r1']);
    expect((await ledger.listRuns(2)).map((run) => run.id)).toEqual(['r3', 'r2']);
  });

  it('orders runs created in the same millisecond by id', async () => {
    const fixed = new Date('2026-05-05T00:00:00.000Z');
    await using same = await openLedger(':memory:', {
      secrets: [],
      now: () => fixed,
    });
    await same.createRun({
      id: '20260505-000000-aaaa',
      workflow: 'tdd',
      repoRoot: '/r',
      feature: 'a',
    });
    await same.createRun({
      id: '20260505-000000-bbbb',
      workflow: 'tdd',
      repoRoot: '/r',
      feature: 'b',
    });
    expect((await same.latestRun())?.id).toBe('20260505-000000-bbbb');
  });
});
