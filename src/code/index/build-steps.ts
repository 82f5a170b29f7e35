/** The steps `buildIndex` is made of, apart from listing files and deriving graphs. */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { throwIfAborted } from '../../core/errors.js';
import { languageIdForFile } from '../tree-sitter.js';
import { parseKey, type CachedFile, type IndexCache } from './cache.js';
import { gitChurn, gitHead } from './git-files.js';
import { processFile, type FileOutcome, type FileWork } from './process-file.js';
import { goModulePath, type GoModule } from './resolve-imports.js';
import { SourceExtractor } from './source-extractor.js';
import { isTestPath } from './test-files.js';
import type { CodeIndex, FileParseResult, IndexedFile } from './types.js';
import { processInWorkers, type ParsePool } from './worker-pool.js';

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

/**
 * Reads, hashes and parses `work`: when there is much of it, on `pool` if one was started early,
 * else on worker threads started for it; otherwise in this thread.
 */
export async function processWork(
  root: string,
  work: readonly FileWork[],
  options: { maxParseBytes: number; workers: number; signal?: AbortSignal; pool?: ParsePool },
): Promise<{ outcomes: (FileOutcome | undefined)[]; workers: number }> {
  const { pool, signal } = options;
  if (options.workers > 0 && work.length >= WORKER_THRESHOLD) {
    try {
      if (pool !== undefined)
        return { outcomes: await pool.process(work, signal ? { signal } : {}), workers: pool.size };
      const outcomes = await processInWorkers(work, { root, ...options });
      return { outcomes, workers: options.workers };
    } catch {
      throwIfAborted(signal);
      // Workers could not start (or one crashed): parse in this thread instead.
    }
  }
  using extractor = new SourceExtractor();
  const outcomes: (FileOutcome | undefined)[] = [];
  for (const item of work) {
    throwIfAborted(signal);
    outcomes.push(await processFile(extractor, root, item, options.maxParseBytes));
  }
  return { outcomes, workers: 0 };
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

export function isGoMod(path: string): boolean {
  return path === 'go.mod' || path.endsWith('/go.mod');
}

export async function readGoModules(root: string, files: readonly IndexedFile[]): Promise<GoModule[]> {
  const modules: GoModule[] = [];
  for (const file of files) {
    if (!isGoMod(file.path)) continue;
    const module = goModulePath(await readFile(join(root, file.path), 'utf8').catch(() => ''));
    const dir = dirname(file.path);
    if (module !== undefined) modules.push({ dir: dir === '.' ? '' : dir, module });
  }
  return modules;
}
