/**
 * A private `redis-server` for a test file: Debian's binary on a free loopback port, its files in
 * a temporary directory, nothing saved, stopped (and the directory removed) by `stop()`. Nothing
 * global is started: `.ci/run` only installs the package. Guard the suite with
 * `toolchain('redis')` (test/support/toolchains.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServer {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A port that was free a moment ago (the server's start is retried if another took it since). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once the server says it accepts connections; rejects if it exits first. */
function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 15_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code ?? signal ?? '?'}) before it was ready:\n${output}`));
    });
  });
}

async function attempt(dir: string, password: string | undefined): Promise<RedisServer> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--protected-mode',
      'yes',
      ...(password === undefined ? [] : ['--requirepass', password]),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  try {
    await ready(child);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/** `password`: the server requires it (`--requirepass`). */
export async function startRedisServer(options: { password?: string } = {}): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'ratchet-redis-'));
  let lastError: unknown;
  for (let tries = 0; tries < 3; tries += 1) {
    try {
      const server = await attempt(dir, options.password);
      return {
        ...server,
        stop: async () => {
          await server.stop();
          await rm(dir, { recursive: true, force: true });
        },
      };
    } catch (error) {
      lastError = error;
    }
  }
  await rm(dir, { recursive: true, force: true });
  throw lastError;
}
