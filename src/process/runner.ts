import { spawn } from 'node:child_process';
import type { CommandResult, CommandSpec, ProcessRunner } from './types.js';

const DEFAULT_MAX_OUTPUT = 1024 * 1024;
const KILL_GRACE_MS = 2000;

/** Keeps the last `max` bytes of a growing text. */
class TailBuffer {
  private chunks: string[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly max: number) {}
  push(text: string): void {
    this.chunks.push(text);
    this.size += Buffer.byteLength(text);
    while (this.size > this.max && this.chunks.length > 1) {
      const dropped = this.chunks.shift() ?? '';
      this.size -= Buffer.byteLength(dropped);
      this.truncated = true;
    }
    if (this.size > this.max && this.chunks.length === 1) {
      const only = this.chunks[0] ?? '';
      const kept = Buffer.from(only).subarray(-this.max).toString('utf8');
      this.chunks[0] = kept;
      this.size = Buffer.byteLength(kept);
      this.truncated = true;
    }
  }
  toString(): string {
    return this.chunks.join('');
  }
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/**
 * Runs commands in their own process group so that a timeout or an abort kills the command
 * and everything it started (test runners fork workers; shells start pipelines).
 */
export function createProcessRunner(): ProcessRunner {
  return { run: runCommand };
}

export function runCommand(spec: CommandSpec): Promise<CommandResult> {
  const max = spec.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const useShell = spec.shell ?? spec.args === undefined;
  const file = useShell ? '/bin/sh' : spec.command;
  const args = useShell ? ['-c', spec.command] : (spec.args ?? []);
  const env = spec.extendEnv === false ? { ...spec.env } : { ...process.env, ...spec.env };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  const started = performance.now();

  return new Promise((resolve) => {
    const stdout = new TailBuffer(max);
    const stderr = new TailBuffer(max);
    const output = new TailBuffer(max);
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let forceTimer: NodeJS.Timeout | undefined;

    const extra = spec.descriptorInputs ?? [];
    const child = spawn(file, args, {
      cwd: spec.cwd,
      env,
      detached: true,
      // Node makes each extra 'pipe' a socket pair the child inherits as descriptor 3, 4, ...
      stdio: ['pipe', 'pipe', 'pipe', ...extra.map(() => 'pipe' as const)],
    });
    for (const [index, text] of extra.entries()) {
      const stream = child.stdio[3 + index];
      if (stream !== null && stream !== undefined && 'end' in stream) {
        stream.on('error', () => undefined);
        stream.end(text);
      }
    }

    if (child.pid !== undefined) spec.onSpawn?.(child.pid);

    const terminate = (): void => {
      killGroup(child.pid, 'SIGTERM');
      forceTimer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS);
      forceTimer.unref();
    };
    const timer =
      spec.timeoutMs !== undefined && spec.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            terminate();
          }, spec.timeoutMs)
        : undefined;
    const onAbort = (): void => {
      aborted = true;
      terminate();
    };
    if (spec.signal?.aborted) onAbort();
    else spec.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      stdout.push(text);
      output.push(text);
    });
    child.stderr.on('data', (text: string) => {
      stderr.push(text);
      output.push(text);
    });
    child.stdin.on('error', () => undefined);
    if (spec.input !== undefined) child.stdin.end(spec.input);
    else child.stdin.end();

    const finish = (exitCode: number | null, signal: string | null): void => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
      // Reap anything the command left running in its group (background jobs).
      if (timedOut || aborted) killGroup(child.pid, 'SIGKILL');
      if (forceTimer) clearTimeout(forceTimer);
      resolve({
        exitCode,
        signal,
        timedOut,
        aborted,
        stdout: stdout.toString(),
        stderr: stderr.toString(),
        output: output.toString(),
        truncated: output.truncated,
        durationMs: Math.round(performance.now() - started),
      });
    };
    child.on('error', (error: Error) => {
      output.push(`${error.message}\n`);
      stderr.push(`${error.message}\n`);
      finish(127, null);
    });
    child.on('close', (code, signal) => finish(code, signal));
    // A background job that inherited stdout would keep 'close' from ever firing: once the
    // command itself has exited, give its output a moment to drain, then reap the group.
    child.on('exit', (code, signal) => {
      setTimeout(() => {
        if (settled) return;
        killGroup(child.pid, 'SIGKILL');
        child.stdout.destroy();
        child.stderr.destroy();
        finish(code, signal);
      }, 500).unref();
    });
  });
}
