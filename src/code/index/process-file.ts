/**
 * One unit of indexing work: read a file once, hash it, and parse it unless its hash is the one
 * already known. Shared by the calling thread and the parse workers.
 */
import { hash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { extname } from 'node:path';
import { languageIdForFile } from '../tree-sitter.js';
import { LineTable } from './line-table.js';
import { pathUnderRoot } from './path-under-root.js';
import type { SourceExtractor } from './source-extractor.js';
import type { FileParseResult } from './types.js';

export interface FileWork {
  path: string;
  /** Hash from the cache: when the content still has it, the file is not parsed again. */
  knownHash?: string;
  /** Bytes when listed: the parse pool hands out the largest files first. */
  size?: number;
}

export interface FileOutcome {
  path: string;
  hash: string;
  size: number;
  lines: number;
  /** `unchanged`: the content hash equals `knownHash`; null: not parsed (unsupported, too large, binary). */
  parse: FileParseResult | null | 'unchanged';
  /**
   * The parse result already serialised as the cache stores it (`storableJson`), when it came from
   * a parse worker: saving the cache then only concatenates it.
   */
  stored?: string;
}

/**
 * Reads, hashes and (when needed) parses one file; undefined when it cannot be read. The outcome
 * comes without a promise when the parse needs nothing loaded (see `SourceExtractor.extractNow`).
 */
export function processFile(
  extractor: SourceExtractor,
  root: string,
  work: FileWork,
  maxParseBytes: number,
  /** Results parsed so far by this caller, by `sameParseKey`: a file identical to one of them is not parsed again. */
  parsedSoFar?: Map<string, FileParseResult>,
): FileOutcome | undefined | Promise<FileOutcome | undefined> {
  const content = readWhole(pathUnderRoot(root, work.path), work.size);
  if (content === undefined) return undefined; // Deleted since listing, a directory, or unreadable.
  // `content` is the shared read buffer: nothing below reads it after the text is made.
  const { path } = work;
  const digest = hash('sha256', content);
  const size = content.length;
  if (digest === work.knownHash) return { path, hash: digest, size, lines: countLines(content), parse: 'unchanged' };
  if (languageIdForFile(path) === undefined || size > maxParseBytes || isBinary(content))
    return { path, hash: digest, size, lines: countLines(content), parse: null };
  const sameParse = parsedSoFar === undefined ? undefined : sameParseKey(digest, path);
  const earlier = sameParse === undefined ? undefined : parsedSoFar?.get(sameParse);
  if (earlier !== undefined) return { path, hash: digest, size, lines: countLines(content), parse: earlier };
  // The text's line starts give both the file's line count and the extractor's line numbers: one
  // pass over the text instead of a second one over the bytes (a `\n` byte is a `\n` in the text).
  const text = content.toString('utf8');
  const lineTable = new LineTable(text);
  const lines = lineTable.count;
  const parse = extractor.extractNow(path, text, lineTable);
  const outcome = (result: FileParseResult | undefined): FileOutcome => {
    if (result !== undefined && sameParse !== undefined) parsedSoFar?.set(sameParse, result);
    return { path, hash: digest, size, lines, parse: result ?? null };
  };
  return parse instanceof Promise ? parse.then(outcome) : outcome(parse);
}

const DECLARATION_FILE = /\.d\.[cm]?ts$/;

/**
 * What a parse result depends on: the content and how the file's name makes it parsed (its
 * extension gives the language and, for oxc, the dialect and module kind; `.d.ts` files have no
 * calls). Files under `node_modules`-like trees are often copies of one another (one package's
 * files in several versions or bundles, vendored duplicates): 189 of the 6,000 files of the bench
 * corpus.
 */
function sameParseKey(hash: string, path: string): string {
  return `${hash}${extname(path).toLowerCase()}${DECLARATION_FILE.test(path) ? ':d' : ''}`;
}

/** Files up to this size are read into the shared buffer; larger ones (rare) into their own. */
const SHARED_READ_BYTES = 1024 * 1024;

/**
 * One buffer for the reads of this thread: thousands of `readFileSync` calls would each stat
 * the file and allocate a buffer outside V8's heap, whose external memory makes V8 collect
 * sooner (measured on a cold index of 6,000 files, see bench/index.ts).
 */
const readBuffer = Buffer.allocUnsafe(SHARED_READ_BYTES + 1);

/**
 * The bytes of the file at `path`, or undefined when it cannot be read (deleted since listing,
 * a directory, unreadable). A file of at most `SHARED_READ_BYTES` by the listing's size comes
 * back in the shared buffer, valid until the next read; a larger one, or one that grew past the
 * buffer since the listing, in a buffer of its own. Synchronous: parsing is CPU-bound anyway,
 * and promise-based reads of thousands of small files cost more in file-handle bookkeeping than
 * the reads themselves.
 */
function readWhole(path: string, listedSize: number | undefined): Buffer | undefined {
  try {
    if (listedSize === undefined || listedSize > SHARED_READ_BYTES) return readFileSync(path);
    const fd = openSync(path, 'r');
    let length = 0;
    try {
      // Until the end of the file (a read of nothing), or a short read that gave the listed size: a
      // regular file's read falls short only at its end, which spares the read that returns nothing.
      for (let read = -1; read !== 0 && length < readBuffer.length;) {
        const wanted = readBuffer.length - length;
        read = readSync(fd, readBuffer, length, wanted, null);
        length += read;
        if (read < wanted && length === listedSize) break;
      }
    } finally {
      closeSync(fd);
    }
    return length < readBuffer.length ? readBuffer.subarray(0, length) : readFileSync(path);
  } catch {
    return undefined;
  }
}

function countLines(content: Buffer): number {
  if (content.length === 0) return 0;
  let lines = 0;
  let index = content.indexOf(10);
  while (index !== -1) {
    lines++;
    index = content.indexOf(10, index + 1);
  }
  return content[content.length - 1] === 10 ? lines : lines + 1;
}

function isBinary(content: Buffer): boolean {
  return content.subarray(0, 8000).includes(0);
}
