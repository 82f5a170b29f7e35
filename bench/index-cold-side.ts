/**
 * One cold index in a fresh process, run by `bench/index.ts` as a plain `node` process:
 * `node index-cold-side.mjs <job.json> <result.json>`. A fresh process is what `ratchet index`
 * is on a new clone: nothing compiled by V8 yet, no index cache, and its peak RSS is the
 * indexing's own (getrusage's maxRSS at the end). The bench runs this file compiled to
 * JavaScript, as `ratchet` is: Node's own type stripping would load a TypeScript parser into the
 * process (about 17 MB of its RSS).
 *
 * The process is set up as the `ratchet` executable sets itself up (`setUpProcess` from
 * `dist/cli/process-setup.js`: Node's compile cache, V8 tiers), with the compile cache in the
 * job's directory: empty, the first run after an install or an upgrade; written by an earlier
 * run, every run after that.
 *
 * It imports nothing but `node:` modules, `dist/` by URL, and types (`import type` only: it is
 * erased).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { setUpProcess as SetUpProcess } from '../src/cli/process-setup.js';
import type { buildIndex as BuildIndex } from '../src/code/index/build-index.js';

export interface ColdSideJob {
  /** This project's directory (its `dist/` is loaded). */
  project: string;
  root: string;
  /** The index cache's directory: absent (the parent removes it), as on a new clone. */
  cacheDir: string;
  /** The compile cache's directory. */
  compileCache: string;
}

export interface ColdSideResult {
  /** Wall time of the `buildIndex` call. */
  buildMs: number;
  /** CPU time of this thread during it, and of the whole process (GC and compiler threads too). */
  threadCpuMs: number;
  processCpuMs: number;
  /** getrusage's maxRSS at the end, in bytes. */
  maxRss: number;
  files: number;
  symbols: number;
  workers: number;
}

async function main(jobFile: string, resultFile: string): Promise<void> {
  const job = JSON.parse(await readFile(jobFile, 'utf8')) as ColdSideJob;
  const dist = (path: string): string => pathToFileURL(join(job.project, 'dist', path)).href;
  const { setUpProcess } = (await import(dist('cli/process-setup.js'))) as { setUpProcess: typeof SetUpProcess };
  setUpProcess({ compileCache: job.compileCache });
  const { buildIndex } = (await import(dist('code/index/build-index.js'))) as { buildIndex: typeof BuildIndex };
  const processCpu = process.cpuUsage();
  const threadCpu = process.threadCpuUsage();
  const started = performance.now();
  const index = await buildIndex({ root: job.root, cacheDir: job.cacheDir, excludes: [], git: false });
  const buildMs = performance.now() - started;
  const thread = process.threadCpuUsage(threadCpu);
  const whole = process.cpuUsage(processCpu);
  const result: ColdSideResult = {
    buildMs,
    threadCpuMs: (thread.user + thread.system) / 1000,
    processCpuMs: (whole.user + whole.system) / 1000,
    maxRss: process.resourceUsage().maxRSS * 1024,
    files: index.files.length,
    symbols: index.files.reduce((sum, file) => sum + file.symbols.length, 0),
    workers: index.stats.workers,
  };
  await writeFile(resultFile, JSON.stringify(result));
}

const [jobFile, resultFile] = process.argv.slice(2);
if (jobFile === undefined || resultFile === undefined) {
  console.error('usage: node index-cold-side.mjs <job.json> <result.json>');
  process.exitCode = 2;
} else await main(jobFile, resultFile);
