import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RatchetError } from '../../src/core/errors.js';
import { acquireRepoLock, readRepoLock, REPO_LOCK_FILE } from '../../src/git/repo-lock.js';

let commonDir: string;
beforeEach(async () => {
  commonDir = await mkdtemp(join(tmpdir(), 'ratchet-lock-'));
});
afterEach(async () => {
  await rm(commonDir, { recursive: true, force: true });
});

/** The pid of a process that has already exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'process.exit(0)'], {
    stdio: 'ignore',
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('spawn failed');
  await new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return pid;
}

describe('repository lock', () => {
  it('is exclusive while held and free after release', async () => {
    const lock = await acquireRepoLock(commonDir, { runId: 'run-a' });
    expect(lock.path).toBe(join(commonDir, REPO_LOCK_FILE));
    const onDisk: unknown = JSON.parse(await readFile(lock.path, 'utf8'));
    expect(onDisk).toMatchObject({
      runId: 'run-a',
      pid: process.pid,
      hostname: hostname(),
    });
    expect(await readRepoLock(commonDir)).toEqual(lock.info);

    const error = await acquireRepoLock(commonDir, { runId: 'run-b' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RatchetError);
    expect(error).toMatchObject({ code: 'locked' });
    expect((error as Error).message).toContain('run-a');
    expect((error as Error).message).toContain(String(process.pid));
    expect((error as RatchetError).hint).toContain('ratchet resume');

    await lock.release();
    await lock.release();
    expect(await readRepoLock(commonDir)).toBeNull();
    const again = await acquireRepoLock(commonDir, { runId: 'run-b' });
    await again.release();
  });

  it('releases through await using', async () => {
    {
      await using lock = await acquireRepoLock(commonDir, { runId: 'scoped' });
      expect(lock.info.runId).toBe('scoped');
      expect(await readRepoLock(commonDir)).not.toBeNull();
    }
    expect(await readRepoLock(commonDir)).toBeNull();
  });

  it('takes over a stale lock whose process is dead', async () => {
    const pid = await deadPid();
    const stale = await acquireRepoLock(commonDir, { runId: 'crashed', pid });
    const lock = await acquireRepoLock(commonDir, { runId: 'resumed' });
    expect(await readRepoLock(commonDir)).toMatchObject({
      runId: 'resumed',
      pid: process.pid,
    });
    // The crashed run's late release must not delete the new holder's lock.
    await stale.release();
    expect(await readRepoLock(commonDir)).toMatchObject({ runId: 'resumed' });
    await lock.release();
  });

  it('takes over an unreadable lock file', async () => {
    await writeFile(join(commonDir, REPO_LOCK_FILE), '{"runId": "half-writ');
    expect(await readRepoLock(commonDir)).toBeNull();
    const lock = await acquireRepoLock(commonDir, { runId: 'fresh' });
    expect(await readRepoLock(commonDir)).toMatchObject({ runId: 'fresh' });
    await lock.release();
  });

  it('treats a lock from another host as held', async () => {
    const foreign = {
      runId: 'elsewhere',
      pid: 1,
      startedAt: new Date().toISOString(),
      hostname: `not-${hostname()}`,
    };
    await writeFile(join(commonDir, REPO_LOCK_FILE), JSON.stringify(foreign));
    await expect(acquireRepoLock(commonDir, { runId: 'local' })).rejects.toMatchObject({
      code: 'locked',
      details: { holder: foreign },
    });
  });

  it('lets exactly one of many concurrent contenders win', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, index) => acquireRepoLock(commonDir, { runId: `run-${index}` })),
    );
    const won = results.filter((result) => result.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'locked' });
      else await result.value.release();
    }
  });
});
