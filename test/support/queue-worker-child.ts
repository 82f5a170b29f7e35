/**
 * A worker process of the Redis queue for the tests: `node --import tsx queue-worker-child.ts
 * <redis-url> <worker-id>`. Its handler does `payload.steps` steps, each an effect that appends
 * one line to `payload.effectsFile` (the effect a duplicate would show twice), then pauses
 * `payload.stepMs` (the window in which the test kills it). It prints `ready` once connected and
 * `step <job> <n>` after each recorded step, so the test knows when to kill it.
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { startRedisWorker } from '../../src/engine/queue/redis-worker.js';
import type { JsonValue } from '../../src/engine/queue/types.js';

const PayloadSchema = z.object({ steps: z.number().int(), stepMs: z.number().int(), effectsFile: z.string() });

const [url, id] = process.argv.slice(2);
if (url === undefined || id === undefined) throw new Error('usage: queue-worker-child.ts <redis-url> <worker-id>');

await startRedisWorker<JsonValue, { worker: string; steps: number }>(
  async (context) => {
    const payload = PayloadSchema.parse(context.job.payload);
    for (let step = 1; step <= payload.steps; step += 1) {
      await context.effect(`step-${step}`, () => {
        appendFileSync(payload.effectsFile, `${context.job.taskKey} step ${step} by ${context.worker}\n`);
        return Promise.resolve(step);
      });
      await context.emit({ step, worker: context.worker });
      process.stdout.write(`step ${context.job.taskKey} ${step}\n`);
      await new Promise((resolve) => setTimeout(resolve, payload.stepMs));
    }
    return { worker: context.worker, steps: payload.steps };
  },
  {
    url,
    id,
    lockDurationMs: 3000,
    stalledIntervalMs: 1000,
    onError: (error) => process.stderr.write(`${error.message}\n`),
  },
);
process.stdout.write('ready\n');
