#!/usr/bin/env node
/**
 * The `ratchet` executable. It checks the Node.js version before anything else is loaded: on an
 * older Node the native SQLite binding and newer language features fail in obscure ways (a
 * segmentation fault on Node 20), so the user gets a clear message instead (exit code 2). Then
 * it sets the process up (compile cache, V8 tiers: see `process-setup.ts`) before the modules
 * that concerns are loaded.
 */
import { setUpProcess } from './process-setup.js';
import { nodeVersionProblem } from './node-version.js';

const problem = nodeVersionProblem(process.version);
if (problem !== null) {
  console.error(problem);
  process.exit(2);
}
setUpProcess();
await import('./main.js');
