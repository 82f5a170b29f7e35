import { describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/index.js';
import { newRun, useLedger } from './helpers.js';

/** A run with every optional field given. */
const FULL_RUN = {
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
};

describe('run lifecycle', () => {
  const fixture = useLedger('.ratchet/ledger.db');

  it('creates a running run with defaults and reads it back', async () => {
    const { ledger } = fixture;
    const created = await ledger.createRun(FULL_RUN);
    expect(created).toEqual({
      ...FULL_RUN,
      status: 'running',
      error: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: null,
      finalCommit: null,
    });
    expect(await ledger.getRun(created.id)).toEqual(created);
    expect(await ledger.getRun('missing')).toBeUndefined();
  });

  it('stores optional fields as null', async () => {
    const { ledger } = fixture;
    const run = await ledger.createRun(newRun('r1', { workflow: 'solve' }));
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
    const { ledger } = fixture;
    await ledger.createRun(newRun('r1'));

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
    // So does rolling it back (`ratchet refactor rollback`).
    const rolledBack = await ledger.updateRun('r1', { status: 'rolled-back' });
    expect(rolledBack).toMatchObject({ status: 'rolled-back', finishedAt: '2030-01-01T00:00:00.000Z' });
    await ledger.createRun(newRun('r2', { feature: 'g' }));
    const rejected = await ledger.updateRun('r2', { status: 'rejected' });
    expect(rejected.finishedAt).toBe(rejected.updatedAt);
  });

  it('rejects unknown runs and duplicate ids with typed errors', async () => {
    const { ledger } = fixture;
    await expect(ledger.updateRun('nope', { status: 'failed' })).rejects.toMatchObject({
      name: 'RatchetError',
      code: 'not-found',
    });
    await expect(ledger.summary('nope')).rejects.toMatchObject({
      code: 'not-found',
    });
    await ledger.createRun(newRun('r1'));
    await expect(ledger.createRun(newRun('r1'))).rejects.toMatchObject({
      code: 'internal',
      message: expect.stringContaining('already exists') as unknown,
    });
  });

  it('finds the latest run, optionally by status, and lists runs newest first', async () => {
    const { ledger } = fixture;
    expect(await ledger.latestRun()).toBeUndefined();
    await ledger.createRun(newRun('r1', { feature: 'one' }));
    await ledger.createRun(newRun('r2', { feature: 'two' }));
    await ledger.createRun(newRun('r3', { workflow: 'refactor', feature: 'three' }));
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
    await using same = await openLedger(':memory:', { secrets: [], now: () => fixed });
    await same.createRun(newRun('20260505-000000-aaaa', { repoRoot: '/r', feature: 'a' }));
    await same.createRun(newRun('20260505-000000-bbbb', { repoRoot: '/r', feature: 'b' }));
    expect((await same.latestRun())?.id).toBe('20260505-000000-bbbb');
  });
});
