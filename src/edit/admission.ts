import picomatch from 'picomatch';
import type { ApplyCheckResult } from '../git/types.js';
import { indexLineMode, modeKind } from './patch-modes.js';
import { isLockfile, normaliseDeclaredPath, pathEscapeReason } from './patch-paths.js';
import {
  locTouched,
  normaliseDiff,
  parseUnifiedDiff,
  patchFilePath,
  touchedFiles,
  type ParsedPatch,
  type PatchFile,
} from './unified-diff.js';

/** Everything `admitPatch` decides on; no IO except the `applyCheck` callback. */
export interface AdmissionInput {
  /** `patch_unified_diff` of the PatchResponse, as the model wrote it. */
  patchText: string;
  /** `touched_files` of the PatchResponse. */
  declaredFiles: readonly string[];
  /** The batch's `scope_globs` (picomatch, `dot: true`); an empty list allows nothing. */
  scopeGlobs: readonly string[];
  /** `scope_excludes`: globs no patch may touch even when in scope. */
  scopeExcludes: readonly string[];
  /**
   * The run's configured scope (`[refactor] scope_globs`), which a batch's `scopeGlobs` (the
   * planner's, a model's) may narrow but never widen: a file must match both. Absent: no bound.
   */
  configuredScope?: readonly string[];
  /** `diff_budget_loc`: the most added + deleted lines the patch may have. */
  diffBudgetLoc: number;
  /** Accept binary file changes. */
  allowBinary: boolean;
  /** Accept changes to dependency lockfiles (`LOCKFILE_NAMES`). */
  allowLockfiles: boolean;
  /**
   * Files that define how the project is verified (the test command, runner configuration, the
   * verifier settings): a patch that changed them could switch the verifier off and then pass it.
   */
  isVerifierFile?: (path: string) => boolean;
  /** `git apply --check` of the normalised patch in the target work tree (`Git.applyCheck`). */
  applyCheck: (patchText: string) => Promise<ApplyCheckResult>;
  /** Whether a (repository-relative, already checked) path is a symbolic link in the work tree. */
  isSymlink?: (path: string) => Promise<boolean>;
}

/**
 * A reason to refuse a patch. `message` is written for the model's retry prompt: it says what
 * was wrong and what to do instead.
 */
export type Violation =
  | { kind: 'empty-patch'; message: string }
  | { kind: 'unparseable'; message: string; problems: string[] }
  | { kind: 'path-escape'; message: string; file: string }
  | { kind: 'out-of-scope'; message: string; file: string; reason: 'not-in-scope' | 'excluded' }
  | { kind: 'undeclared-file'; message: string; file: string }
  | { kind: 'declared-not-touched'; message: string; file: string }
  | { kind: 'binary'; message: string; file: string }
  | { kind: 'special-file'; message: string; file: string }
  | { kind: 'lockfile'; message: string; file: string }
  | { kind: 'verifier-file'; message: string; file: string }
  | { kind: 'over-budget'; message: string; loc: number; budget: number }
  | { kind: 'does-not-apply'; message: string; output: string };

/**
 * Outcome of `admitPatch`. `warnings` holds `declared-not-touched` findings, which never block
 * a patch: models often list files they read or expected to change, and the diff (not the
 * declaration) is what gets applied, scope-checked and budgeted.
 */
export type Admission =
  | {
      admitted: true;
      patch: ParsedPatch;
      /** The patch as `git apply` accepts it (see `normaliseDiff`); apply this text. */
      patchText: string;
      /** Every path the patch touches (`touchedFiles`). */
      files: string[];
      /** Added + deleted lines (`locTouched`). */
      loc: number;
      warnings: Violation[];
    }
  | { admitted: false; violations: Violation[]; warnings: Violation[] };

/**
 * Seed 002 §17.1: decides whether a model's patch may be applied. Checks, in order: the patch
 * is non-empty and parses; no path escapes the work tree; every touched path (both sides of a
 * rename) matches `scopeGlobs` and `configuredScope`, and no `scopeExcludes`; every file section is declared in
 * `declaredFiles` (a rename counts as declared when either of its paths is); no binary files or
 * lockfiles unless allowed; no symbolic link or gitlink, whatever the spelling of the mode that
 * makes one, nor a change to a path that is a link now (`isSymlink`); no verifier file; added +
 * deleted lines within `diffBudgetLoc`; and finally
 * `git apply --check`. All violations found are returned together so one retry can fix them;
 * `applyCheck` is skipped when the patch is empty, unparseable or has path escapes.
 */
export async function admitPatch(input: AdmissionInput): Promise<Admission> {
  if (input.patchText.trim() === '') return reject([emptyPatch()], []);
  const patch = parseUnifiedDiff(input.patchText);
  if (patch.errors.length > 0) {
    return reject([{ kind: 'unparseable', message: unparseableMessage(patch.errors), problems: patch.errors }], []);
  }
  if (patch.files.length === 0) return reject([emptyPatch()], []);

  const files = touchedFiles(patch);
  const loc = locTouched(patch);
  const violations: Violation[] = [];
  const escapes = pathEscapes(files);
  violations.push(...escapes);
  const safeFiles = files.filter((file) => !escapes.some((escape) => escape.file === file));
  violations.push(...scopeViolations(safeFiles, input.scopeGlobs, input.scopeExcludes, input.configuredScope));

  const declared = new Set(input.declaredFiles.map(normaliseDeclaredPath).filter((path) => path !== ''));
  for (const file of patch.files) {
    const paths = [file.oldPath, file.newPath].filter((path): path is string => path !== null);
    if (!paths.some((path) => declared.has(path))) {
      const path = patchFilePath(file);
      violations.push({
        kind: 'undeclared-file',
        file: path,
        message: `The diff changes '${path}', which is missing from touched_files. List every file the diff changes in touched_files, or leave '${path}' out of the diff.`,
      });
    }
  }
  const warnings: Violation[] = [...declared]
    .filter((path) => !files.includes(path))
    .map((path) => ({
      kind: 'declared-not-touched' as const,
      file: path,
      message: `touched_files lists '${path}', but the diff does not change it. Remove it from touched_files, or add its change to the diff.`,
    }));

  for (const file of patch.files) {
    const path = patchFilePath(file);
    if (file.binary && !input.allowBinary) {
      violations.push({
        kind: 'binary',
        file: path,
        message: `The diff changes the binary file '${path}'; binary changes are not allowed here. Change only text files.`,
      });
    }
    // A symbolic link can lead anywhere (a user's key file, say) once merged; a gitlink pulls in
    // another repository. Patches make and change regular files only, however a mode is spelled.
    const special = specialFileViolation(file, path);
    if (special !== null) violations.push(special);
  }
  const { isSymlink } = input;
  if (isSymlink) {
    for (const file of patch.files) {
      // Without a mode line, a patch to a link's path rewrites where the link points.
      if (file.oldPath === null || !safeFiles.includes(file.oldPath) || !(await isSymlink(file.oldPath))) continue;
      if (violations.some((violation) => violation.kind === 'special-file' && violation.file === patchFilePath(file)))
        continue;
      violations.push({
        kind: 'special-file',
        file: file.oldPath,
        message: `'${file.oldPath}' is a symbolic link; patches may not change symbolic links (their target is their content). Leave '${file.oldPath}' out of the diff.`,
      });
    }
  }
  if (!input.allowLockfiles) {
    for (const path of safeFiles.filter(isLockfile)) {
      violations.push({
        kind: 'lockfile',
        file: path,
        message: `The diff changes the lockfile '${path}'; lockfiles are not edited by hand here. Leave '${path}' unchanged.`,
      });
    }
  }
  const { isVerifierFile } = input;
  if (isVerifierFile) {
    for (const path of safeFiles.filter((file) => isVerifierFile(file))) {
      violations.push({
        kind: 'verifier-file',
        file: path,
        message: `The diff changes '${path}', which defines how the project is verified (test command or test configuration); a refactoring may not change it. Leave '${path}' unchanged.`,
      });
    }
  }
  if (loc > input.diffBudgetLoc) violations.push(overBudget(patch, loc, input.diffBudgetLoc));

  const patchText = normaliseDiff(patch);
  if (escapes.length === 0) {
    const check = await input.applyCheck(patchText);
    if (!check.ok) {
      violations.push({
        kind: 'does-not-apply',
        output: check.error,
        message: `The diff does not apply to the current files (git apply --check):\n${check.error}\nRe-read the files and make every context and '-' line match them exactly, including whitespace.`,
      });
    }
  }
  if (violations.length > 0) return reject(violations, warnings);
  return { admitted: true, patch, patchText, files, loc, warnings };
}

/** The violations as one text for the model's retry prompt, one bullet each. */
export function describeViolations(violations: readonly Violation[]): string {
  return violations.map((violation) => `- ${violation.message.replaceAll('\n', '\n  ')}`).join('\n');
}

function reject(violations: Violation[], warnings: Violation[]): Admission {
  return { admitted: false, violations, warnings };
}

function emptyPatch(): Violation {
  return {
    kind: 'empty-patch',
    message:
      "patch_unified_diff contains no file changes. Put the change in patch_unified_diff as a unified diff ('--- a/<path>', '+++ b/<path>', '@@' hunks), or answer with status \"noop\" when nothing should change.",
  };
}

function unparseableMessage(errors: readonly string[]): string {
  return `patch_unified_diff could not be read as a unified diff:\n${errors.map((error) => `- ${error}`).join('\n')}\nWrite a plain unified diff as 'git diff' prints it: a '--- a/<path>' and '+++ b/<path>' line per file, then '@@ -start,count +start,count @@' hunks whose lines start with ' ', '+' or '-'.`;
}

/**
 * The first mode a file section states (new file, old, new, deleted, or its `index` line's) that
 * is not a regular file's, judged by its octal value (`modeKind`): `0120000` and `120777` make a
 * symbolic link as surely as `120000` does.
 */
function specialFileViolation(file: PatchFile, path: string): Violation | null {
  const stated = [file.newMode, file.oldMode, file.indexLine === null ? null : indexLineMode(file.indexLine)];
  for (const mode of stated) {
    if (mode === null) continue;
    const kind = modeKind(mode);
    if (kind === 'regular') continue;
    const what =
      kind === 'symbolic link'
        ? `a symbolic link (mode ${mode})`
        : kind === 'gitlink'
          ? `a submodule (gitlink, mode ${mode})`
          : kind === 'unreadable'
            ? `a file of the unreadable mode '${mode}'`
            : `a special file (mode ${mode})`;
    return {
      kind: 'special-file',
      file: path,
      message: `The diff makes '${path}' ${what}; only regular files (mode 100644 or 100755) may be changed here. Write '${path}' as a regular file, or leave it out.`,
    };
  }
  return null;
}

function pathEscapes(files: readonly string[]): Array<Extract<Violation, { kind: 'path-escape' }>> {
  const result: Array<Extract<Violation, { kind: 'path-escape' }>> = [];
  for (const file of files) {
    const reason = pathEscapeReason(file);
    if (reason !== null) {
      result.push({
        kind: 'path-escape',
        file,
        message: `The diff touches '${file}', but ${reason}. Use paths relative to the repository root, inside it and outside '.git'.`,
      });
    }
  }
  return result;
}

function scopeViolations(
  files: readonly string[],
  scopeGlobs: readonly string[],
  scopeExcludes: readonly string[],
  configuredScope: readonly string[] | undefined,
): Violation[] {
  const inScope = scopeGlobs.length === 0 ? () => false : picomatch([...scopeGlobs], { dot: true });
  const inConfigured =
    configuredScope === undefined
      ? () => true
      : configuredScope.length === 0
        ? () => false
        : picomatch([...configuredScope], { dot: true });
  const excluded = scopeExcludes.length === 0 ? () => false : picomatch([...scopeExcludes], { dot: true });
  const scopeText = scopeGlobs.length === 0 ? '(no files)' : scopeGlobs.map((glob) => `'${glob}'`).join(', ');
  const result: Violation[] = [];
  for (const file of files) {
    if (!inScope(file)) {
      result.push({
        kind: 'out-of-scope',
        file,
        reason: 'not-in-scope',
        message: `'${file}' is outside this batch's scope ${scopeText}. Change only files matching the scope.`,
      });
    } else if (!inConfigured(file)) {
      result.push({
        kind: 'out-of-scope',
        file,
        reason: 'not-in-scope',
        message: `'${file}' is outside the run's configured scope ${(configuredScope ?? []).map((glob) => `'${glob}'`).join(', ') || '(no files)'}, which no batch can widen. Leave it out of the diff.`,
      });
    } else if (excluded(file)) {
      const patterns = scopeExcludes.filter((glob) => picomatch.isMatch(file, glob, { dot: true }));
      result.push({
        kind: 'out-of-scope',
        file,
        reason: 'excluded',
        message: `'${file}' matches the excluded pattern ${patterns.map((glob) => `'${glob}'`).join(', ')} and may not be changed. Leave it out of the diff.`,
      });
    }
  }
  return result;
}

function overBudget(patch: ParsedPatch, loc: number, budget: number): Violation {
  const largest = patch.files
    .map((file) => ({ path: patchFilePath(file), loc: file.added + file.deleted }))
    .sort((a, b) => b.loc - a.loc)
    .slice(0, 5)
    .map((file) => `${file.path} (${file.loc})`)
    .join(', ');
  return {
    kind: 'over-budget',
    loc,
    budget,
    message: `The diff touches ${loc} lines (added + deleted), over this batch's budget of ${budget}. Make a smaller change that still reaches the goal, or do part of it and leave the rest for a later batch. Largest files: ${largest}.`,
  };
}
