/**
 * Parses files on worker threads. Parsing is CPU-bound wasm work, so a cold index of a large
 * repository scales with cores; batches are handed out on demand so one slow file does not idle
 * the other workers.
 *
 * From compiled output the worker is `parse-worker.js`; from TypeScript sources (tests, `tsx`)
 * it is `parse-worker.ts`, loaded through tsx's loader when the parent does not already run it.
 */
import { Worker } from 'node:worker_threads';
import { RatchetError } from '../../core/errors.js';
import type { WorkerBatch, WorkerReply, WorkerSetup } from './parse-worker.js';
import type { FileOutcome, FileWork } from './process-file.js';

export interface WorkerPoolOptions extends WorkerSetup {
  workers: number;
  /** Files per message (default 32). */
  batchSize?: number;
  signal?: AbortSignal;
}

function workerEntry(): { url: URL; execArgv?: string[] } {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return { url: new URL('./parse-worker.js', here) };
  const hasTsx = process.execArgv.some((argument) => argument.includes('tsx'));
  return {
    url: new URL('./parse-worker.ts', here),
    ...(hasTsx ? {} : { execArgv: [...process.execArgv, '--import', 'tsx'] }),
  };
}

/** Outcomes of `items`, in order. Rejects when a worker fails (callers may fall back to parsing in-thread). */
export async function processInWorkers(
  items: readonly FileWork[],
  options: WorkerPoolOptions,
): Promise<(FileOutcome | undefined)[]> {
  if (items.length === 0) return [];
  const batchSize = options.batchSize ?? 32;
  const batches: WorkerBatch[] = [];
  for (let start = 0; start < items.length; start += batchSize)
    batches.push({ id: batches.length, items: items.slice(start, start + batchSize) });
  const results: (FileOutcome | undefined)[][] = new Array<(FileOutcome | undefined)[]>(batches.length);
  const entry = workerEntry();
  const setup: WorkerSetup = { root: options.root, maxParseBytes: options.maxParseBytes };
  const workers: Worker[] = [];

  try {
    await new Promise<void>((resolve, reject) => {
      let next = 0;
      let done = 0;
      let failed = false;
      const fail = (error: unknown): void => {
        if (failed) return;
        failed = true;
        reject(error instanceof Error ? error : new Error(String(error)));
      };
      const onAbort = (): void => fail(new RatchetError('interrupted', 'Interrupted', { cause: options.signal?.reason }));
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const dispatch = (worker: Worker): void => {
        const batch = batches[next++];
        if (batch !== undefined) worker.postMessage(batch);
      };
      const count = Math.max(1, Math.min(options.workers, batches.length));
      for (let index = 0; index < count; index++) {
        const worker = new Worker(entry.url, { workerData: setup, ...(entry.execArgv ? { execArgv: entry.execArgv } : {}) });
        workers.push(worker);
        worker.on('message', (reply: WorkerReply) => {
          if (reply.error !== undefined) return fail(new Error(`Parse worker failed: ${reply.error}`));
          results[reply.id] = reply.outcomes;
          if (++done === batches.length) {
            options.signal?.removeEventListener('abort', onAbort);
            resolve();
          } else dispatch(worker);
        });
        worker.on('error', fail);
        worker.on('exit', (code) => {
          if (done < batches.length) fail(new Error(`Parse worker exited with code ${code}`));
        });
        dispatch(worker);
      }
    });
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
  return results.flat();
}
