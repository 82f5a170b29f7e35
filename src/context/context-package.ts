import type { CodeIndex, IndexedFile } from '../code/index/types.js';
import { estimateTokens } from './token-estimate.js';
import type { ScopeCandidate } from './retrieval-scope.js';

/**
 * The context of one solve pass (seed 004's ContextPackage): the few most relevant files whole
 * (the model quotes them exactly in its edits), the signatures of the others, within a token
 * budget. It is built afresh for every pass, from the worktree as it is then.
 */
export interface ContextPackage {
  /** The retrieval stages that ran. */
  stages: RetrievalStage[];
  /** How many candidates the scope stage found. */
  candidates: number;
  files: PackagedFile[];
  /** Candidates left out because the budget was spent. */
  omitted: string[];
  /** Estimated tokens of `renderContextPackage(package)`. */
  tokens: number;
}

export type RetrievalStage = 'scope' | 'precision';

interface PackagedFile {
  path: string;
  mode: 'full' | 'signatures' | 'missing';
  /** The whole text (`full`), an outline (`signatures`), or empty (`missing`: a file to create). */
  text: string;
  /** 0-3: the precision grade, or derived from the scope order when precision did not run. */
  relevance: number;
  reasons: string[];
}

/** A candidate with its relevance, as the stages leave it: best first. */
export interface RankedCandidate extends ScopeCandidate {
  /** 3: read or change it whole; 2: relevant; 1: its signatures help; 0: irrelevant (dropped). */
  relevance: number;
}

export interface AssembleInput {
  ranked: readonly RankedCandidate[];
  stages: RetrievalStage[];
  index: CodeIndex;
  readText: (path: string) => Promise<string | null>;
  /** Tokens the rendered package may take. */
  budgetTokens: number;
  /** At most this many files whole (default 3). */
  maxFullFiles?: number;
}

const DEFAULT_MAX_FULL_FILES = 3;
/** Symbols per outline: enough for a module's API, not a dump of a large file. */
const MAX_OUTLINE_SYMBOLS = 40;

/** A file's declarations, one per line (`12: export function applyDiscount(order, rate)`). */
export function outlineOf(file: IndexedFile | undefined): string {
  if (file === undefined || file.symbols.length === 0) return '(no declarations indexed)';
  return file.symbols
    .slice(0, MAX_OUTLINE_SYMBOLS)
    .map((symbol) => `${symbol.startLine}: ${symbol.exported ? 'export ' : ''}${symbol.signature}`)
    .join('\n');
}

function renderFile(file: PackagedFile): string {
  if (file.mode === 'missing') return `### ${file.path} (does not exist yet)`;
  if (file.mode === 'signatures') return `### ${file.path} (signatures only)\n${file.text}`;
  return `### ${file.path}\n\`\`\`\n${file.text}${file.text.endsWith('\n') ? '' : '\n'}\`\`\``;
}

/** The package as prompt text (seed 004's `to_prompt_text`). */
export function renderContextPackage(pkg: Pick<ContextPackage, 'files' | 'omitted'>): string {
  const parts = pkg.files.map(renderFile);
  if (pkg.omitted.length > 0) parts.push(`(Left out for lack of room: ${pkg.omitted.join(', ')})`);
  return `<context>\n${parts.join('\n\n')}\n</context>`;
}

/**
 * Fills the package in rank order: whole text for the first `maxFullFiles` files graded 2 or 3
 * that fit, signatures for the others graded 1 or more, until the budget is spent. A file too
 * large to go whole falls back to its signatures; what fits in neither way is listed as omitted.
 */
export async function assembleContextPackage(input: AssembleInput): Promise<ContextPackage> {
  const maxFull = input.maxFullFiles ?? DEFAULT_MAX_FULL_FILES;
  const byPath = new Map(input.index.files.map((file) => [file.path, file]));
  const files: PackagedFile[] = [];
  const omitted: string[] = [];
  // The wrapper and the omission note are counted up front, so adding files never overshoots.
  let used = estimateTokens(renderContextPackage({ files: [], omitted: [] })) + 64;
  let full = 0;
  const fits = (file: PackagedFile): boolean => {
    const cost = estimateTokens(renderFile(file)) + 1;
    if (used + cost > input.budgetTokens) return false;
    used += cost;
    files.push(file);
    return true;
  };
  for (const candidate of input.ranked) {
    if (candidate.relevance <= 0) continue;
    const base = { path: candidate.path, relevance: candidate.relevance, reasons: candidate.reasons };
    if (candidate.missing) {
      if (!fits({ ...base, mode: 'missing', text: '' })) omitted.push(candidate.path);
      continue;
    }
    if (candidate.relevance >= 2 && full < maxFull) {
      const text = await input.readText(candidate.path);
      if (text !== null && fits({ ...base, mode: 'full', text })) {
        full += 1;
        continue;
      }
    }
    if (!fits({ ...base, mode: 'signatures', text: outlineOf(byPath.get(candidate.path)) }))
      omitted.push(candidate.path);
  }
  const pkg = { stages: input.stages, candidates: input.ranked.length, files, omitted };
  return { ...pkg, tokens: estimateTokens(renderContextPackage(pkg)) };
}
