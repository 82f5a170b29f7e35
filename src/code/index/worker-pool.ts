/**
 * Parses files on worker threads. Parsing is CPU-bound wasm work, so a cold index of a large
 * repository scales with cores.
 *
 * - A pool can be started before the work is known (`ParsePool.start`), so the workers load and
 *   initialise tree-sitter while the caller lists the tree and reads its cache.
 * - Work is handed out largest files first, in batches of roughly equal bytes, on demand: one
 *   large file never ends up last behind an idle worker, and small files travel many per message.
 *   Each worker has a second batch queued while it works on one, so it never waits for this
 *   thread (busy itself, or not even scheduled when every core is parsing) to send the next.
 * - Parse results come back as JSON (see `parse-worker.ts`) and are parsed here as they arrive.
 *
 * From compiled output the worker is `parse-worker.js`; from TypeScript sources (tests, `tsx`)
 * it is `parse-worker.ts`, loaded through tsx's loader when the parent does not already run it.
 */
import { Worker } from 'node:worker_threads';
import { RatchetError } from '../../core/errors.js';
import type { WireOutcome, WorkerBatch, WorkerReply, WorkerSetup } from './parse-worker.js';
import type { FileOutcome, FileWork } from './process-file.js';

export interface ParsePoolOptions extends WorkerSetup {
  workers: number;
}

export interface ProcessOptions {
  signal?: AbortSignal;
  /** Bytes of source per message (default 192 KiB); a larger file travels alone. */
  batchBytes?: number;
  /** Files per message at most (default 64). */
  batchFiles?: number;
}

const DEFAULT_BATCH_BYTES = 192 * 1024;
const DEFAULT_BATCH_FILES = 64;
/** Batches sent to a worker and not answered yet, at most. */
const IN_FLIGHT = 2;

function workerEntry(): { url: URL; execArgv?: string[] } {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return { url: new URL('./parse-worker.js', here) };
  const hasTsx = process.execArgv.some((argument) => argument.includes('tsx'));
  return {
    url: new URL('./parse-worker.ts', here),
    ...(hasTsx ? {} : { execArgv: [...process.execArgv, '--import', 'tsx'] }),
  };
}

/** Batches of item positions: largest first, each about `batchBytes` (items without a size count as 0). */
export function planBatches(
  items: readonly FileWork[],
  batchBytes = DEFAULT_BATCH_BYTES,
  batchFiles = DEFAULT_BATCH_FILES,
): number[][] {
  const order = items.map((_, position) => position);
  order.sort((a, b) => (items[b]?.size ?? 0) - (items[a]?.size ?? 0) || a - b);
  const batches: number[][] = [];
  let current: number[] = [];
  let bytes = 0;
  for (const position of order) {
    const size = items[position]?.size ?? 0;
    if (current.length > 0 && (bytes + size > batchBytes || current.length >= batchFiles)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(position);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** Worker threads that read, hash and parse files; dispose it to stop them. */
export class ParsePool implements AsyncDisposable {
  private readonly workers: Worker[] = [];
  /** The first error a worker reported outside of a `process` call (it failed to start). */
  private broken: Error | undefined;
  private onFailure: ((error: Error) => void) | undefined;
  private onReply: ((worker: Worker, reply: WorkerReply) => void) | undefined;
  private busy = false;

  private constructor(readonly size: number) {}

  /** Starts `options.workers` workers now; they initialise tree-sitter while the caller does other work. */
  static start(options: ParsePoolOptions): ParsePool {
    const pool = new ParsePool(Math.max(1, options.workers));
    const entry = workerEntry();
    const setup: WorkerSetup = { root: options.root, maxParseBytes: options.maxParseBytes };
    for (let index = 0; index < pool.size; index++) {
      const worker = new Worker(entry.url, {
        workerData: setup,
        ...(entry.execArgv ? { execArgv: entry.execArgv } : {}),
      });
      worker.on('message', (reply: WorkerReply) => pool.onReply?.(worker, reply));
      worker.on('error', (error) => pool.fail(error));
      worker.on('exit', (code) => pool.fail(new Error(`Parse worker exited with code ${code}`)));
      pool.workers.push(worker);
    }
    return pool;
  }

  /**
   * Outcomes of `items`, in order. Rejects when a worker fails or the signal aborts (callers may
   * fall back to parsing in-thread); the pool is then unusable.
   */
  async process(items: readonly FileWork[], options: ProcessOptions = {}): Promise<(FileOutcome | undefined)[]> {
    if (this.busy) throw new Error('ParsePool.process is already running');
    if (this.broken !== undefined) throw this.broken;
    if (items.length === 0) return [];
    const { signal } = options;
    const batches = planBatches(items, options.batchBytes, options.batchFiles);
    const outcomes = new Array<FileOutcome | undefined>(items.length);
    this.busy = true;
    try {
      await new Promise<void>((resolve, reject) => {
        let next = 0;
        let done = 0;
        let settled = false;
        const finish = (error?: Error): void => {
          if (settled) return;
          settled = true;
          signal?.removeEventListener('abort', onAbort);
          this.onFailure = undefined;
          this.onReply = undefined;
          if (error === undefined) return resolve();
          // Workers may still be busy with this call's batches: the pool takes no more work.
          this.broken ??= error;
          reject(error);
        };
        const onAbort = (): void => finish(new RatchetError('interrupted', 'Interrupted', { cause: signal?.reason }));
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        this.onFailure = finish;
        const dispatch = (worker: Worker): void => {
          const id = next++;
          const batch = batches[id];
          if (batch === undefined) return;
          const message: WorkerBatch = { id, items: batch.map((position) => items[position] as FileWork) };
          worker.postMessage(message);
        };
        this.onReply = (worker, reply) => {
          if (reply.error !== undefined) return finish(new Error(`Parse worker failed: ${reply.error}`));
          const batch = batches[reply.id] ?? [];
          batch.forEach((position, offset) => (outcomes[position] = fromWire(reply.outcomes[offset])));
          if (++done === batches.length) finish();
          else dispatch(worker);
        };
        // Round by round, so the largest batches go to different workers first.
        for (let round = 0; round < IN_FLIGHT; round++) for (const worker of this.workers) dispatch(worker);
      });
    } finally {
      this.busy = false;
    }
    return outcomes;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.broken ??= new Error('ParsePool was disposed');
    const workers = this.workers.splice(0);
    for (const worker of workers) worker.removeAllListeners('exit');
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private fail(error: unknown): void {
    const failure = error instanceof Error ? error : new Error(String(error));
    this.broken ??= failure;
    this.onFailure?.(failure);
  }
}

function fromWire(wire: WireOutcome | undefined): FileOutcome | undefined {
  if (wire === undefined || wire.parse !== 'json') return wire as FileOutcome | undefined;
  return { ...wire, parse: JSON.parse(wire.stored ?? 'null') as FileOutcome['parse'] };
}

/** Outcomes of `items`, in order, from a pool started for them and stopped afterwards. */
export async function processInWorkers(
  items: readonly FileWork[],
  options: ParsePoolOptions & ProcessOptions,
): Promise<(FileOutcome | undefined)[]> {
  await using pool = ParsePool.start(options);
  return await pool.process(items, options);
}
