import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { RatchetError } from '../../core/errors.js';
import { checkModels } from '../../agent/models/run-models.js';
import { createIdGenerator, systemClock } from '../../engine/effects.js';
import { requireRedis } from '../../engine/queue/redis-check.js';
import { startTaskWorker } from '../../engine/tasks/task-worker.js';
import { requireSandbox } from '../../engine/tool-sandbox.js';
import { SHARED_DIRECTORIES } from '../../engine/worktree-setup.js';
import { createProcessRunner } from '../../process/runner.js';
import { configFor, createCliOutput, globalOptions, type ProviderFlags } from '../context.js';
import { EXIT } from '../exit-codes.js';
import type { CliSetup } from './cli-setup.js';
import { addProviderOptions } from './provider-options.js';

interface WorkerFlags extends ProviderFlags {
  queue: string;
  repositories: string[];
  concurrency: string;
  lockSeconds: string;
  dependencies?: string;
  record?: string;
}

function positiveInteger(value: string, flag: string, most: number): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > most)
    throw new RatchetError('usage', `${flag} must be an integer from 1 to ${most}, got "${value}".`);
  return number;
}

/**
 * The checkout whose dependency folders the worker's tasks share: `--dependencies` (which must be
 * a directory holding one), else the directory it starts in when that holds one, else none.
 */
function workerDependencies(cwd: string, flag: string | undefined): { dependencies?: string } {
  const dir = resolve(cwd, flag ?? '.');
  const found = SHARED_DIRECTORIES.some((name) => existsSync(join(dir, name)));
  if (found) return { dependencies: dir };
  if (flag === undefined) return {};
  throw new RatchetError('usage', `--dependencies ${dir} holds none of ${SHARED_DIRECTORIES.join(', ')}.`, {
    hint: 'Name a checkout of the project on this machine where its dependencies are installed (npm ci, a virtualenv).',
  });
}

/** `ratchet worker --queue redis://...`: runs the tasks of `ratchet tasks run --queue` on this machine. */
export function registerWorkerCommand(program: Command, cli: CliSetup): void {
  addProviderOptions(
    program
      .command('worker')
      .description(
        "Take the tasks of `ratchet tasks run --queue` from Redis and run them on this machine: each task's TDD pipeline in a worktree under this machine's $RATCHET_HOME, sandboxed, with this machine's provider, model and keys (keys never cross the queue); its events go back to the run's ledger, its branch is pushed to the repository the run published. It must reach Redis and that repository. Ctrl-C (or SIGTERM) stops taking jobs and lets the running ones finish; a second one quits at once, and the jobs it ran go to another worker.",
      ),
  )
    .requiredOption('--queue <url>', 'the Redis of the run: redis://host:port[/db] (its password in REDIS_PASSWORD)')
    .requiredOption(
      '--repositories <prefix...>',
      "the published repositories it serves: directories (e.g. the coordinator's $RATCHET_HOME/published) or URL prefixes (ssh://git@host/srv/git/); a job naming another is refused (whoever writes to Redis can enqueue jobs)",
    )
    .option('--concurrency <n>', 'tasks at once on this machine', '1')
    .option(
      '--dependencies <dir>',
      "a checkout of the project on this machine with its dependencies installed: its node_modules / .venv are shared read-only into every task's worktree (default: the directory the worker starts in, if it has them)",
    )
    .option(
      '--lock-seconds <n>',
      'a worker silent this long is taken for dead and its task goes to another worker',
      '30',
    )
    .action(async (flags: WorkerFlags, command: Command) => {
      const output = createCliOutput(command);
      if (!/^rediss?:\/\//.test(flags.queue))
        throw new RatchetError('usage', `--queue must be a Redis URL (redis://host:port[/db]), got "${flags.queue}".`);
      const concurrency = positiveInteger(flags.concurrency, '--concurrency', 32);
      const lockSeconds = positiveInteger(flags.lockSeconds, '--lock-seconds', 3600);
      // This machine's settings: its flags, environment and the .ratchet/config.toml where it starts.
      const config = await configFor(resolve(globalOptions(command).cwd ?? process.cwd()), flags);
      // Its tasks call the model at once, on whatever jobs arrive: no one ordered cassette fits them.
      if (flags.record !== undefined || config.provider.name === 'replay')
        throw new RatchetError('usage', 'A worker neither replays nor records cassettes.', {
          hint: 'Run it with an API provider (or a local one: --provider ollama).',
        });
      const runner = createProcessRunner();
      await checkModels(config, { env: process.env, runner, clock: systemClock, ids: createIdGenerator(systemClock) });
      await requireSandbox(config, runner);
      const password = process.env.REDIS_PASSWORD || undefined;
      await requireRedis(flags.queue, password);
      const say = (message: string): void => {
        if (output.json) output.out(JSON.stringify({ type: 'worker-log', message }));
        else output.out(message);
      };
      const worker = await startTaskWorker({
        url: flags.queue,
        ...(password === undefined ? {} : { password }),
        concurrency,
        repositories: flags.repositories,
        ...workerDependencies(resolve(globalOptions(command).cwd ?? process.cwd()), flags.dependencies),
        lockDurationMs: lockSeconds * 1000,
        config,
        runner,
        env: process.env,
        clock: systemClock,
        ids: createIdGenerator(systemClock),
        onProgress: say,
        onError: (error) => process.stderr.write(pc.yellow(`redis: ${error.message}\n`)),
      });
      say(`worker ${worker.id} takes tasks from ${flags.queue} (${concurrency} at once); Ctrl-C stops it`);
      await new Promise<void>((done) => {
        const stop = (name: NodeJS.Signals): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          process.once('SIGINT', () => process.exit(EXIT.sigint));
          process.once('SIGTERM', () => process.exit(EXIT.sigint));
          process.stderr.write(pc.yellow(`\n${name}: finishing the running tasks (press again to quit now)…\n`));
          void worker.close().then(done, done);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      say(`worker ${worker.id} stopped`);
      cli.setExit(EXIT.ok);
    });
}
