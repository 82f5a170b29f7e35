export { admitPatch, describeViolations } from './admission.js';
export type { Admission, AdmissionInput, Violation, ViolationKind } from './admission.js';
export { applyPatchAtomically, revertWorkingTree } from './apply.js';
export type { AppliedPatch } from './apply.js';
export { LOCKFILE_NAMES, isLockfile, pathEscapeReason } from './patch-paths.js';
export { applySearchReplace, parseSearchReplace } from './search-replace.js';
export type {
  ParsedSearchReplace,
  SearchReplaceBlock,
  SearchReplaceFailure,
  SearchReplaceFailureKind,
  SearchReplaceResult,
} from './search-replace.js';
export { locTouched, normaliseDiff, parseUnifiedDiff, patchFilePath, touchedFiles } from './unified-diff.js';
export type { ParsedPatch, PatchFile, PatchFileStatus, PatchHunk } from './unified-diff.js';
