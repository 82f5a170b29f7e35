/** Public API of the code layer: tree-sitter parsing, size metrics and the refactor checker. */
export {
  LANGUAGE_IDS,
  grammarWasmPath,
  initTreeSitter,
  languageForFile,
  languageIdForFile,
  loadLanguage,
  parseFile,
} from "./tree-sitter.js";
export type { LanguageId, ParsedFile } from "./tree-sitter.js";
export { countLines, measureCode } from "./metrics.js";
export type { ClassMetric, CodeMetrics, FunctionMetric } from "./metrics.js";
export {
  DEFAULT_REFACTOR_CHECK_CONFIG,
  checkNeedsRefactor,
  refactorReasons,
} from "./size-check.js";
export type { RefactorCheck, RefactorCheckConfig } from "./size-check.js";
