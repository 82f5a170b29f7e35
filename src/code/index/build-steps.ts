/** The steps `buildIndex` is made of, apart from listing files and deriving graphs. */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { throwIfAborted } from '../../core/errors.js';
import { languageIdForFile } from '../tree-sitter.js';
import { parseKey, type CachedFile, type IndexCache } from './cache.js';
import { processFile, type FileOutcome, type FileWork } from './process-file.js';
import { goModulePath, type GoModule, type Manifests } from './resolve-imports.js';
import { SourceExtractor, isParsedByOxc } from './source-extractor.js';
import { isTestPath } from './test-files.js';
import type { CodeIndex, FileParseResult, IndexedFile } from './types.js';
import { processInWorkers, type ParsePool } from './worker-pool.js';
import { isPackageJson, readWorkspacePackages } from './workspace-packages.js';

/** Fewer files than this are parsed in the calling thread: starting workers costs ~100 ms. */
const WORKER_THRESHOLD = 200;
/** Stat data is trusted only for files last modified this long before the previous build began. */
const RACY_MS = 2000;

export interface Churn {
  head: string | null;
  perFile: ReadonlyMap<string, number>;
}

export function noChurn(): Churn {
  return { head: null, perFile: new Map() };
}

/** Churn from `git log`, or from the previous index while HEAD has not moved. */
export async function readChurn(
  root: string,
  commits: number,
  previous: CodeIndex | undefined,
  signal: AbortSignal | undefined,
): Promise<Churn> {
  const { gitChurn, gitHead } = await import('./git-files.js');
  const head = await gitHead(root, signal);
  if (head === null) return noChurn();
  if (previous?.gitHead === head && previous.churnCommits === commits)
    return { head, perFile: new Map(previous.risk.map((entry) => [entry.path, entry.churn])) };
  return { head, perFile: await gitChurn(root, commits, signal) };
}

/** The cache an index stands for (parse results are the index's own objects). */
export function cacheFromIndex(index: CodeIndex): IndexCache {
  const cache: IndexCache = { writtenAt: index.scannedAt, files: new Map(), parsed: new Map(), complete: true };
  for (const file of index.files) {
    cache.files.set(file.path, { hash: file.hash, size: file.size, mtimeMs: file.mtimeMs, lines: file.lines });
    if (file.language !== null)
      cache.parsed.set(parseKey(file.hash, file.language), { ...file, language: file.language });
  }
  return cache;
}

/**
 * True when the cache entry can stand in for the file without reading it: same size and mtime,
 * the mtime safely older than the build that recorded it (an edit in the same clock tick as that
 * build could otherwise hide), and a parse result when the language is supported (files too
 * large to parse have none).
 */
export function isReusable(
  cache: IndexCache,
  stat: { path: string; size: number; mtimeMs: number },
  cached: CachedFile,
  maxParseBytes: number,
): boolean {
  if (stat.size !== cached.size || stat.mtimeMs !== cached.mtimeMs || stat.mtimeMs + RACY_MS >= cache.writtenAt)
    return false;
  if (cache.complete === true || cached.size > maxParseBytes) return true;
  const language = languageIdForFile(stat.path);
  return language === undefined || cache.parsed.has(parseKey(cached.hash, language));
}

export interface ProcessWorkOptions {
  maxParseBytes: number;
  workers: number;
  /** JavaScript and TypeScript files are parsed in this thread, whatever `workers` says. */
  javaScriptInThread: boolean;
  signal?: AbortSignal;
  pool?: ParsePool;
  /** Called every few files parsed in this thread (the build checks its heap there). */
  onProgress?: () => void;
}

/** Files parsed in this thread between two turns of the event loop while workers parse the rest. */
const YIELD_EVERY = 32;

/**
 * Reads, hashes and parses `work`: the files worker threads take (every file, or all but the
 * JavaScript and TypeScript ones with `javaScriptInThread`), when there are many, on `pool` if
 * one was started early, else on a pool started for them; the rest in this thread, meanwhile.
 */
export async function processWork(
  root: string,
  work: readonly FileWork[],
  options: ProcessWorkOptions,
): Promise<{ outcomes: (FileOutcome | undefined)[]; workers: number }> {
  const { pool, signal } = options;
  const outcomes = new Array<FileOutcome | undefined>(work.length);
  const positions = work.map((_, position) => position);
  const forWorkers =
    options.workers > 0
      ? positions.filter((position) => !options.javaScriptInThread || !isParsedByOxc(work[position]?.path ?? ''))
      : [];
  if (forWorkers.length < WORKER_THRESHOLD) forWorkers.length = 0;
  let workers = 0;
  let workersFailed = false;
  let inWorkers: Promise<void> | undefined;
  if (forWorkers.length > 0) {
    const items = forWorkers.map((position) => work[position] as FileWork);
    const started =
      pool !== undefined
        ? pool.process(items, signal ? { signal } : {})
        : processInWorkers(items, { root, ...options });
    inWorkers = started.then(
      (results) => {
        workers = pool?.size ?? options.workers;
        results.forEach((outcome, index) => (outcomes[forWorkers[index] as number] = outcome));
      },
      () => void (workersFailed = true), // Could not start, crashed or aborted: see below.
    );
  }
  using extractor = new SourceExtractor();
  const parsedSoFar = new Map<string, FileParseResult>();
  const parseHere = async (selected: readonly number[]): Promise<void> => {
    let sinceYield = 0;
    for (const position of selected) {
      throwIfAborted(signal);
      const outcome = processFile(extractor, root, work[position] as FileWork, options.maxParseBytes, parsedSoFar);
      outcomes[position] = outcome instanceof Promise ? await outcome : outcome;
      if (++sinceYield === YIELD_EVERY) {
        sinceYield = 0;
        options.onProgress?.();
        // Let the workers' replies in: awaiting a parse alone never leaves the microtask queue.
        if (inWorkers !== undefined) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  };
  const taken = new Set(forWorkers);
  await parseHere(positions.filter((position) => !taken.has(position)));
  if (inWorkers !== undefined) {
    await inWorkers;
    throwIfAborted(signal);
    if (workersFailed) {
      inWorkers = undefined;
      await parseHere(forWorkers);
    }
  }
  return { outcomes, workers };
}

export function toIndexedFile(path: string, entry: CachedFile, result: FileParseResult | undefined): IndexedFile {
  return {
    path,
    hash: entry.hash,
    size: entry.size,
    mtimeMs: entry.mtimeMs,
    lines: entry.lines,
    language: result?.language ?? null,
    isTest: isTestPath(path),
    hasErrors: result?.hasErrors ?? false,
    symbols: result?.symbols ?? [],
    imports: (result?.imports ?? []).map((ref) => ({ ...ref, resolved: [] })),
    exports: result?.exports ?? [],
    calls: result?.calls ?? [],
    cliFlags: result?.cliFlags ?? [],
  };
}

function isGoMod(path: string): boolean {
  return path === 'go.mod' || path.endsWith('/go.mod');
}

/** A manifest whose change may change how imports resolve (`go.mod`, `package.json`). */
export function isManifest(path: string): boolean {
  return isGoMod(path) || isPackageJson(path);
}

/** The Go modules and the JavaScript packages of the repository, read from their manifests. */
export async function readManifests(root: string, files: readonly IndexedFile[]): Promise<Manifests> {
  const [goModules, packages] = await Promise.all([
    readGoModules(root, files),
    readWorkspacePackages(
      root,
      files.map((file) => file.path),
    ),
  ]);
  return { goModules, packages };
}

async function readGoModules(root: string, files: readonly IndexedFile[]): Promise<GoModule[]> {
  const modules: GoModule[] = [];
  for (const file of files) {
    if (!isGoMod(file.path)) continue;
    const module = goModulePath(await readFile(join(root, file.path), 'utf8').catch(() => ''));
    const dir = dirname(file.path);
    if (module !== undefined) modules.push({ dir: dir === '.' ? '' : dir, module });
  }
  return modules;
}
