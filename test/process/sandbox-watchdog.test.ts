/**
 * The sandbox watchdog with the command's own cgroup (`members`): the processes it counts and
 * whose memory it adds up are those the cgroup's `cgroup.procs` lists (bwrap itself aside), not
 * found by walking every process of the host. Real processes stand in for bwrap and for what
 * runs in the sandbox; the list is a file like the kernel's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startWatchdog } from '../../src/process/sandbox-watchdog.js';

const started: ChildProcess[] = [];
let dir: string | undefined;

function node(code: string): ChildProcess {
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'ignore'] });
  started.push(child);
  return child;
}

/** Resolves once the child has printed a line (it is ready). */
function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => child.stdout?.once('data', () => resolve()));
}

function exited(child: ChildProcess): Promise<NodeJS.Signals | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.signalCode);
    else child.once('exit', (_code, signal) => resolve(signal));
  });
}

afterEach(async () => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('the sandbox watchdog with a cgroup of the command', () => {
  it('adds up the memory of the processes its cgroup lists, and stops the command past the limit', async () => {
    const bwrap = node("console.log('up'); setInterval(() => undefined, 1000);");
    // 200 MiB written (resident), in a process that is no child of the stand-in for bwrap: only
    // the cgroup's list ties it to the command.
    const hog = node(
      "const b = Buffer.alloc(200 * 2 ** 20, 1); console.log('up', b.length); setInterval(() => undefined, 1000);",
    );
    await Promise.all([ready(bwrap), ready(hog)]);
    dir = await mkdtemp(join(tmpdir(), 'ratchet-watchdog-'));
    const members = join(dir, 'cgroup.procs');
    await writeFile(members, `${String(bwrap.pid)}\n${String(hog.pid)}\n`);
    const watchdog = startWatchdog(bwrap.pid ?? -1, {
      intervalMs: 100,
      processes: 64,
      memoryBytes: 100 * 2 ** 20,
      minFreeDiskBytes: 0,
      disks: [],
      members,
    });
    try {
      expect(await exited(bwrap)).toBe('SIGKILL');
      expect(watchdog.reason).toMatch(/used more than 100 MiB of memory/);
    } finally {
      watchdog.stop();
    }
  }, 30_000);

  it('counts the processes its cgroup lists', async () => {
    const bwrap = node("console.log('up'); setInterval(() => undefined, 1000);");
    const others = [0, 1, 2].map(() => node("console.log('up'); setInterval(() => undefined, 1000);"));
    await Promise.all([bwrap, ...others].map(ready));
    dir = await mkdtemp(join(tmpdir(), 'ratchet-watchdog-'));
    const members = join(dir, 'cgroup.procs');
    await writeFile(members, [bwrap, ...others].map((child) => `${String(child.pid)}\n`).join(''));
    const watchdog = startWatchdog(bwrap.pid ?? -1, {
      intervalMs: 100,
      processes: 3,
      memoryBytes: 2 ** 40,
      minFreeDiskBytes: 0,
      disks: [],
      members,
    });
    try {
      expect(await exited(bwrap)).toBe('SIGKILL');
      expect(watchdog.reason).toMatch(/reached 3 processes/);
    } finally {
      watchdog.stop();
    }
  }, 30_000);
});
