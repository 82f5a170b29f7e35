import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { appendFile, copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { glob } from 'tinyglobby';
import type { buildIndex as BuildIndex } from '../src/code/index/build-index.js';
import type { CodeIndex } from '../src/code/index/types.js';
import { formatMs, median, table, type Bench, type BenchOptions, type BenchSummary } from './harness.js';

/**
 * Code index bench (seed 002, section 10): a cold index and a one-file-changed update of a large
 * real codebase — the TypeScript and JavaScript under this project's own `node_modules` — against
 * `ctags -R` (universal-ctags) over the same files in the same run.
 *
 * Targets: cold <= 2x ctags; one-file update <= 100 ms. The update is timed three ways, each a
 * whole `buildIndex` call (hash and parse the changed file, re-derive the graphs and the risk
 * register, save the cache):
 * - as the refactor loop makes it after each batch, with the previous index in memory and the
 *   paths the batch touched: the target applies to this one, the incremental update Ratchet runs;
 * - with the previous index but no paths given (the tree is listed and stat'ed again);
 * - as `ratchet index` makes it, reading the cache from disk: this one also pays
 *   for loading every cached parse result (tens of MB of JSON for this tree), which grows with
 *   the repository, not with the change.
 *
 * `tsx bench/index.ts [--files N]` runs it alone; `RATCHET_BENCH_INDEX_FILES` also sets N.
 */

const PROJECT = dirname(dirname(fileURLToPath(import.meta.url)));
const DEFAULT_FILES = 6000;
/** Minified bundles say nothing about real code and ctags skips most of them anyway. */
const MAX_FILE_BYTES = 200 * 1024;
const COLD_TARGET_RATIO = 2;
const UPDATE_TARGET_MS = 100;

interface IndexBenchOptions extends Partial<BenchOptions> {
  /** Files copied from node_modules (default 6000). */
  files?: number;
  log?: (line: string) => void;
}

interface IndexBenchResult extends BenchSummary {
  files: number;
  bytes: number;
  ctagsMs: number;
  coldMs: number;
  ctagsCpuMs: number;
  coldCpuMs: number;
  /** One-file update reading the cache from disk (`ratchet index`). */
  updateMs: number;
  /** One-file update with the previous index in memory (the refactor loop). */
  memoryUpdateMs: number;
  /** One-file update with the previous index and the changed path given (no tree walk). */
  hintedUpdateMs: number;
  noChangeMs: number;
  coldRatio: number;
  /** CPU time of tree-sitter parsing every file once, one thread, nothing else. */
  parseFloorCpuMs: number;
  /** Parallel speed-up two CPU-bound threads get here (2 = two full cores). */
  effectiveCores: number;
  symbols: number;
  ctagsTags: number;
}

/**
 * The compiled `buildIndex` when `dist/` is at least as new as every source file of the index
 * (`npm run bench` builds first), which is what users run; else the TypeScript sources, whose
 * parse workers then load through tsx (slower to start: about 0.3 s more per worker).
 */
async function loadBuildIndex(): Promise<{ buildIndex: typeof BuildIndex; from: string }> {
  const compiled = join(PROJECT, 'dist', 'code', 'index', 'build-index.js');
  const sources = await glob('src/code/**/*.ts', { cwd: PROJECT, absolute: true });
  const compiledAt = statSync(compiled, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const fresh = compiledAt > 0 && sources.every((source) => statSync(source).mtimeMs <= compiledAt);
  if (fresh) {
    const module = (await import(pathToFileURL(compiled).href)) as { buildIndex: typeof BuildIndex };
    return { buildIndex: module.buildIndex, from: 'dist/ (compiled)' };
  }
  const module = await import('../src/code/index/build-index.js');
  return { buildIndex: module.buildIndex, from: 'src/ through tsx (dist/ missing or older than src/)' };
}

/**
 * How many cores this machine really gives two CPU-bound threads: the same fixed loop on one
 * worker thread, then on two at once; 2.0 means two full cores, 1.0 means the second thread only
 * shares the first one's time (as on some virtual machines). The cold index's worker pool can
 * only be as fast as this allows.
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

/** CPU time of tree-sitter parsing every file once in this thread, nothing else: the floor of a cold index per core. */
async function parseOnlyCpuMs(tree: string, paths: readonly string[]): Promise<number> {
  const { languageIdForFile, loadLanguage } = await import('../src/code/tree-sitter.js');
  const { Parser } = await import('web-tree-sitter');
  const texts = paths.map((path) => readFileSync(join(tree, path), 'utf8'));
  const parsers = new Map<string, InstanceType<typeof Parser>>();
  const parserFor = async (path: string): Promise<InstanceType<typeof Parser> | undefined> => {
    const id = languageIdForFile(path);
    if (id === undefined) return undefined;
    let parser = parsers.get(id);
    if (parser === undefined) {
      parser = new Parser();
      parser.setLanguage(await loadLanguage(id));
      parsers.set(id, parser);
    }
    return parser;
  };
  const pass = async (): Promise<number> => {
    const before = processCpuMs();
    for (const [position, path] of paths.entries()) (await parserFor(path))?.parse(texts[position] ?? '')?.delete();
    return processCpuMs() - before;
  };
  await pass(); // Warm-up: wasm compiled and tiered up, as in a long-lived worker.
  const cpu = await pass();
  for (const parser of parsers.values()) parser.delete();
  return cpu;
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

function ctagsAvailable(): boolean {
  return spawnSync('ctags', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** CPU time of reaped child processes (utime + stime of children, /proc/self/stat), in ms. */
function childrenCpuMs(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
    // After the command: state is field 3; cutime and cstime are fields 16 and 17 (1-based).
    return ((Number(fields[13]) || 0) + (Number(fields[14]) || 0)) * 10;
  } catch {
    return Number.NaN;
  }
}

function processCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

function timeCtags(dir: string, tagsFile: string): { ms: number; cpuMs: number; tags: number } {
  const cpuBefore = childrenCpuMs();
  const started = performance.now();
  const result = spawnSync('ctags', ['-R', '--languages=TypeScript,JavaScript', '-f', tagsFile, '.'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const ms = performance.now() - started;
  const cpuMs = childrenCpuMs() - cpuBefore;
  if (result.status !== 0) throw new Error(`ctags exited with ${result.status ?? result.signal}`);
  const tags = Number(execFileSync('sh', ['-c', `grep -vc '^!_' '${tagsFile}' || true`], { encoding: 'utf8' }).trim());
  return { ms, cpuMs, tags };
}

/** Runs the bench and returns its numbers; prints a table through `log` (default console.log). */
async function runIndexBench(options: IndexBenchOptions = {}): Promise<IndexBenchResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const runs = options.runs ?? 1;
  const limit = options.files ?? (Number(process.env.RATCHET_BENCH_INDEX_FILES) || DEFAULT_FILES);
  if (!ctagsAvailable())
    throw new Error('universal-ctags is not installed (Debian/Ubuntu: apt-get install universal-ctags).');

  const work = await mkdtemp(join(tmpdir(), 'ratchet-index-bench-'));
  try {
    const tree = join(work, 'tree');
    const files = await collectFiles(limit);
    for (const file of files) {
      const target = join(tree, file.path.replace(/^node_modules\//, 'packages/'));
      await mkdir(dirname(target), { recursive: true });
      await copyFile(join(PROJECT, file.path), target);
    }
    const bytes = files.reduce((sum, file) => sum + file.size, 0);
    const { buildIndex, from } = await loadBuildIndex();
    log(`  buildIndex from ${from}`);
    log(`  ${files.length} files, ${(bytes / 1024 / 1024).toFixed(1)} MB of TypeScript/JavaScript from node_modules`);

    const ctagsTimes: number[] = [];
    const ctagsCpu: number[] = [];
    const coldTimes: number[] = [];
    const coldCpu: number[] = [];
    let ctagsTags = 0;
    let symbols = 0;
    let workers = 0;
    const cacheDir = join(work, 'cache');
    const indexOptions = { root: tree, cacheDir, excludes: [], git: false as const };
    for (let run = 0; run < runs; run++) {
      const ctags = timeCtags(tree, join(work, 'tags'));
      ctagsTimes.push(ctags.ms);
      ctagsCpu.push(ctags.cpuMs);
      ctagsTags = ctags.tags;
      await rm(cacheDir, { recursive: true, force: true });
      const cpuBefore = processCpuMs();
      const started = performance.now();
      const index = await buildIndex(indexOptions);
      coldTimes.push(performance.now() - started);
      coldCpu.push(processCpuMs() - cpuBefore);
      symbols = index.files.reduce((sum, file) => sum + file.symbols.length, 0);
      workers = index.stats.workers;
    }

    // Unchanged rebuilds first (they also age the cache past the racy-mtime window of the copies).
    const noChangeTimes: number[] = [];
    for (let run = 0; run < Math.max(3, runs); run++) {
      const started = performance.now();
      const index = await buildIndex(indexOptions);
      noChangeTimes.push(performance.now() - started);
      if (index.stats.parsed !== 0) throw new Error(`unchanged rebuild parsed ${index.stats.parsed} files`);
    }
    const changed = join(
      tree,
      (files[Math.floor(files.length / 2)] ?? files[0])?.path.replace(/^node_modules\//, 'packages/') ?? '',
    );
    let edits = 0;
    const changedPath = relative(tree, changed);
    const updateOnce = async (
      previous?: CodeIndex,
      hinted = false,
    ): Promise<{ ms: number; cpuMs: number; index: CodeIndex }> => {
      edits++;
      await appendFile(changed, `\nexport function benchAdded${edits}(value) { return value + ${edits}; }\n`);
      const cpuBefore = processCpuMs();
      const started = performance.now();
      const index = await buildIndex(
        previous === undefined
          ? indexOptions
          : { ...indexOptions, previous, ...(hinted ? { changedPaths: [changedPath] } : {}) },
      );
      const ms = performance.now() - started;
      const cpuMs = processCpuMs() - cpuBefore;
      if (index.stats.parsed !== 1) throw new Error(`one-file update parsed ${index.stats.parsed} files, expected 1`);
      return { ms, cpuMs, index };
    };
    // As `ratchet index` runs it: the cache is read from disk.
    const updateTimes: number[] = [];
    const updateCpu: number[] = [];
    for (let run = 0; run < Math.max(5, runs); run++) {
      const update = await updateOnce();
      updateTimes.push(update.ms);
      updateCpu.push(update.cpuMs);
    }
    // As the refactor loop runs it: the previous index stays in memory.
    const memoryTimes: number[] = [];
    const memoryCpu: number[] = [];
    let previous = (await updateOnce()).index;
    for (let run = 0; run < Math.max(5, runs); run++) {
      const update = await updateOnce(previous);
      memoryTimes.push(update.ms);
      memoryCpu.push(update.cpuMs);
      previous = update.index;
    }

    // As the refactor loop can run it: it knows which files its batch changed.
    const hintedTimes: number[] = [];
    const hintedCpu: number[] = [];
    for (let run = 0; run < Math.max(5, runs); run++) {
      const update = await updateOnce(previous, true);
      hintedTimes.push(update.ms);
      hintedCpu.push(update.cpuMs);
      previous = update.index;
    }

    const parseFloorCpuMs = await parseOnlyCpuMs(
      tree,
      files.map((file) => file.path.replace(/^node_modules\//, 'packages/')),
    );
    const cores = await effectiveCores();
    const ctagsMs = median(ctagsTimes);
    const ctagsCpuMs = median(ctagsCpu);
    const coldCpuMs = median(coldCpu);
    const coldMs = median(coldTimes);
    const updateMs = median(updateTimes);
    const memoryUpdateMs = median(memoryTimes);
    const updateCpuMs = median(updateCpu);
    const memoryUpdateCpuMs = median(memoryCpu);
    const noChangeMs = median(noChangeTimes);
    const coldRatio = coldMs / ctagsMs;
    const coldMet = coldRatio <= COLD_TARGET_RATIO;
    const hintedUpdateMs = median(hintedTimes);
    const hintedMet = hintedUpdateMs <= UPDATE_TARGET_MS;
    const ratio = (value: number, base: number): string => `${(value / base).toFixed(2)}x`;
    const met = (ok: boolean): string => (ok ? 'yes' : 'NO');
    log(
      table(
        ['measurement', 'wall', 'vs ctags', 'cpu', 'cpu vs ctags', 'target', 'met'],
        [
          ['ctags -R (baseline)', formatMs(ctagsMs), '1.00x', formatMs(ctagsCpuMs), '1.00x', '-', '-'],
          [
            `cold buildIndex (${workers} workers)`,
            formatMs(coldMs),
            ratio(coldMs, ctagsMs),
            formatMs(coldCpuMs),
            ratio(coldCpuMs, ctagsCpuMs),
            `<= ${COLD_TARGET_RATIO}x wall`,
            met(coldMet),
          ],
          [
            'one-file update as the refactor loop runs it',
            formatMs(hintedUpdateMs),
            '-',
            formatMs(median(hintedCpu)),
            '-',
            `<= ${UPDATE_TARGET_MS} ms`,
            met(hintedMet),
          ],
          [
            'one-file update, previous index, tree listed',
            formatMs(memoryUpdateMs),
            '-',
            formatMs(memoryUpdateCpuMs),
            '-',
            '-',
            '-',
          ],
          [
            'one-file update, cache read from disk (ratchet index)',
            formatMs(updateMs),
            '-',
            formatMs(updateCpuMs),
            '-',
            '-',
            '-',
          ],
          ['no-change rebuild, cache on disk', formatMs(noChangeMs), '-', '-', '-', '-', '-'],
          [
            'tree-sitter parse alone, 1 thread (per-core floor)',
            '-',
            '-',
            formatMs(parseFloorCpuMs),
            ratio(parseFloorCpuMs, ctagsCpuMs),
            '-',
            '-',
          ],
        ],
      ),
    );
    log(
      `  effective cores for two CPU-bound threads: ${cores.toFixed(2)} of ${availableParallelism()} (1.00 = no parallel speed-up); ` +
        `with them the parse alone needs at least ${formatMs(parseFloorCpuMs / Math.max(1, Math.min(cores, workers || 1)))} of wall time (${ratio(parseFloorCpuMs / Math.max(1, Math.min(cores, workers || 1)), ctagsMs)} ctags)`,
    );
    log(
      `  ctags tags: ${ctagsTags}; index symbols: ${symbols}; load average ${loadavg()
        .map((load) => load.toFixed(1))
        .join(' ')}`,
    );
    return {
      name: 'index',
      headline: `cold ${coldRatio.toFixed(2)}x ctags (${formatMs(coldMs)} vs ${formatMs(ctagsMs)}; parse alone ${ratio(parseFloorCpuMs, ctagsCpuMs)} ctags per core, ${cores.toFixed(2)} effective cores), one-file update ${formatMs(hintedUpdateMs)} (refactor loop) / ${formatMs(memoryUpdateMs)} (tree listed) / ${formatMs(updateMs)} (cache from disk)`,
      targetsMet: coldMet && hintedMet,
      files: files.length,
      bytes,
      ctagsMs,
      coldMs,
      ctagsCpuMs,
      coldCpuMs,
      updateMs,
      memoryUpdateMs,
      hintedUpdateMs,
      noChangeMs,
      coldRatio,
      parseFloorCpuMs,
      effectiveCores: cores,
      symbols,
      ctagsTags,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export const indexBench: Bench = {
  name: 'index',
  description: 'cold and one-file-changed code index of node_modules TS/JS vs ctags -R',
  run: (options) => runIndexBench(options),
};

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const flag = process.argv.indexOf('--files');
  const files = flag === -1 ? undefined : Number(process.argv[flag + 1]);
  await runIndexBench(files === undefined ? {} : { files });
}
