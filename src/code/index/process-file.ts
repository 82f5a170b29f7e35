/**
 * One unit of indexing work: read a file once, hash it, and parse it unless its hash is the one
 * already known. Shared by the calling thread and the parse workers.
 */
import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { languageIdForFile } from '../tree-sitter.js';
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

/** Reads, hashes and (when needed) parses one file; undefined when it cannot be read. */
export async function processFile(
  extractor: SourceExtractor,
  root: string,
  work: FileWork,
  maxParseBytes: number,
): Promise<FileOutcome | undefined> {
  let content: Buffer;
  try {
    // Synchronous: parsing is CPU-bound anyway, and promise-based reads of thousands of small
    // files cost more in file-handle bookkeeping than the reads themselves.
    content = readFileSync(join(root, work.path));
  } catch {
    return undefined; // Deleted since listing, a directory, or unreadable: not part of the tree.
  }
  const base = { path: work.path, hash: hash('sha256', content), size: content.length, lines: countLines(content) };
  if (base.hash === work.knownHash) return { ...base, parse: 'unchanged' };
  if (languageIdForFile(work.path) === undefined || content.length > maxParseBytes || isBinary(content))
    return { ...base, parse: null };
  const parse = await extractor.extract(work.path, content.toString('utf8'));
  return { ...base, parse: parse ?? null };
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
