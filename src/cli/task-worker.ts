/**
 * The executable of a tasks run's local worker processes (`src/engine/tasks/local-pool.ts` forks
 * it with an IPC channel; it is not a command users run). Set up as `ratchet` is (the compile
 * cache), then it serves the coordinator until the run stops.
 */
import { setUpProcess } from './process-setup.js';

setUpProcess();
const { serveLocalWorker } = await import('../engine/tasks/local-worker.js');
serveLocalWorker();
