import type { CodeIndex, IndexedFile } from '../code/index/types.js';
import { rankBm25, termsOf } from './lexical-rank.js';

/**
 * The `scope` retrieval stage (seed 004, R1-R2): which files of the repository a pass may need,
 * decided without a model call. Evidence, strongest first: the files a plan names (seeds), files
 * declaring a symbol the task or plan names, files whose path names a word of the task, the
 * import graph around those, and a BM25 ranking of the task text against each file's path,
 * symbol names, signatures and docs.
 */

export interface ScopeInput {
  /** The task, part or step description. */
  task: string;
  /** Repository-relative paths a plan names (affected or target files); they need not exist yet. */
  seeds: readonly string[];
  /** Symbol names a plan names (a step's target symbols). */
  symbols: readonly string[];
  index: CodeIndex;
  /** At most this many candidates (default 30). */
  maxCandidates?: number;
}

export interface ScopeCandidate {
  path: string;
  /** Relative strength of the evidence; only the order matters. */
  score: number;
  /** Why it is a candidate, for the precision prompt and the trace (`plan seed`, `declares applyDiscount`). */
  reasons: string[];
  /** Not in the index: a seed naming a file to create. */
  missing: boolean;
}

const SEED = 100;
const SYMBOL = 30;
const PATH = 12;
const TEST_OF_SEED = 10;
const NEIGHBOUR = 6;
/** The best BM25 match scores this much; the others in proportion. */
const LEXICAL = 10;
const DEFAULT_MAX_CANDIDATES = 30;

/** Identifiers as written in a text (`applyDiscount`, `tax_rate`), for exact symbol matches. */
function identifiersOf(text: string): Set<string> {
  return new Set(text.match(/[A-Za-z_$][A-Za-z0-9_$]{2,}/g) ?? []);
}

function lexicalText(file: IndexedFile): string {
  const symbols = file.symbols.map((symbol) => `${symbol.name} ${symbol.signature} ${symbol.doc ?? ''}`);
  return `${file.path.replace(/[/._-]/g, ' ')} ${symbols.join(' ')}`;
}

/** Candidate files for a pass, strongest evidence first (ties by path). */
export function scopeCandidates(input: ScopeInput): ScopeCandidate[] {
  const { index } = input;
  const byPath = new Map(index.files.map((file) => [file.path, file]));
  const found = new Map<string, ScopeCandidate>();
  const add = (path: string, score: number, reason: string): void => {
    const entry = found.get(path) ?? { path, score: 0, reasons: [], missing: !byPath.has(path) };
    entry.score += score;
    if (!entry.reasons.includes(reason)) entry.reasons.push(reason);
    found.set(path, entry);
  };

  for (const seed of input.seeds) add(seed, SEED, 'plan seed');

  const named = new Set([...identifiersOf(input.task), ...input.symbols]);
  const taskTerms = new Set(termsOf(input.task));
  for (const file of index.files) {
    for (const symbol of file.symbols) {
      if (named.has(symbol.name)) add(file.path, SYMBOL, `declares ${symbol.name}`);
    }
    const base = file.path.slice(file.path.lastIndexOf('/') + 1).replace(/\..*$/, '');
    const baseTerms = termsOf(base);
    if (baseTerms.length > 0 && baseTerms.every((term) => taskTerms.has(term))) add(file.path, PATH, 'path named');
  }

  // The import graph around the strong evidence: what those files import and who imports them
  // (their tests especially, which show how the code is meant to behave).
  const strong = [...found.values()].filter((candidate) => candidate.score >= PATH).map((candidate) => candidate.path);
  for (const path of strong) {
    for (const dependency of index.dependencies[path] ?? []) add(dependency, NEIGHBOUR, `imported by ${path}`);
    for (const dependent of index.dependents[path] ?? []) {
      const test = byPath.get(dependent)?.isTest === true;
      add(dependent, test ? TEST_OF_SEED : NEIGHBOUR, test ? `tests ${path}` : `imports ${path}`);
    }
  }

  const lexical = rankBm25(
    input.task,
    index.files.filter((file) => file.language !== null).map((file) => ({ id: file.path, text: lexicalText(file) })),
  );
  const best = lexical[0]?.score ?? 0;
  for (const { id, score } of lexical) add(id, (LEXICAL * score) / best, 'matches the task text');

  return [...found.values()]
    .sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .slice(0, input.maxCandidates ?? DEFAULT_MAX_CANDIDATES);
}
