import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock, IdGenerator } from '../core/effects.js';
import { RatchetError } from '../core/errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { createProcessRunner } from '../process/runner.js';
import type { ProcessRunner } from '../process/types.js';

/** Effects the engine needs, injected by the CLI (or by tests). */
export interface EngineServices {
  ledger: Ledger;
  clock: Clock;
  ids: IdGenerator;
  runner: ProcessRunner;
  env: Record<string, string | undefined>;
  fetch?: typeof fetch;
  /**
   * The executable a tasks run's local workers run in (the CLI's `task-worker` entry, which calls
   * `serveLocalWorker`): with it, a tasks run's pipelines run in worker processes; without it
   * (a library caller's fakes cannot cross a process), in this one.
   */
  workerProcess?: { path: string; execArgv?: readonly string[] };
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => new Date(),
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    try {
      await delay(ms, undefined, signal ? { signal } : undefined);
    } catch (error) {
      throw new RatchetError('interrupted', 'Interrupted while waiting', { cause: error });
    }
  },
};

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

/** Run ids sort by time and are safe in branch names and paths: `20261121-233624-a1b2`. */
export function createIdGenerator(clock: Clock = systemClock): IdGenerator {
  return {
    runId(): string {
      const now = clock.now();
      const date = `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}`;
      const time = `${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}`;
      return `${date}-${time}-${randomBytes(2).toString('hex')}`;
    },
    uuid: () => randomUUID(),
  };
}

/**
 * The real effects for running a workflow: the given ledger, the system clock, time-sorted run ids,
 * a process runner that kills whole process groups, and the environment (keys are read from it).
 */
export function createEngineServices(
  ledger: Ledger,
  env: Record<string, string | undefined> = process.env,
): EngineServices {
  return { ledger, clock: systemClock, ids: createIdGenerator(systemClock), runner: createProcessRunner(), env };
}
