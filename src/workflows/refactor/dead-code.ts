import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CodeIndex } from '../../code/index/types.js';
import { escapeRegExp } from '../../core/regexp.js';

/**
 * The top-level functions of each file that nothing uses, for the planner's "Remove dead code"
 * batches: not exported, not a test (the harness calls a Rust `#[test]` function by its
 * attribute), called nowhere in the index, and named nowhere else in the indexed
 * files' text. The call graph misses a function passed as a value (`xs.map(format)`, a
 * callback, a dict of handlers, Go's `return cb`) and a call inside a Rust macro; a name that
 * appears anywhere but its one definition (a comment included) counts as used, so a batch is
 * never planned to delete code that runs. Files the index could not read count as using nothing.
 */
export async function deadFunctions(index: CodeIndex, root: string): Promise<Map<string, string[]>> {
  const called = new Set(
    index.files.flatMap((file) => file.calls.map((call) => call.callee.split('.').pop() ?? call.callee)),
  );
  const candidates = new Map<string, string[]>();
  for (const file of index.files) {
    const names = file.symbols
      .filter(
        (symbol) =>
          !symbol.exported &&
          symbol.container === undefined &&
          symbol.kind === 'function' &&
          symbol.test !== true &&
          !called.has(symbol.name),
      )
      .map((symbol) => symbol.name);
    if (names.length > 0) candidates.set(file.path, names);
  }
  if (candidates.size === 0) return candidates;
  const names = [...new Set([...candidates.values()].flat())];
  // One pass over the sources counts every candidate's occurrences as a whole word.
  const pattern = new RegExp(`(?<![\\w$])(?:${names.map(escapeRegExp).join('|')})(?![\\w$])`, 'g');
  const occurrences = new Map<string, number>();
  for (const file of index.files) {
    if (file.language === null) continue;
    let text: string;
    try {
      text = await readFile(join(root, file.path), 'utf8');
    } catch {
      continue;
    }
    for (const match of text.matchAll(pattern)) occurrences.set(match[0], (occurrences.get(match[0]) ?? 0) + 1);
  }
  const dead = new Map<string, string[]>();
  for (const [path, fileNames] of candidates) {
    const unused = fileNames.filter((name) => (occurrences.get(name) ?? 0) <= 1);
    if (unused.length > 0) dead.set(path, unused);
  }
  return dead;
}
