/**
 * The index cache in `<cacheDir>`: `manifest.json` (per file: content hash, size, mtime, lines)
 * and the parse results keyed by content hash and language (`<sha256>:<language>`) in 64 shards
 * `parsed/<00-3f>.json` (by the hash's first six bits), so an update rewrites only the shards
 * holding changed files: a few kilobytes to a few hundred for repositories of thousands of files
 * (one shard holds about 1/64 of the results). Identical files of one language share one parse
 * result. Not more shards: creating a file costs far more than writing a few kilobytes more, and
 * the cost grew faster than their number (measured writing a cold build's 11.7 MB on ext4: 257
 * files took 35-110 ms, 65 files 5-10 ms, one file 2-5 ms), while an update rewrites one or two.
 *
 * A cache written by another `INDEX_VERSION` (or unreadable) is ignored: everything is parsed
 * again and the cache rewritten.
 */
import { closeSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { languageIdForFile, type LanguageId } from '../tree-sitter.js';
import { INDEX_VERSION, type FileParseResult, type ImportRef } from './types.js';

export interface CachedFile {
  hash: string;
  size: number;
  mtimeMs: number;
  lines: number;
}

export interface IndexCache {
  /** When the manifest was written (ms since the epoch); stat data at or after it is not trusted. */
  writtenAt: number;
  files: Map<string, CachedFile>;
  /** Parse results by `parseKey` (only for files in a supported language). */
  parsed: Map<string, FileParseResult>;
  /**
   * Every file in a supported language small enough to parse has its result in `parsed` (true
   * for caches made from an index in memory), so reuse needs no lookup per file.
   */
  complete?: boolean;
}

interface ManifestJson {
  version: number;
  writtenAt: number;
  /** path -> [hash, size, mtimeMs, lines] */
  files: Record<string, [string, number, number, number]>;
}

/** The manifest's file name in the cache directory. */
export const MANIFEST_FILE = 'manifest.json';

const SHARDS: readonly string[] = Array.from({ length: 64 }, (_, shard) => shard.toString(16).padStart(2, '0'));
const SHARD_NAMES: ReadonlySet<string> = new Set(SHARDS.map((shard) => `${shard}.json`));

function emptyCache(): IndexCache {
  return { writtenAt: 0, files: new Map(), parsed: new Map() };
}

/** Key of a parse result: the same bytes parse differently as `.js` and as `.ts`. */
export function parseKey(hash: string, language: LanguageId): string {
  return `${hash}:${language}`;
}

/** A hexadecimal digit's value (a key starts with a SHA-256 in lowercase hex). */
function hexDigit(code: number): number {
  return code <= 57 ? code - 48 : code - 87;
}

/** The shard of a key: its hash's first six bits, the first hex digit and the top half of the second. */
function shardOf(key: string): string {
  return SHARDS[(hexDigit(key.charCodeAt(0)) << 2) | (hexDigit(key.charCodeAt(1)) >> 2)] ?? (SHARDS[0] as string);
}

/** Loads the cache; an empty one when there is none, it is unreadable or of another version. */
export async function loadCache(cacheDir: string): Promise<IndexCache> {
  let manifest: ManifestJson;
  try {
    manifest = JSON.parse(await readFile(join(cacheDir, MANIFEST_FILE), 'utf8')) as ManifestJson;
  } catch {
    return emptyCache();
  }
  if (manifest.version !== INDEX_VERSION || typeof manifest.files !== 'object') return emptyCache();
  const files = new Map<string, CachedFile>();
  for (const [path, [hash, size, mtimeMs, lines]] of Object.entries(manifest.files))
    files.set(path, { hash, size, mtimeMs, lines });
  const parsed = new Map<string, FileParseResult>();
  const shards = await Promise.all(
    SHARDS.map(async (shard) => {
      try {
        return JSON.parse(await readFile(join(cacheDir, 'parsed', `${shard}.json`), 'utf8')) as Record<
          string,
          FileParseResult
        >;
      } catch {
        return {};
      }
    }),
  );
  for (const shard of shards) for (const [hash, result] of Object.entries(shard)) parsed.set(hash, result);
  return { writtenAt: manifest.writtenAt, files, parsed };
}

/**
 * Writes the manifest and the shards holding a key in `changedKeys` or `droppedKeys` (keys no
 * longer referenced are left out); every shard with `rewriteAll` (after a cold build, so no shard
 * of an older version survives). Each file is written to a temporary name and renamed, so a
 * crash leaves either the old or the new file.
 *
 * The files are written synchronously, one after the other, through one buffer of 64 KiB (see
 * `PieceWriter`): no JSON of a whole shard or of the whole cache is ever held (V8 would keep such
 * strings in its old generation until a full collection: megabytes of peak RSS in a cold build),
 * and writes of a few hundred kilobytes to the page cache cost less than the bookkeeping of
 * asynchronous ones (measured on a cold index of 6,000 files; see bench/index.ts).
 */
export function saveCache(
  cacheDir: string,
  cache: IndexCache,
  changedKeys: ReadonlySet<string>,
  droppedKeys: ReadonlySet<string>,
  rewriteAll: boolean,
  /** `storableJson` of some of `cache.parsed`'s results, by key, already made (by the parse workers). */
  serialised: ReadonlyMap<string, string> = new Map(),
): void {
  const parsedDir = join(cacheDir, 'parsed');
  mkdirSync(parsedDir, { recursive: true });
  // Shards of another layout (an older version's 256) would stay behind for ever.
  if (rewriteAll)
    for (const name of readdirSync(parsedDir))
      if (!SHARD_NAMES.has(name)) rmSync(join(parsedDir, name), { force: true });
  const dirty = new Set<string>(rewriteAll ? SHARDS : []);
  for (const key of changedKeys) dirty.add(shardOf(key));
  for (const key of droppedKeys) dirty.add(shardOf(key));
  if (dirty.size > 0) {
    // Keys still referenced by a file, in the dirty shards only (the others are not rewritten).
    const referenced = new Map<string, Set<string>>([...dirty].sort().map((shard) => [shard, new Set()]));
    for (const [path, file] of cache.files) {
      const keys = referenced.get(shardOf(file.hash));
      const language = keys === undefined ? undefined : languageIdForFile(path);
      if (language !== undefined) keys?.add(parseKey(file.hash, language));
    }
    for (const [shard, keys] of referenced) writeShard(join(parsedDir, `${shard}.json`), cache, keys, serialised);
  }
  writeManifest(cacheDir, cache);
}

/** Writes the JSON of `{ [key]: storable(result) }` for `keys`, sorted. */
function writeShard(
  file: string,
  cache: IndexCache,
  keys: ReadonlySet<string>,
  serialised: ReadonlyMap<string, string>,
): void {
  writeAtomically(file, (out) => {
    out.write('{');
    let first = true;
    for (const key of [...keys].sort()) {
      let json = serialised.get(key);
      if (json === undefined) {
        const result = cache.parsed.get(key);
        if (result === undefined) continue;
        json = storableJson(result);
      }
      // The result's JSON apart from its key: one concatenation would copy it once more.
      out.write(`${first ? '' : ','}${JSON.stringify(key)}:`);
      out.write(json);
      first = false;
    }
    out.write('}');
  });
}

/**
 * The manifest's JSON entry of each cache entry (`"path":[hash,size,mtimeMs,lines]`), kept while
 * the entry lives: an update of a large tree serialises only the entries of the files it changed.
 */
const manifestEntries = new WeakMap<CachedFile, { path: string; json: string }>();

function writeManifest(cacheDir: string, cache: IndexCache): void {
  const entries: string[] = [];
  for (const [path, file] of cache.files) {
    let entry = manifestEntries.get(file);
    if (entry?.path !== path) {
      entry = {
        path,
        json: `${JSON.stringify(path)}:${JSON.stringify([file.hash, file.size, file.mtimeMs, file.lines])}`,
      };
      manifestEntries.set(file, entry);
    }
    entries.push(entry.json);
  }
  // The JSON of a `ManifestJson`, made from the entries' own JSON: one string (under a megabyte
  // for 6,000 files, written after every update), where a write per entry (a call into Node's
  // buffer code each) cost an update several milliseconds.
  writeAtomically(join(cacheDir, MANIFEST_FILE), (out) =>
    out.write(
      `{"version":${INDEX_VERSION},"writtenAt":${JSON.stringify(cache.writtenAt)},"files":{${entries.join(',')}}}`,
    ),
  );
}

/** A parse result as a cache shard holds it: JSON of `storable(result)`. */
export function storableJson(result: FileParseResult): string {
  // A result from an extractor has only its own fields: no copy needed (most of a cold build's).
  return JSON.stringify('path' in result ? storable(result) : result);
}

/** Only the parse result's own fields: results taken from an index also carry resolved imports. */
function storable(result: FileParseResult): FileParseResult {
  const { language, hasErrors, symbols, exports, calls, cliFlags } = result;
  const imports = result.imports.map(({ specifier, names, namespace, line, testOnly }) => {
    const stored: ImportRef =
      namespace === undefined ? { specifier, names, line } : { specifier, names, namespace, line };
    if (testOnly === true) stored.testOnly = true;
    return stored;
  });
  return { language, hasErrors, symbols, imports, exports, calls, cliFlags };
}

/**
 * The bytes of the cache files this thread writes, gathered before each write: one buffer
 * outside V8's heap, reused for every file (the files are written synchronously, one at a time),
 * so writing a cache of megabytes allocates no string or buffer of its own on the heap beyond the
 * JSON it writes.
 */
const WRITE_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** Text written to a file through `WRITE_BUFFER`. */
class PieceWriter {
  private used = 0;

  constructor(private readonly fd: number) {}

  write(text: string): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8.
    const most = text.length * 3;
    if (this.used + most > WRITE_BUFFER.length) {
      this.flush();
      // Longer than the buffer (one large file's results): written alone, converted outside the heap.
      if (most > WRITE_BUFFER.length) return writeAll(this.fd, text);
    }
    this.used += WRITE_BUFFER.write(text, this.used);
  }

  flush(): void {
    if (this.used === 0) return;
    writeAll(this.fd, WRITE_BUFFER.subarray(0, this.used));
    this.used = 0;
  }
}

function writeAll(fd: number, data: string | Buffer): void {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  // A write may be partial (a full disk, a signal): the rest follows, or the error.
  for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written);
}

/** Writes what `fill` writes to a temporary name, then renames it to `file`. */
function writeAtomically(file: string, fill: (out: PieceWriter) => void): void {
  const temporary = `${file}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    const out = new PieceWriter(fd);
    fill(out);
    out.flush();
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
}
