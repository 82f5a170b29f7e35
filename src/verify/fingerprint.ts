import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { TEST_FILE_GLOBS } from '../core/test-file-globs.js';

/** Globs that find test files in the ecosystems Ratchet supports (the default `[test] patterns`). */
export const DEFAULT_TEST_GLOBS: readonly string[] = TEST_FILE_GLOBS;

/**
 * Always ignored: dependencies, VCS data, and what running or building the tests writes
 * (bytecode caches, build outputs). Otherwise running the suite would "change" test files.
 */
const ALWAYS_IGNORED = [
  '**/node_modules/**',
  '**/.git/**',
  '**/__pycache__/**',
  '**/*.pyc',
  '**/.pytest_cache/**',
  '**/.venv/**',
  '**/.ratchet/**',
  '**/dist/**',
  '**/build/**',
  '**/target/**',
  '**/coverage/**',
];

/** sha256 of each matching file's content, keyed by POSIX path relative to `root`, sorted. */
export async function fingerprintFiles(
  root: string,
  globs: readonly string[] = DEFAULT_TEST_GLOBS,
  ignore: readonly string[] = [],
): Promise<Record<string, string>> {
  const files = await glob([...globs], {
    cwd: root,
    ignore: [...ALWAYS_IGNORED, ...ignore],
    onlyFiles: true,
    dot: false,
    followSymbolicLinks: false,
  });
  const entries = await Promise.all(
    files.map(async (file): Promise<[string, string]> => {
      const content = await readFile(path.join(root, file));
      return [file.split(path.sep).join('/'), createHash('sha256').update(content).digest('hex')];
    }),
  );
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries);
}

export interface FingerprintDiff {
  changed: string[];
  added: string[];
  removed: string[];
}

/** What changed from fingerprints `a` to fingerprints `b` (each list sorted). */
export function diffFingerprints(a: Record<string, string>, b: Record<string, string>): FingerprintDiff {
  const changed: string[] = [];
  const added: string[] = [];
  const removed: string[] = [];
  for (const [file, hash] of Object.entries(b)) {
    const before = a[file];
    if (before === undefined) added.push(file);
    else if (before !== hash) changed.push(file);
  }
  for (const file of Object.keys(a)) if (b[file] === undefined) removed.push(file);
  return { changed: changed.sort(), added: added.sort(), removed: removed.sort() };
}
