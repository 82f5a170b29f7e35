/**
 * A `ratchet worker --queue` process of the built CLI, as another machine would run it: its own
 * `$RATCHET_HOME`, started outside the repository, fetching runs from the bare repositories the
 * coordinator publishes under the project's home. For the end-to-end tests of `tasks run --queue`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeAnthropicServer } from './fake-anthropic-server.js';
import { ANTHROPIC_FLAGS, ratchetEnv, type ProjectRepo } from './e2e-run.js';
import { CLI, cliEnv } from './run-cli.js';

export interface WorkerProcess {
  child: ChildProcess;
  home: string;
  /** What it printed (stdout and stderr), line by line. */
  lines: string[];
  exited: Promise<void>;
}

export interface QueueWorkerOptions {
  /** Names its home, `worker-<name>` under the repository's temporary root. */
  name: string;
  /** The sandbox flags of this machine (`sandboxForThisMachine().flags`). */
  sandboxFlags: readonly string[];
  /** More `ratchet worker` arguments (`--lock-seconds 3`, `--dependencies <dir>`). */
  args?: readonly string[];
  env?: Record<string, string>;
}

export function startQueueWorker(
  url: string,
  repo: ProjectRepo,
  server: FakeAnthropicServer,
  options: QueueWorkerOptions,
): WorkerProcess {
  const home = repo.path(`worker-${options.name}`);
  mkdirSync(home, { recursive: true });
  const child = spawn(
    process.execPath,
    [
      CLI,
      'worker',
      '--queue',
      url,
      '--repositories',
      join(repo.home, 'published'),
      ...(options.args ?? []),
      ...ANTHROPIC_FLAGS,
      ...options.sandboxFlags,
    ],
    {
      cwd: home,
      env: cliEnv({ ...ratchetEnv(repo, server), RATCHET_HOME: home, ...options.env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  const collect = (chunk: Buffer): void => void lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, home, lines, exited };
}

/** `ratchet tasks run <tasks.json of the repository> --queue <url> --refactor never ... --json`'s arguments. */
export function tasksRunOnQueueArgs(file: string, url: string, sandboxFlags: readonly string[]): string[] {
  return ['tasks', 'run', file, '--queue', url, '--refactor', 'never', ...ANTHROPIC_FLAGS, ...sandboxFlags, '--json'];
}
