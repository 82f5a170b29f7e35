/**
 * Worker-thread entry of the parse pool (see `worker-pool.ts`): receives batches of files,
 * answers with their outcomes. Each worker owns its own tree-sitter runtime and parsers.
 *
 * Parse results travel as JSON strings, not as objects: a string is copied in one piece, while
 * the structured clone of thousands of small objects costs more than `JSON.stringify` here plus
 * `JSON.parse` there; and the JSON is the one the cache stores, so saving it costs nothing more.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { storableJson } from './cache.js';
import { processFile, type FileOutcome, type FileWork } from './process-file.js';
import { initTreeSitter } from '../tree-sitter.js';
import { SourceExtractor } from './source-extractor.js';

export interface WorkerBatch {
  id: number;
  items: FileWork[];
}

/** A `FileOutcome` as it travels: a parse result as JSON (`parse: 'json'`, the result in `stored`). */
export interface WireOutcome extends Omit<FileOutcome, 'parse'> {
  parse: null | 'unchanged' | 'json';
}

export interface WorkerReply {
  id: number;
  outcomes: (WireOutcome | undefined)[];
  error?: string;
}

export interface WorkerSetup {
  root: string;
  maxParseBytes: number;
}

function toWire(outcome: FileOutcome): WireOutcome {
  const { parse } = outcome;
  if (parse === null || parse === 'unchanged') return { ...outcome, parse };
  const { path, hash, size, lines } = outcome;
  // The index then holds the result as the cache does (a fresh and a cached index are alike).
  return { path, hash, size, lines, parse: 'json', stored: storableJson(parse) };
}

const port = parentPort;
if (port !== null) {
  const setup = workerData as WorkerSetup;
  const extractor = new SourceExtractor();
  // Load the wasm runtime now: the pool may be started before the work is known.
  initTreeSitter().catch(() => undefined);
  // The pool keeps more than one batch in flight (so this thread never waits for the next one):
  // they are processed one after the other, in the order they came.
  const queue: WorkerBatch[] = [];
  let running = false;
  const run = async (): Promise<void> => {
    running = true;
    for (let batch = queue.shift(); batch !== undefined; batch = queue.shift()) {
      const reply: WorkerReply = { id: batch.id, outcomes: [] };
      try {
        for (const item of batch.items) {
          const outcome = await processFile(extractor, setup.root, item, setup.maxParseBytes);
          reply.outcomes.push(outcome === undefined ? undefined : toWire(outcome));
        }
      } catch (error) {
        reply.error = error instanceof Error ? (error.stack ?? error.message) : String(error);
      }
      port.postMessage(reply);
    }
    running = false;
  };
  port.on('message', (batch: WorkerBatch) => {
    queue.push(batch);
    if (!running) void run();
  });
}
