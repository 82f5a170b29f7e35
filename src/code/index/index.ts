/** Public API of the code index (seed 002, section 10). */
export { writeIndexArtifacts, RISK_FORMULA } from './artifacts.js';
export type { IndexArtifacts } from './artifacts.js';
export { buildIndex } from './build-index.js';
export type { BuildIndexOptions } from './build-index.js';
export { buildCallGraph, callGraphOf } from './call-graph.js';
export { riskScore } from './risk.js';
export { summarizeIndex } from './summary.js';
export type { IndexSummary } from './summary.js';
export { isTestPath } from './test-files.js';
export { INDEX_VERSION } from './types.js';
export type {
  CallGraph,
  CallSite,
  CodeIndex,
  CodeSymbol,
  ExportEntry,
  FileParseResult,
  ImportRef,
  IndexStats,
  IndexedFile,
  ResolvedImport,
  RiskEntry,
  SymbolKind,
} from './types.js';
