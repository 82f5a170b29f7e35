import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { RatchetError } from '../core/errors.js';

/** Name of the lock file inside the repository's common git directory. */
export const REPO_LOCK_FILE = 'ratchet.lock';

const RepoLockInfoSchema = z.object({
  runId: z.string(),
  pid: z.number().int(),
  startedAt: z.string(),
  hostname: z.string(),
});

/** Contents of `<commonDir>/ratchet.lock`. */
export type RepoLockInfo = z.infer<typeof RepoLockInfoSchema>;

/** A held repository lock. Release it explicitly or with `await using`. */
export interface RepoLock {
  readonly path: string;
  readonly info: RepoLockInfo;
  /** Deletes the lock file if it is still ours. Idempotent. */
  release(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Takes the exclusive per-repository lock `<commonDir>/ratchet.lock` (shared by all worktrees),
 * created with O_EXCL. A lock held by a live process on this host, or by any process on
 * another host, throws `locked`. A lock whose process is gone (or whose file is unreadable) is
 * stale and taken over once.
 */
export async function acquireRepoLock(commonDir: string, owner: { runId: string; pid?: number }): Promise<RepoLock> {
  const path = join(commonDir, REPO_LOCK_FILE);
  const info: RepoLockInfo = {
    runId: owner.runId,
    pid: owner.pid ?? process.pid,
    startedAt: new Date().toISOString(),
    hostname: hostname(),
  };
  if (await tryCreate(path, info)) return heldLock(path, info);

  const holder = await readHolder(path);
  if (holder !== 'missing' && holder !== 'unreadable' && isHeld(holder)) throw lockedError(path, holder);
  if (holder !== 'missing') await removeStale(path, holder);
  if (await tryCreate(path, info)) return heldLock(path, info);

  const winner = await readHolder(path);
  throw lockedError(path, typeof winner === 'string' ? undefined : winner);
}

/** The current holder of the repository lock, or null when it is free (or its file unreadable). */
export async function readRepoLock(commonDir: string): Promise<RepoLockInfo | null> {
  const holder = await readHolder(join(commonDir, REPO_LOCK_FILE));
  return typeof holder === 'string' ? null : holder;
}

/** Creates the lock file exclusively; false when it already exists. */
async function tryCreate(path: string, info: RepoLockInfo): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'wx');
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw fsError(error, path);
  }
  try {
    await handle.writeFile(`${JSON.stringify(info, null, 2)}\n`);
  } catch (error) {
    await handle.close();
    await unlink(path).catch(() => undefined);
    throw fsError(error, path);
  }
  await handle.close();
  return true;
}

const READ_ATTEMPTS = 5;
const READ_RETRY_MS = 50;

/**
 * Reads and validates the lock file. A file that exists but does not parse may be one another
 * process is writing right now, so it is re-read a few times before being called unreadable.
 */
async function readHolder(path: string): Promise<RepoLockInfo | 'missing' | 'unreadable'> {
  for (let attempt = 0; ; attempt++) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return 'missing';
      throw fsError(error, path);
    }
    const parsed = parseInfo(text);
    if (parsed) return parsed;
    if (attempt + 1 >= READ_ATTEMPTS) return 'unreadable';
    await new Promise((done) => setTimeout(done, READ_RETRY_MS));
  }
}

function parseInfo(text: string): RepoLockInfo | undefined {
  try {
    const result = RepoLockInfoSchema.safeParse(JSON.parse(text));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a live process holds the repository lock for this run (a `running` run killed with -9 has none). */
export async function runLockHeld(commonDir: string, runId: string): Promise<boolean> {
  const holder = await readRepoLock(commonDir);
  return holder !== null && holder.runId === runId && isHeld(holder);
}

/** A lock from another host cannot be checked, so it counts as held. */
function isHeld(holder: RepoLockInfo): boolean {
  if (holder.hostname !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return errorCode(error) !== 'ESRCH';
  }
}

/**
 * Removes a stale lock without deleting a fresh one that another process created after we read
 * the stale one: the file is first renamed aside, then compared with what we judged stale; a
 * file that turns out to be live is linked back (unless yet another lock appeared meanwhile).
 */
async function removeStale(path: string, stale: RepoLockInfo | 'unreadable'): Promise<void> {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return; // Someone else removed it already.
    throw fsError(error, path);
  }
  const moved = parseInfo(await readFile(aside, 'utf8').catch(() => ''));
  const same = stale === 'unreadable' ? moved === undefined : moved !== undefined && sameInfo(moved, stale);
  if (!same) await link(aside, path).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

function heldLock(path: string, info: RepoLockInfo): RepoLock {
  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    const current = parseInfo(await readFile(path, 'utf8').catch(() => ''));
    // Only delete our own file: a process that judged us stale may have taken over.
    if (current && sameInfo(current, info)) await unlink(path).catch(() => undefined);
  };
  return { path, info, release, [Symbol.asyncDispose]: release };
}

function sameInfo(a: RepoLockInfo, b: RepoLockInfo): boolean {
  return a.runId === b.runId && a.pid === b.pid && a.startedAt === b.startedAt && a.hostname === b.hostname;
}

function lockedError(path: string, holder: RepoLockInfo | undefined): RatchetError {
  const who = holder
    ? `run ${holder.runId} (pid ${holder.pid} on ${holder.hostname}, since ${holder.startedAt})`
    : 'another run';
  const otherHost = holder !== undefined && holder.hostname !== hostname();
  return new RatchetError('locked', `The repository is locked by ${who}: ${path}`, {
    hint: otherHost
      ? `Wait for it to finish, or delete ${path} if that run is certainly gone, then 'ratchet resume'.`
      : `Wait for it to finish, or run 'ratchet resume' once it has stopped.`,
    details: { path, ...(holder ? { holder } : {}) },
  });
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

function fsError(error: unknown, path: string): RatchetError {
  const message = error instanceof Error ? error.message : String(error);
  return new RatchetError('git', `Cannot access the repository lock ${path}: ${message}`, {
    cause: error,
    details: { path },
  });
}
