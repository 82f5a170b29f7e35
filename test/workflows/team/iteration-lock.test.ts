import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createIterationStore } from '../../../src/workflows/team/file-stores.js';
import { openIterationSession } from '../../../src/workflows/team/iteration-session.js';
import { advanceIteration } from '../../../src/workflows/team/advance.js';
import { createProcessRunner } from '../../../src/process/runner.js';
import { FakeModelClient } from '../../support/fake-model-client.js';
import { teamContext } from './team-fixtures.js';

describe('one team command at a time per iteration', () => {
  let teamDir: string;
  beforeEach(async () => {
    teamDir = await mkdtemp(join(tmpdir(), 'team-lock-'));
    await createIterationStore(teamDir).create({ description: 'calc', maxTurns: 2 });
  });
  afterEach(async () => {
    await rm(teamDir, { recursive: true, force: true });
  });

  const ctx = () => ({ ...teamContext(), teamDir });
  const deps = { modelFor: () => new FakeModelClient(() => ({ text: 'hi' })), runner: createProcessRunner() };

  it('refuses a second session and an advance while a session runs, and frees the iteration when it ends', async () => {
    const first = await openIterationSession(ctx(), deps);
    expect((await first.events.next()).value).toMatchObject({ type: 'SessionStarted' });

    const second = await openIterationSession(ctx(), deps);
    await expect(second.events.next()).rejects.toThrow(/Another ratchet team command is working on iter-1/);
    await expect(advanceIteration(ctx(), deps)).rejects.toThrow(/Another ratchet team command/);

    for await (const _event of first.events) {
      // drain the first session to its end
    }
    const third = await openIterationSession(ctx(), deps);
    expect((await third.events.next()).value).toMatchObject({ type: 'SessionStarted' });
    await third.events.return();
    expect((await advanceIteration(ctx(), deps)).to).toBe('planning');
  });

  it('takes over the lock of a process that is gone', async () => {
    const dir = join(teamDir, 'locks', 'iter-1');
    await mkdir(dir, { recursive: true });
    const gone = {
      runId: 'team iter-1',
      pid: 2 ** 22 + 12345,
      startedAt: new Date().toISOString(),
      hostname: hostname(),
    };
    await writeFile(join(dir, 'ratchet.lock'), JSON.stringify(gone));
    const session = await openIterationSession(ctx(), deps);
    expect((await session.events.next()).value).toMatchObject({ type: 'SessionStarted' });
    await session.events.return();
  });
});
