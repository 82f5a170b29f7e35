import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { appendFile, copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { parseSync } from 'oxc-parser';
import { glob } from 'tinyglobby';
import ts from 'typescript';
import type { setUpProcess as SetUpProcess } from '../src/cli/process-setup.js';
import type { buildIndex as BuildIndex } from '../src/code/index/build-index.js';
import type { CodeIndex } from '../src/code/index/types.js';
import {
  formatMb,
  formatMs,
  median,
  runSide,
  table,
  type Bench,
  type BenchOptions,
  type BenchSummary,
} from './harness.js';
import type { ColdSideJob, ColdSideResult } from './index-cold-side.js';

/**
 * Code index bench (seed 002, section 10; issue 13): a cold index and a one-file-changed update
 * of a large real codebase — the TypeScript and JavaScript under this project's own
 * `node_modules` — against `ctags -R` (universal-ctags) over the same files in the same run.
 *
 * Targets: cold <= 1.0x ctags (wall), one-file update <= 20 ms, peak RSS <= 200 MB.
 * - Like with like: ctags and the cold index see the same files (ctags is told that `.cjs`,
 *   `.mts`, `.cts` and `.tsx` are JavaScript and TypeScript too: by default it skips them, while
 *   Ratchet indexes them), both write their output to the same temporary file system (ctags its
 *   sorted `tags` file, Ratchet its cache), and both are timed from their process's spawn to its
 *   exit by this process.
 * - Cold index (the target's figure): a fresh `node` process per run (`index-cold-side.ts`)
 *   calling `buildIndex`, as `ratchet index` does on a new clone: no index cache, nothing
 *   compiled by V8 yet, the process set up as the `ratchet` executable sets itself up (see
 *   `src/cli/process-setup.ts`) with Node's compile cache written by an earlier run (every run
 *   but the first after an install). Its wall time from spawn to exit (Node's start-up and
 *   loading the index's code included), the `buildIndex` call alone below it, and the same with
 *   the compile cache empty. Peak RSS is that process's maxRSS (compile cache written). The
 *   executable's own start-up is measured apart: `ratchet --version`.
 * - The start-up of the `ratchet` executable itself (`ratchet --version`: the command table
 *   only, `bench/cli-startup.ts` compares it with importing every command), which `ratchet index`
 *   adds to the cold index, with the compile cache written and empty.
 * - The same cold index is also timed in this process, where V8 has compiled the code already
 *   (the situation of a long-running caller). This process is set up as the executable is.
 * - The update is timed three ways, each a whole `buildIndex` call (hash and parse the changed
 *   file, derive the graphs and the risk register, save the cache): as the refactor loop makes it
 *   after each batch (the previous index in memory and the paths the batch touched; the target
 *   applies to this one), with the previous index but no paths (the tree is listed and stat'ed
 *   again), and as `ratchet index` makes it, reading the cache from disk (which grows with the
 *   repository, not with the change).
 * - Scaling: the cold index (fresh process, compile cache written) and ctags on the corpus
 *   subsampled to a quarter (every fourth file), the corpus itself, and the corpus doubled (every
 *   file twice, under two directories, the second copy made distinct by a trailing comment).
 *
 * The machine is shared: each measurement is repeated (`--runs`, default 3) and reported as the
 * median with the range of the runs; the load average is printed with the results, and the CPU
 * time of the cold index (its main thread, and all its threads) next to its wall time, as ratios
 * to ctags's own CPU time (read from `/proc` on Linux): wall times stretch with the load of a
 * shared machine, CPU times far less, so those ratios say more there.
 *
 * `tsx bench/index.ts [--files N]` runs it alone; `RATCHET_BENCH_INDEX_FILES` also sets N.
 */

const PROJECT = dirname(dirname(fileURLToPath(import.meta.url)));
const COLD_SIDE = join(PROJECT, 'bench', 'index-cold-side.ts');
const DEFAULT_FILES = 6000;
/** Minified bundles say nothing about real code and ctags skips most of them anyway. */
const MAX_FILE_BYTES = 200 * 1024;
const COLD_TARGET_RATIO = 1;
/** What ctags reads as JavaScript and TypeScript besides its defaults: the extensions Ratchet indexes. */
const CTAGS_LANGMAP = '--langmap=TypeScript:+.mts+.cts+.tsx,JavaScript:+.cjs';
const UPDATE_TARGET_MS = 20;
const RSS_TARGET_BYTES = 200 * 1024 * 1024;

interface IndexBenchOptions extends Partial<BenchOptions> {
  /** Files copied from node_modules (default 6000). */
  files?: number;
  log?: (line: string) => void;
}

interface Sampled {
  median: number;
  min: number;
  max: number;
}

interface ScalingRow {
  files: number;
  bytes: number;
  ctags: Sampled;
  cold: Sampled;
  ratio: number;
}

interface IndexBenchResult extends BenchSummary {
  files: number;
  bytes: number;
  ctags: Sampled;
  /** Fresh process from spawn to exit, compile cache written by an earlier run (the target's figure). */
  cold: Sampled;
  /** The `buildIndex` call in that process. */
  coldBuild: Sampled;
  coldRatio: number;
  /** Fresh process, compile cache empty. */
  coldEmptyCache: Sampled;
  coldRss: Sampled;
  /** `ratchet --version`, compile cache written / empty. */
  startup: Sampled;
  startupEmptyCache: Sampled;
  inProcessCold: Sampled;
  /** One-file update with the previous index and the changed path given (the refactor loop). */
  hintedUpdate: Sampled;
  /** One-file update with the previous index in memory, tree listed. */
  memoryUpdate: Sampled;
  /** One-file update reading the cache from disk (`ratchet index`). */
  diskUpdate: Sampled;
  scaling: ScalingRow[];
  symbols: number;
  ctagsTags: number;
}

function sampled(values: readonly number[]): Sampled {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/** `1234 ms (1100-1400)`. */
function spread(value: Sampled, format: (value: number) => string = formatMs): string {
  return value.min === value.max
    ? format(value.median)
    : `${format(value.median)} (${format(value.min)}-${format(value.max)})`;
}

/**
 * The compiled `buildIndex` (what users run, and what the fresh-process side runs), built by
 * `npm run bench`. Refuses a `dist/` older than the sources of the index: its numbers would
 * describe other code.
 */
async function loadBuildIndex(): Promise<typeof BuildIndex> {
  const compiled = join(PROJECT, 'dist', 'code', 'index', 'build-index.js');
  const sources = await glob('src/code/**/*.ts', { cwd: PROJECT, absolute: true });
  const compiledAt = statSync(compiled, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  if (compiledAt === 0 || sources.some((source) => statSync(source).mtimeMs > compiledAt))
    throw new Error('dist/ is missing or older than src/code: run `npm run build` (or `npm run bench -- index`).');
  return ((await import(pathToFileURL(compiled).href)) as { buildIndex: typeof BuildIndex }).buildIndex;
}

/**
 * How many cores this machine really gives two CPU-bound threads: the same fixed loop on one
 * worker thread, then on two at once; 2.0 means two full cores, 1.0 means the second thread only
 * shares the first one's time (a loaded or virtual machine).
 */
async function effectiveCores(): Promise<number> {
  const source = `const { parentPort, workerData } = require('node:worker_threads');
let x = 0; for (let i = 0; i < workerData; i++) x = (x + i) | 0;
parentPort.postMessage(x);`;
  const spin = (iterations: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const worker = new Worker(source, { eval: true, workerData: iterations });
      worker.once('message', () => void worker.terminate().then(() => resolve()));
      worker.once('error', reject);
    });
  const time = async (threads: number, iterations: number): Promise<number> => {
    const started = performance.now();
    await Promise.all(Array.from({ length: threads }, () => spin(iterations)));
    return performance.now() - started;
  };
  await time(1, 2e7); // Warm-up.
  const iterations = 4e8;
  const alone = median([await time(1, iterations), await time(1, iterations)]);
  const together = median([await time(2, iterations), await time(2, iterations)]);
  return (2 * alone) / together;
}

/** `parseSync` with the lazy API's option, which oxc-parser's types do not declare. */
const lazyParse = parseSync as unknown as (
  path: string,
  text: string,
  options: { experimentalLazy: true; lang: string },
) => { dispose(): void };

function langOf(path: string): string {
  if (/\.d\.[cm]?ts$/.test(path)) return 'dts';
  if (path.endsWith('.tsx')) return 'tsx';
  return /\.[cm]?ts$/.test(path) ? 'ts' : 'jsx';
}

/** CPU time of oxc parsing every file once in this thread (lazy API, nothing read): the parser's floor. */
function oxcParseCpuMs(tree: string, paths: readonly string[]): number {
  const texts = paths.map((path) => readFileSync(join(tree, path), 'utf8'));
  const pass = (): number => {
    const before = processCpuMs();
    for (const [position, path] of paths.entries())
      lazyParse(path, texts[position] ?? '', { experimentalLazy: true, lang: langOf(path) }).dispose();
    return processCpuMs() - before;
  };
  pass(); // Warm-up.
  return pass();
}

async function collectFiles(limit: number): Promise<{ path: string; size: number }[]> {
  const paths = await glob('node_modules/**/*.{ts,tsx,mts,cts,js,mjs,cjs}', {
    cwd: PROJECT,
    dot: false,
    onlyFiles: true,
    followSymbolicLinks: false,
    ignore: ['node_modules/.cache/**', 'node_modules/.vite/**'],
  });
  paths.sort();
  const files: { path: string; size: number }[] = [];
  for (const path of paths) {
    const size = statSync(join(PROJECT, path)).size;
    if (size > 0 && size <= MAX_FILE_BYTES) files.push({ path, size });
    if (files.length >= limit) break;
  }
  return files;
}

/**
 * Copies `files` from node_modules into `tree`, under each of `prefixes`. The copies under the
 * second and later prefixes end with a comment naming their prefix: the index parses a file
 * identical to one it already parsed once, so exact copies would make the doubled corpus cheap
 * for it and not for ctags; these are as many distinct files as ctags reads.
 */
async function writeTree(tree: string, files: readonly { path: string }[], prefixes: readonly string[]): Promise<void> {
  for (const [index, prefix] of prefixes.entries()) {
    for (const file of files) {
      const target = join(tree, file.path.replace(/^node_modules\//, `${prefix}/`));
      await mkdir(dirname(target), { recursive: true });
      await copyFile(join(PROJECT, file.path), target);
      if (index > 0) await appendFile(target, `\n// ${prefix}\n`);
    }
  }
}

function ctagsAvailable(): boolean {
  return spawnSync('ctags', ['--version'], { stdio: 'ignore' }).status === 0;
}

function processCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Clock ticks per second of `/proc`'s CPU times. */
let clockTicks: number | undefined;

/**
 * CPU time (user + system) of this process's children that have ended, from Linux's
 * `/proc/self/stat` (10 ms resolution); undefined elsewhere.
 */
function endedChildrenCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces), from field 3 on: cutime is 16, cstime 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / clockTicks;
  } catch {
    return undefined;
  }
}

function timeCtags(dir: string, tagsFile: string): { ms: number; cpuMs: number | undefined; tags: number } {
  const cpuBefore = endedChildrenCpuMs();
  const started = performance.now();
  const result = spawnSync('ctags', ['-R', CTAGS_LANGMAP, '--languages=TypeScript,JavaScript', '-f', tagsFile, '.'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const ms = performance.now() - started;
  const cpuAfter = endedChildrenCpuMs();
  if (result.status !== 0) throw new Error(`ctags exited with ${result.status ?? result.signal}`);
  const tags = Number(execFileSync('sh', ['-c', `grep -vc '^!_' '${tagsFile}' || true`], { encoding: 'utf8' }).trim());
  const cpuMs = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
  return { ms, cpuMs, tags };
}

/**
 * `index-cold-side.ts` compiled to JavaScript in `work`, so the measured process runs no
 * TypeScript (as `ratchet` runs none).
 */
function writeColdSide(work: string): string {
  const script = join(work, 'index-cold-side.mjs');
  const { outputText } = ts.transpileModule(readFileSync(COLD_SIDE, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023 },
  });
  writeFileSync(script, outputText);
  return script;
}

/**
 * A cold index of `root` in a fresh process, with the process's wall time from spawn to exit (as
 * ctags's; it also covers writing the job's file and reading the result's, well under a
 * millisecond each).
 */
async function coldInFreshProcess(
  root: string,
  work: string,
  compileCache: 'written' | 'empty',
): Promise<ColdSideResult & { processMs: number }> {
  const job: ColdSideJob = {
    project: PROJECT,
    root,
    cacheDir: join(work, 'cold-cache'),
    compileCache: join(work, 'compile-cache'),
  };
  if (compileCache === 'empty') {
    job.compileCache = join(work, 'compile-cache-empty');
    await rm(job.compileCache, { recursive: true, force: true });
  }
  // A new clone has no index cache; removed here, so the measured process does not pay for it.
  await rm(job.cacheDir, { recursive: true, force: true });
  const started = performance.now();
  const result = await runSide<ColdSideJob, ColdSideResult>(join(work, 'index-cold-side.mjs'), job);
  return { ...result, processMs: performance.now() - started };
}

/**
 * ctags and the fresh-process cold index on `tree`, `runs` times each, alternating; with
 * `emptyCache`, also the cold index with an empty compile cache.
 */
async function compareCold(
  tree: string,
  work: string,
  runs: number,
  emptyCache = false,
): Promise<{
  ctags: number[];
  /** ctags's CPU time per run (empty where it cannot be read). */
  ctagsCpu: number[];
  cold: (ColdSideResult & { processMs: number })[];
  coldEmptyCache: (ColdSideResult & { processMs: number })[];
  tags: number;
}> {
  const ctags: number[] = [];
  const ctagsCpu: number[] = [];
  const cold: (ColdSideResult & { processMs: number })[] = [];
  const coldEmptyCache: (ColdSideResult & { processMs: number })[] = [];
  let tags = 0;
  for (let run = 0; run < runs; run++) {
    const result = timeCtags(tree, join(work, 'tags'));
    ctags.push(result.ms);
    if (result.cpuMs !== undefined) ctagsCpu.push(result.cpuMs);
    tags = result.tags;
    cold.push(await coldInFreshProcess(tree, work, 'written'));
    if (emptyCache) coldEmptyCache.push(await coldInFreshProcess(tree, work, 'empty'));
  }
  return { ctags, ctagsCpu, cold, coldEmptyCache, tags };
}

/** Wall time of `ratchet --version` (the built executable), with the compile cache in `compileCache`. */
function timeStartup(compileCache: string, empty: boolean): number {
  if (empty) rmSync(compileCache, { recursive: true, force: true });
  const started = performance.now();
  const result = spawnSync(process.execPath, [join(PROJECT, 'dist', 'bundle', 'bin.js'), '--version'], {
    env: { ...process.env, NODE_COMPILE_CACHE: compileCache },
    stdio: 'ignore',
  });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`ratchet --version exited with ${result.status ?? result.signal}`);
  return ms;
}

/** Runs the bench and returns its numbers; prints tables through `log` (default console.log). */
async function runIndexBench(options: IndexBenchOptions = {}): Promise<IndexBenchResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const runs = options.runs ?? 3;
  const limit = options.files ?? (Number(process.env.RATCHET_BENCH_INDEX_FILES) || DEFAULT_FILES);
  if (!ctagsAvailable())
    throw new Error('universal-ctags is not installed (Debian/Ubuntu: apt-get install universal-ctags).');
  const buildIndex = await loadBuildIndex();

  const work = await mkdtemp(join(tmpdir(), 'ratchet-index-bench-'));
  // This process runs the in-process measurements as the executable would run them.
  const { setUpProcess } = (await import(pathToFileURL(join(PROJECT, 'dist', 'cli', 'process-setup.js')).href)) as {
    setUpProcess: typeof SetUpProcess;
  };
  setUpProcess({ compileCache: join(work, 'compile-cache-bench') });
  try {
    const files = await collectFiles(limit);
    const tree = join(work, 'tree');
    await writeTree(tree, files, ['packages']);
    const bytes = files.reduce((sum, file) => sum + file.size, 0);
    log(`  ${files.length} files, ${(bytes / 1024 / 1024).toFixed(1)} MB of TypeScript/JavaScript from node_modules`);
    log(`  load average before: ${formatLoad()}; ${availableParallelism()} cores`);

    writeColdSide(work);
    // One run writes the compile cache the measured runs read (as every run after the first does).
    await coldInFreshProcess(tree, work, 'written');
    const main = await compareCold(tree, work, runs, true);
    const ctags = sampled(main.ctags);
    const cold = sampled(main.cold.map((result) => result.processMs));
    const coldBuild = sampled(main.cold.map((result) => result.buildMs));
    const coldEmptyCache = sampled(main.coldEmptyCache.map((result) => result.processMs));
    const coldRss = sampled(main.cold.map((result) => result.maxRss));
    const coldCpu = sampled(main.cold.map((result) => result.processCpuMs));
    const coldThreadCpu = sampled(main.cold.map((result) => result.threadCpuMs));
    const ctagsCpu = main.ctagsCpu.length > 0 ? sampled(main.ctagsCpu) : undefined;
    const symbols = main.cold[0]?.symbols ?? 0;

    const startupCache = join(work, 'compile-cache-startup');
    timeStartup(startupCache, true);
    const startupTimes: number[] = [];
    const startupEmptyTimes: number[] = [];
    for (let run = 0; run < runs; run++) {
      startupTimes.push(timeStartup(startupCache, false));
      startupEmptyTimes.push(timeStartup(join(work, 'compile-cache-startup-empty'), true));
    }
    const startup = sampled(startupTimes);
    const startupEmptyCache = sampled(startupEmptyTimes);

    // In this process: the first build compiles the code; the median is of warm ones.
    const cacheDir = join(work, 'cache');
    const indexOptions = { root: tree, cacheDir, excludes: [], git: false as const };
    const inProcessTimes: number[] = [];
    for (let run = 0; run < runs; run++) {
      await rm(cacheDir, { recursive: true, force: true });
      const started = performance.now();
      await buildIndex(indexOptions);
      inProcessTimes.push(performance.now() - started);
    }
    const inProcessCold = sampled(inProcessTimes.slice(runs > 1 ? 1 : 0));

    const updates = await measureUpdates(buildIndex, indexOptions, tree, files, runs);

    const scaling: ScalingRow[] = [];
    for (const [label, subset, prefixes] of [
      ['quarter', files.filter((_, position) => position % 4 === 0), ['packages']],
      ['doubled', files, ['packages', 'packages-copy']],
    ] as const) {
      const scaled = join(work, label);
      await writeTree(scaled, subset, prefixes);
      const measured = await compareCold(scaled, work, runs);
      scaling.push(scalingRow(subset.length * prefixes.length, subset, prefixes.length, measured));
      await rm(scaled, { recursive: true, force: true });
    }
    scaling.splice(1, 0, scalingRow(files.length, files, 1, main));

    const parseFloor = oxcParseCpuMs(
      tree,
      files.map((file) => file.path.replace(/^node_modules\//, 'packages/')),
    );
    const cores = await effectiveCores();
    const coldRatio = cold.median / ctags.median;
    const coldMet = coldRatio <= COLD_TARGET_RATIO;
    const updateMet = updates.hinted.median <= UPDATE_TARGET_MS;
    const rssMet = coldRss.median <= RSS_TARGET_BYTES;
    const met = (ok: boolean): string => (ok ? 'yes' : 'NO');
    const ratio = (value: number): string => `${(value / ctags.median).toFixed(2)}x`;
    // On a loaded machine wall times stretch with the load; CPU times far less: these compare the two.
    const cpuRatio = (value: number): string =>
      ctagsCpu === undefined ? '-' : `${(value / ctagsCpu.median).toFixed(2)}x its CPU`;
    log(
      table(
        ['measurement', `median (range of ${runs})`, 'vs ctags', 'target', 'met'],
        [
          ['ctags -R (baseline)', spread(ctags), '1.00x', '-', '-'],
          ...(ctagsCpu === undefined ? [] : [['  its CPU', spread(ctagsCpu), '-', '-', '-']]),
          [
            `cold index, fresh process from spawn to exit, compile cache written (${main.cold[0]?.workers ?? 0} workers)`,
            spread(cold),
            ratio(cold.median),
            `<= ${COLD_TARGET_RATIO.toFixed(1)}x`,
            met(coldMet),
          ],
          ['  its CPU: the indexing thread', spread(coldThreadCpu), cpuRatio(coldThreadCpu.median), '-', '-'],
          ['  its CPU: all threads (GC, compilers)', spread(coldCpu), cpuRatio(coldCpu.median), '-', '-'],
          [
            '  its peak RSS (the process)',
            spread(coldRss, formatMb),
            '-',
            `<= ${formatMb(RSS_TARGET_BYTES)}`,
            met(rssMet),
          ],
          ['  its buildIndex call alone', spread(coldBuild), ratio(coldBuild.median), '-', '-'],
          [
            'cold index, fresh process from spawn to exit, compile cache empty',
            spread(coldEmptyCache),
            ratio(coldEmptyCache.median),
            '-',
            '-',
          ],
          ['ratchet --version, compile cache written', spread(startup), '-', '-', '-'],
          ['ratchet --version, compile cache empty', spread(startupEmptyCache), '-', '-', '-'],
          ['cold index, in this process (code compiled)', spread(inProcessCold), ratio(inProcessCold.median), '-', '-'],
          [
            'one-file update as the refactor loop runs it',
            spread(updates.hinted),
            '-',
            `<= ${UPDATE_TARGET_MS} ms`,
            met(updateMet),
          ],
          ['one-file update, previous index, tree listed', spread(updates.memory), '-', '-', '-'],
          ['one-file update, cache read from disk', spread(updates.disk), '-', '-', '-'],
          ['oxc parse alone, 1 thread, CPU (parser floor)', formatMs(parseFloor), ratio(parseFloor), '-', '-'],
        ],
      ),
    );
    log('');
    log(
      '  scaling: cold index (fresh process from spawn to exit, compile cache written) and ctags -R on the corpus subsampled and doubled',
    );
    log(
      table(
        ['files', 'MB', 'ctags -R', 'cold index', 'x ctags'],
        scaling.map((row) => [
          String(row.files),
          (row.bytes / 1024 / 1024).toFixed(1),
          spread(row.ctags),
          spread(row.cold),
          `${row.ratio.toFixed(2)}x`,
        ]),
      ),
    );
    log(
      `  effective cores for two CPU-bound threads: ${cores.toFixed(2)} of ${availableParallelism()} (1.00 = no parallel speed-up); ` +
        `ctags tags: ${main.tags}; index symbols: ${symbols}; load average after: ${formatLoad()}`,
    );
    const quarter = scaling[0];
    const doubled = scaling[2];
    return {
      name: 'index',
      headline:
        `cold ${coldRatio.toFixed(2)}x ctags (${formatMs(cold.median)} vs ${formatMs(ctags.median)}; fresh process from spawn to exit, compile cache written), ` +
        `peak RSS ${formatMb(coldRss.median)}, one-file update ${formatMs(updates.hinted.median)} (refactor loop) / ` +
        `${formatMs(updates.disk.median)} (cache from disk); ` +
        `scaling ${quarter?.ratio.toFixed(2) ?? '-'}x / ${coldRatio.toFixed(2)}x / ${doubled?.ratio.toFixed(2) ?? '-'}x ctags ` +
        `at ${quarter?.files ?? '-'} / ${files.length} / ${doubled?.files ?? '-'} files`,
      targetsMet: coldMet && updateMet && rssMet,
      files: files.length,
      bytes,
      ctags,
      cold,
      coldRatio,
      coldBuild,
      coldEmptyCache,
      coldRss,
      startup,
      startupEmptyCache,
      inProcessCold,
      hintedUpdate: updates.hinted,
      memoryUpdate: updates.memory,
      diskUpdate: updates.disk,
      scaling,
      symbols,
      ctagsTags: main.tags,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function scalingRow(
  count: number,
  subset: readonly { size: number }[],
  copies: number,
  measured: { ctags: number[]; cold: (ColdSideResult & { processMs: number })[] },
): ScalingRow {
  const ctags = sampled(measured.ctags);
  const cold = sampled(measured.cold.map((result) => result.processMs));
  const bytes = copies * subset.reduce((sum, file) => sum + file.size, 0);
  return { files: count, bytes, ctags, cold, ratio: cold.median / ctags.median };
}

function formatLoad(): string {
  return loadavg()
    .map((load) => load.toFixed(1))
    .join(' ');
}

/** The three kinds of one-file update, each after appending a function to one file. */
async function measureUpdates(
  buildIndex: typeof BuildIndex,
  indexOptions: Parameters<typeof BuildIndex>[0],
  tree: string,
  files: readonly { path: string }[],
  runs: number,
): Promise<{ hinted: Sampled; memory: Sampled; disk: Sampled }> {
  // Unchanged rebuilds first: they age the cache past the racy-mtime window of the copies.
  await new Promise((resolve) => setTimeout(resolve, 2100));
  const unchanged = await buildIndex(indexOptions);
  if (unchanged.stats.parsed !== 0) throw new Error(`unchanged rebuild parsed ${unchanged.stats.parsed} files`);
  const changedPath = (files[Math.floor(files.length / 2)] ?? files[0])?.path.replace(/^node_modules\//, 'packages/');
  if (changedPath === undefined) throw new Error('no files to update');
  const changed = join(tree, changedPath);
  let edits = 0;
  const updateOnce = async (previous?: CodeIndex, hinted = false): Promise<{ ms: number; index: CodeIndex }> => {
    edits++;
    await appendFile(changed, `\nexport function benchAdded${edits}(value) { return value + ${edits}; }\n`);
    const started = performance.now();
    const index = await buildIndex(
      previous === undefined
        ? indexOptions
        : { ...indexOptions, previous, ...(hinted ? { changedPaths: [relative(tree, changed)] } : {}) },
    );
    const ms = performance.now() - started;
    if (index.stats.parsed !== 1) throw new Error(`one-file update parsed ${index.stats.parsed} files, expected 1`);
    return { ms, index };
  };
  const count = Math.max(5, runs);
  const disk: number[] = [];
  for (let run = 0; run < count; run++) disk.push((await updateOnce()).ms);
  const memory: number[] = [];
  let previous = (await updateOnce()).index;
  for (let run = 0; run < count; run++) {
    const update = await updateOnce(previous);
    memory.push(update.ms);
    previous = update.index;
  }
  const hinted: number[] = [];
  for (let run = 0; run < 2 * count; run++) {
    const update = await updateOnce(previous, true);
    hinted.push(update.ms);
    previous = update.index;
  }
  return { hinted: sampled(hinted), memory: sampled(memory), disk: sampled(disk) };
}

export const indexBench: Bench = {
  name: 'index',
  description: 'cold and one-file-changed code index of node_modules TS/JS vs ctags -R, peak RSS, scaling',
  run: (options) => runIndexBench(options),
};

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const flag = process.argv.indexOf('--files');
  const files = flag === -1 ? undefined : Number(process.argv[flag + 1]);
  await runIndexBench(files === undefined ? {} : { files });
}
