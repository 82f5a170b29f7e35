/**
 * Worker-thread entry of the parse pool (see `worker-pool.ts`): receives batches of files,
 * answers with their outcomes. Each worker owns its own tree-sitter runtime and parsers.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { processFile, type FileOutcome, type FileWork } from './process-file.js';
import { initTreeSitter } from '../tree-sitter.js';
import { SourceExtractor } from './source-extractor.js';

export interface WorkerBatch {
  id: number;
  items: FileWork[];
}

export interface WorkerReply {
  id: number;
  outcomes: (FileOutcome | undefined)[];
  error?: string;
}

export interface WorkerSetup {
  root: string;
  maxParseBytes: number;
}

const port = parentPort;
if (port !== null) {
  const setup = workerData as WorkerSetup;
  const extractor = new SourceExtractor();
  // Load the wasm runtime now: the pool may be started before the work is known.
  initTreeSitter().catch(() => undefined);
  port.on('message', (batch: WorkerBatch) => {
    void (async () => {
      const reply: WorkerReply = { id: batch.id, outcomes: [] };
      try {
        for (const item of batch.items)
          reply.outcomes.push(await processFile(extractor, setup.root, item, setup.maxParseBytes));
      } catch (error) {
        reply.error = error instanceof Error ? (error.stack ?? error.message) : String(error);
      }
      port.postMessage(reply);
    })();
  });
}
