/**
 * Builds the code index of a directory incrementally (seed 002, section 10.3).
 *
 * 1. List the files (`git ls-files` or a glob, minus excludes) and stat them.
 * 2. A file whose size and mtime match the cache keeps its cached hash and parse results (see
 *    `isReusable`). Every other file is read once and hashed; it is parsed only when the hash
 *    differs from the cached one. Many files are parsed on worker threads, a few in this thread;
 *    JavaScript and TypeScript (parsed by oxc) stay in this thread on machines of two cores.
 * 3. Derive the import graph, fan-in, test coverage, churn and the risk register from the
 *    per-file results (cheap, so always recomputed: a new file can change how others resolve).
 * 4. Save the cache: the manifest and only the parse-result shards that changed.
 *
 * A long-running caller (the refactor loop re-indexing after each batch) passes the previous
 * index as `previous`: the cache then comes from memory instead of disk, unchanged files keep
 * their resolved imports when no file was added or removed, and churn is reused while HEAD stays.
 * With `changedPaths` as well, the tree is not even listed: only those paths are stat'ed again.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { throwIfAborted } from '../../core/errors.js';
import type { Git } from '../../git/git.js';
import { languageIdForFile } from '../tree-sitter.js';
import {
  cacheFromIndex,
  isManifest,
  isReusable,
  noChurn,
  processWork,
  readChurn,
  readManifests,
  toIndexedFile,
} from './build-steps.js';
import { MANIFEST_FILE, loadCache, parseKey, saveCache, type CachedFile, type IndexCache } from './cache.js';
import { LazyResolver, deriveIndex } from './derive.js';
import { deriveChanged } from './derive-changed.js';
import { applyChangedPaths, listFiles, type ListedFile } from './list-files.js';
import type { FileWork } from './process-file.js';
import { ParsePool } from './worker-pool.js';
import { OptimisingCompilerPause } from './optimising-compiler.js';
import { YoungGenerationCap } from './young-generation.js';
import type { Manifests } from './resolve-imports.js';
import { INDEX_VERSION, type CodeIndex, type FileParseResult, type IndexedFile } from './types.js';

export interface BuildIndexOptions {
  /** Directory to index. */
  root: string;
  /** Where the cache lives, conventionally `<repo>/.ratchet/index`; excluded from the tree. */
  cacheDir: string;
  /** Globs of paths to leave out, e.g. `['**\/node_modules/**', '**\/dist/**']`. */
  excludes: readonly string[];
  /**
   * Git of the repository holding `root`: files come from `git ls-files` (honouring
   * `.gitignore`) and churn from `git log`. Undefined: detected; false: never use git.
   */
  git?: Git | false;
  signal?: AbortSignal;
  /** Commits of history counted for churn (default 200). */
  churnCommits?: number;
  /** Worker threads for parsing; default: one per core (at most 4) when there are many files to parse. */
  workers?: number;
  /**
   * Parse JavaScript and TypeScript in the calling thread even when there are workers (default:
   * with at most two cores). oxc parses them natively, several times faster than tree-sitter, so
   * on two cores one thread beats two workers: V8 already keeps the second core busy (garbage
   * collection, compilation), and workers add their start-up and the copy of every result.
   */
  javaScriptInThread?: boolean;
  /** Files larger than this are hashed but not parsed (default 1 MiB: minified bundles). */
  maxParseBytes?: number;
  /** Clock for `builtAt` and the cache's timestamps (default `Date.now`). */
  now?: () => number;
  /** The last index of the same root, kept in memory: used instead of reading the cache from disk. */
  previous?: CodeIndex;
  /**
   * With `previous`: the root-relative paths that may have changed since it was built (added,
   * modified or deleted, e.g. from `git diff --name-only`). The tree is then not listed; every
   * other file is taken as it was. Ignored without `previous`.
   */
  changedPaths?: readonly string[];
}

const DEFAULT_CHURN_COMMITS = 200;
const DEFAULT_MAX_PARSE_BYTES = 1024 * 1024;

/** What a build remembers for the next build that passes its index as `previous`. */
interface BuildMemory {
  cache: IndexCache;
  resolver: LazyResolver;
  manifests: Manifests;
}
const memories = new WeakMap<CodeIndex, BuildMemory>();

interface Slot {
  file: ListedFile;
  /** Cache entry standing in for the file, or the index of its outcome in the work list. */
  reuse?: CachedFile;
  work?: number;
}

export async function buildIndex(options: BuildIndexOptions): Promise<CodeIndex> {
  const started = performance.now();
  using youngGeneration = YoungGenerationCap.start();
  using _turbofan = OptimisingCompilerPause.start();
  const now = options.now ?? Date.now;
  const scannedAt = now();
  const root = resolve(options.root);
  const cacheDir = resolve(options.cacheDir);
  const { signal } = options;
  // Git's modules are loaded only for a tree that may be in git (see `listFiles`).
  const useGit =
    options.git === false
      ? false
      : options.git !== undefined || (await (await import('../../git/git.js')).Git.isRepository(root));
  const churnCommits = useGit ? (options.churnCommits ?? DEFAULT_CHURN_COMMITS) : 0;
  const maxParseBytes = options.maxParseBytes ?? DEFAULT_MAX_PARSE_BYTES;
  const previous =
    options.previous?.root === root && options.previous.version === INDEX_VERSION ? options.previous : undefined;
  const memory = previous === undefined ? undefined : memories.get(previous);

  const churnPromise = useGit ? readChurn(root, churnCommits, previous, signal) : Promise.resolve(noChurn());
  churnPromise.catch(() => undefined); // Awaited below; avoids an unhandled rejection meanwhile.
  const listing = { root, excludes: options.excludes, cacheDir };
  // Without any cache every file will be parsed: start the workers now, so they load their parsers
  // while the tree is listed. (Left unused, and stopped, when the tree turns out to be small.) When
  // JavaScript stays in this thread, workers start only once there is enough else for them to do.
  const workers = options.workers ?? Math.min(4, availableParallelism());
  const javaScriptInThread = options.javaScriptInThread ?? availableParallelism() <= 2;
  const coldStart =
    previous === undefined && workers > 0 && !javaScriptInThread && !existsSync(join(cacheDir, MANIFEST_FILE));
  await using pool = coldStart ? startPool({ root, maxParseBytes, workers }) : undefined;
  const [listed, cache] = await Promise.all([
    previous !== undefined && options.changedPaths !== undefined
      ? applyChangedPaths(previous.files, options.changedPaths, listing)
      : listFiles({ ...listing, useGit, ...(signal ? { signal } : {}) }),
    previous === undefined ? loadCache(cacheDir) : (memory?.cache ?? cacheFromIndex(previous)),
  ]);
  throwIfAborted(signal);

  // Decide per file: reuse from the cache, or read (and maybe parse).
  const work: FileWork[] = [];
  const slots: Slot[] = listed.map((file) => {
    const cached = cache.files.get(file.path);
    if (cached !== undefined && isReusable(cache, file, cached, maxParseBytes)) return { file, reuse: cached };
    const language = languageIdForFile(file.path);
    const known = cached !== undefined && language !== undefined && cache.parsed.has(parseKey(cached.hash, language));
    work.push(
      known ? { path: file.path, size: file.size, knownHash: cached.hash } : { path: file.path, size: file.size },
    );
    return { file, work: work.length - 1 };
  });
  const processed = await processWork(root, work, {
    maxParseBytes,
    workers,
    javaScriptInThread,
    ...(signal ? { signal } : {}),
    ...(pool ? { pool } : {}),
    ...(youngGeneration ? { onProgress: () => youngGeneration.check() } : {}),
  });
  const { outcomes } = processed;
  throwIfAborted(signal);

  // Assemble the files (in listing order, so sorted) and the next cache. With a previous index
  // and the same set of paths, unchanged files are the previous `IndexedFile` objects, imports
  // already resolved. The next cache starts from this one's parse results: entries of changed
  // files stay in memory (harmless) but are not written to disk (see `saveCache`).
  const samePaths =
    previous !== undefined && sameFileList(previous.files, listed) && !work.some((item) => isManifest(item.path));
  const next: IndexCache = { writtenAt: scannedAt, files: new Map(), parsed: new Map(cache.parsed), complete: true };
  const changedKeys = new Set<string>();
  /** Changed results the parse workers already serialised for the cache. */
  const serialised = new Map<string, string>();
  const files: IndexedFile[] = [];
  const resolvedFiles = new Set<IndexedFile>();
  let parsedCount = 0;
  let reusedCount = 0;
  const cachedResult = (path: string, hash: string): FileParseResult | undefined => {
    const language = languageIdForFile(path);
    return language === undefined ? undefined : cache.parsed.get(parseKey(hash, language));
  };
  /** Unchanged, and the file set too: the previous object as it is, imports resolved. */
  const keepPrevious = (kept: IndexedFile | undefined, path: string, entry: CachedFile): boolean => {
    if (kept === undefined || kept.hash !== entry.hash || kept.mtimeMs !== entry.mtimeMs) return false;
    next.files.set(path, entry);
    if (kept.language !== null) reusedCount++;
    files.push(kept);
    resolvedFiles.add(kept);
    return true;
  };
  for (let position = 0; position < slots.length; position++) {
    const { file, reuse, work: workIndex } = slots[position] as Slot;
    const kept = samePaths ? previous.files[position] : undefined;
    let entry: CachedFile;
    let result: FileParseResult | undefined;
    if (reuse !== undefined) {
      entry = reuse;
      if (keepPrevious(kept, file.path, entry)) continue;
      result = cachedResult(file.path, reuse.hash);
      if (result !== undefined) reusedCount++;
    } else {
      const outcome = workIndex === undefined ? undefined : outcomes[workIndex];
      if (outcome === undefined) continue; // Vanished since listing.
      entry = { hash: outcome.hash, size: outcome.size, mtimeMs: file.mtimeMs, lines: outcome.lines };
      if (outcome.parse === 'unchanged') {
        if (keepPrevious(kept, file.path, entry)) continue;
        result = cachedResult(file.path, outcome.hash);
        if (result !== undefined) reusedCount++;
      } else if (outcome.parse !== null) {
        result = outcome.parse;
        parsedCount++;
        const key = parseKey(outcome.hash, result.language);
        changedKeys.add(key);
        next.parsed.set(key, result);
        if (outcome.stored !== undefined) serialised.set(key, outcome.stored);
      } else if (outcome.size <= maxParseBytes && languageIdForFile(file.path) !== undefined) {
        next.complete = false; // A binary file with a source extension: no result to stand for it.
      }
    }
    next.files.set(file.path, entry);
    files.push(toIndexedFile(file.path, entry, result));
  }

  let removed = 0;
  const droppedKeys = new Set<string>();
  for (const [path, entry] of cache.files) {
    const current = next.files.get(path);
    if (current === undefined) removed++;
    if (current?.hash === entry.hash) continue;
    const language = languageIdForFile(path);
    if (language !== undefined) droppedKeys.add(parseKey(entry.hash, language));
  }

  const manifests = memory !== undefined && samePaths ? memory.manifests : await readManifests(root, files);
  const churn = await churnPromise;
  throwIfAborted(signal);
  const resolver = (samePaths ? memory?.resolver : undefined) ?? new LazyResolver(files, manifests);
  // The same paths and the same churn: only what the changed files touch needs deriving again.
  const derived =
    samePaths && churn.head === previous.gitHead && churnCommits === previous.churnCommits
      ? deriveChanged(
          previous,
          files,
          files.filter((file) => !resolvedFiles.has(file)),
          churn.perFile,
          resolver,
        )
      : deriveIndex(files, manifests, churn.perFile, resolvedFiles, resolver);
  saveCache(cacheDir, next, changedKeys, droppedKeys, cache.files.size === 0, serialised);

  const index: CodeIndex = {
    version: INDEX_VERSION,
    root,
    builtAt: new Date(now()).toISOString(),
    scannedAt,
    git: useGit,
    churnCommits,
    gitHead: churn.head,
    files,
    ...derived,
    stats: {
      parsed: parsedCount,
      reused: reusedCount,
      removed,
      durationMs: Math.round(performance.now() - started),
      workers: processed.workers,
    },
  };
  memories.set(index, { cache: next, resolver, manifests });
  return index;
}

/** A pool started early, or none when workers cannot start here (files are then parsed in this thread). */
function startPool(options: Parameters<typeof ParsePool.start>[0]): ParsePool | undefined {
  try {
    return ParsePool.start(options);
  } catch {
    return undefined;
  }
}

function sameFileList(files: readonly IndexedFile[], listed: readonly ListedFile[]): boolean {
  if (files.length !== listed.length) return false;
  for (let index = 0; index < files.length; index++) if (files[index]?.path !== listed[index]?.path) return false;
  return true;
}
