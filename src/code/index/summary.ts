/** The short summary `ratchet index --json` prints. */
import { callGraphOf, countCallEdges } from './call-graph.js';
import type { CodeIndex } from './types.js';

export interface IndexSummary {
  root: string;
  /** Every listed file. */
  files: number;
  /** Files in a supported language, tests included. */
  sourceFiles: number;
  testFiles: number;
  /** Supported language -> number of files. */
  languages: Record<string, number>;
  symbols: number;
  exportedSymbols: number;
  /** File -> file import edges inside the repository. */
  importEdges: number;
  /** Resolved caller -> callee edges of the best-effort call graph. */
  callEdges: number;
  parsed: number;
  reused: number;
  removed: number;
  durationMs: number;
  git: boolean;
  /** The riskiest files of the risk register (at most five), riskiest first. */
  riskiest: Array<{ path: string; score: number }>;
}

export function summarizeIndex(index: CodeIndex): IndexSummary {
  const languages: Record<string, number> = {};
  let sourceFiles = 0;
  let testFiles = 0;
  let symbols = 0;
  let exportedSymbols = 0;
  for (const file of index.files) {
    if (file.language === null) continue;
    sourceFiles++;
    if (file.isTest) testFiles++;
    languages[file.language] = (languages[file.language] ?? 0) + 1;
    symbols += file.symbols.length;
    for (const symbol of file.symbols) if (symbol.exported) exportedSymbols++;
  }
  let importEdges = 0;
  for (const targets of Object.values(index.dependencies)) importEdges += targets.length;
  return {
    root: index.root,
    files: index.files.length,
    sourceFiles,
    testFiles,
    languages: Object.fromEntries(Object.entries(languages).sort(([a], [b]) => (a < b ? -1 : 1))),
    symbols,
    exportedSymbols,
    importEdges,
    callEdges: countCallEdges(callGraphOf(index)),
    parsed: index.stats.parsed,
    reused: index.stats.reused,
    removed: index.stats.removed,
    durationMs: index.stats.durationMs,
    git: index.git,
    // The register is sorted, riskiest first.
    riskiest: index.risk.slice(0, 5).map(({ path, score }) => ({ path, score })),
  };
}
