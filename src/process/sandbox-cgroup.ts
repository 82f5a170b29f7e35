/**
 * A pids cgroup per sandboxed command, where this process may make one (root on most hosts;
 * cgroup v1, or v2 with the pids controller delegated). RLIMIT_NPROC does not hold for root (the
 * kernel exempts uid 0, in a user namespace too), and a fork bomb outruns any watchdog: the
 * cgroup's `pids.max` stops it at once, whoever runs Ratchet.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PREFIX = 'ratchet-';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Where this process's pids cgroup is, by `/proc/self/cgroup` (v1 `N:pids:/path`, else v2 `0::/path`). */
function ownPidsCgroup(): string | undefined {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  } catch {
    return undefined;
  }
  for (const line of lines) {
    const [, controllers = '', path = ''] = line.split(':');
    if (controllers.split(',').includes('pids')) return join('/sys/fs/cgroup/pids', path);
  }
  const unified = lines.find((line) => line.startsWith('0::'));
  if (unified === undefined) return undefined;
  const dir = join('/sys/fs/cgroup', unified.slice(3));
  try {
    return readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids') ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the cgroups that processes gone since (killed runs) left behind. */
function removeStale(base: string): void {
  let names: string[] = [];
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length).split('-')[0]);
    if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    try {
      rmdirSync(join(base, name));
    } catch {
      // Still in use, or not ours.
    }
  }
}

/**
 * The pids cgroup this process can make per-command children in (a probe child made, limited
 * and removed), or undefined when it cannot (an ordinary user, a read-only cgroup file system).
 */
export function findPidsCgroup(): string | undefined {
  const base = ownPidsCgroup();
  if (base === undefined) return undefined;
  removeStale(base);
  const probe = join(base, `${PREFIX}${process.pid}-probe-${randomBytes(4).toString('hex')}`);
  try {
    mkdirSync(probe);
  } catch {
    return undefined;
  }
  try {
    writeFileSync(join(probe, 'pids.max'), '1');
    return base;
  } catch {
    return undefined;
  } finally {
    try {
      rmdirSync(probe);
    } catch {
      // Nothing joined it: removable; if not, `removeStale` takes it later.
    }
  }
}

export interface CommandCgroup {
  /** The file a process writes its pid into to join. */
  procs: string;
  /** Removes the cgroup once its processes are gone (retried in the background). */
  remove(): void;
}

/** A cgroup under `base` for one command, limited to `max` processes and threads. */
export function createCommandCgroup(base: string, max: number): CommandCgroup {
  const dir = join(base, `${PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'pids.max'), String(max));
  return {
    procs: join(dir, 'cgroup.procs'),
    remove() {
      // The sandbox's processes die with its PID 1, a moment after bwrap: when the cgroup is still
      // busy, it is removed a little later, without holding up the command's result.
      const attempt = (left: number): void => {
        try {
          rmdirSync(dir);
        } catch {
          if (left > 0) setTimeout(() => attempt(left - 1), 50).unref();
        }
      };
      attempt(40);
    },
  };
}
