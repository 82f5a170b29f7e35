import { readFileSync, readdirSync, readlinkSync, statfsSync } from 'node:fs';

export interface WatchdogLimits {
  /** How often to look. */
  intervalMs: number;
  /** Processes in the sandbox's PID namespace at once. */
  processes: number;
  /** Resident memory of all of them together. */
  memoryBytes: number;
  /** Free space below which a watched disk stops the command (0: never). */
  minFreeDiskBytes: number;
  /** Paths whose file systems are watched. */
  disks: readonly string[];
  /**
   * The `cgroup.procs` of the command's own cgroup, which bwrap joined before it started anything
   * (everything the command forks is in it, and nothing in the sandbox can leave it: its pids limit
   * rests on that too): its processes are read there instead of found among every process of the
   * host, one check of a test run after another.
   */
  members?: string;
}

export interface Watchdog {
  /** Why it stopped the command, once it did. */
  readonly reason: string | undefined;
  stop(): void;
}

const FIRST_CHECK_MS = 200;
const PAGE_BYTES = 4096;

function mib(bytes: number): string {
  return `${Math.round(bytes / 2 ** 20)} MiB`;
}

/** The sandbox's PID namespace: that of bwrap's first child (PID 1 inside), once it exists. */
function sandboxNamespace(bwrapPid: number): string | undefined {
  try {
    const children = readFileSync(`/proc/${bwrapPid}/task/${bwrapPid}/children`, 'utf8').trim().split(/\s+/);
    const init = children[0];
    if (init === undefined || init === '') return undefined;
    const namespace = readlinkSync(`/proc/${init}/ns/pid`);
    return namespace === readlinkSync(`/proc/${bwrapPid}/ns/pid`) ? undefined : namespace;
  } catch {
    return undefined;
  }
}

/** The processes of a PID namespace and their resident memory, as the host sees them. */
function census(namespace: string): { processes: number; residentBytes: number } {
  let processes = 0;
  let residentBytes = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/ns/pid`) !== namespace) continue;
      processes += 1;
      const resident = Number(readFileSync(`/proc/${name}/statm`, 'utf8').split(' ')[1]);
      if (Number.isFinite(resident)) residentBytes += resident * PAGE_BYTES;
    } catch {
      // Gone meanwhile, or not ours to look at.
    }
  }
  return { processes, residentBytes };
}

/** The processes listed in a cgroup's `cgroup.procs` but `except`, and their resident memory; undefined when it cannot be read. */
function cgroupCensus(members: string, except: number): { processes: number; residentBytes: number } | undefined {
  let pids: string[];
  try {
    pids = readFileSync(members, 'utf8').split('\n');
  } catch {
    return undefined;
  }
  let processes = 0;
  let residentBytes = 0;
  for (const pid of pids) {
    // bwrap itself (outside the sandbox's PID namespace, which the other census counts).
    if (!/^\d+$/.test(pid) || Number(pid) === except) continue;
    processes += 1;
    try {
      const resident = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
      if (Number.isFinite(resident)) residentBytes += resident * PAGE_BYTES;
    } catch {
      // Gone meanwhile.
    }
  }
  return { processes, residentBytes };
}

function freeBytes(path: string): number | undefined {
  try {
    const stats = statfsSync(path);
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}

/**
 * Watches one sandboxed command from the host and kills its bwrap (`bwrapPid`; PID 1 of the
 * sandbox dies with it, and the kernel then ends every process of the namespace) when it has
 * more processes than allowed (root's are not limited by RLIMIT_NPROC, see `nprocLimit`), uses
 * more resident memory than allowed (RLIMIT_DATA only limits each process), or leaves less free
 * disk than the floor (a limit per file does not stop many files). Polls every `intervalMs`: a
 * short command is never looked at.
 */
export function startWatchdog(bwrapPid: number, limits: WatchdogLimits): Watchdog {
  let reason: string | undefined;
  let namespace: string | undefined;
  const check = (): void => {
    let breach: string | undefined;
    const counted = limits.members === undefined ? undefined : cgroupCensus(limits.members, bwrapPid);
    if (counted === undefined) namespace ??= sandboxNamespace(bwrapPid);
    const found = counted ?? (namespace === undefined ? undefined : census(namespace));
    if (found !== undefined) {
      const { processes, residentBytes } = found;
      if (processes >= limits.processes) breach = `it reached ${limits.processes} processes ([bash] max_processes)`;
      else if (residentBytes > limits.memoryBytes)
        breach = `its processes used more than ${mib(limits.memoryBytes)} of memory ([bash] max_memory_mb)`;
    }
    if (breach === undefined && limits.minFreeDiskBytes > 0) {
      for (const disk of limits.disks) {
        const free = freeBytes(disk);
        if (free !== undefined && free < limits.minFreeDiskBytes) {
          breach = `free disk space under ${disk} fell below ${mib(limits.minFreeDiskBytes)} ([bash] min_free_disk_mb)`;
          break;
        }
      }
    }
    if (breach === undefined) return;
    reason = breach;
    stop();
    try {
      process.kill(bwrapPid, 'SIGKILL');
    } catch {
      // Ended by itself meanwhile.
    }
  };
  let interval: NodeJS.Timeout | undefined;
  const first = setTimeout(
    () => {
      check();
      if (reason === undefined) interval = setInterval(check, limits.intervalMs);
    },
    Math.min(FIRST_CHECK_MS, limits.intervalMs),
  );
  const stop = (): void => {
    clearTimeout(first);
    if (interval) clearInterval(interval);
  };
  return {
    get reason() {
      return reason;
    },
    stop,
  };
}
