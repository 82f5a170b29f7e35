import picomatch from 'picomatch';
import type { FileRole } from '../../code/file-role.js';
import { refactorFindingKind, type RefactorFindingKind } from '../../code/size-check.js';
import { goalFocuses, type GoalFocus } from './plan-goal.js';
import type { PlannedBatch, PlannerResponse } from './schemas.js';

/** What the heuristic planner knows about one file (from the code index and the size checker). */
export interface FileFacts {
  path: string;
  language: string | null;
  lines: number;
  /** Files importing this one. */
  fanIn: number;
  /** Commits touching it recently. */
  churn: number;
  hasTest: boolean;
  /** 0-100, from the risk register. */
  risk: number;
  /** Size-checker findings (long file, long functions, big classes). */
  sizeReasons: string[];
  /** Module-private symbols nothing references (dead-code candidates). */
  unusedPrivateSymbols: string[];
  /** Only code gets batches: never a test, a contract (stub, declarations, types only) or scaffolding. */
  role: FileRole;
}

export interface PlanBounds {
  maxBatches: number;
  /** A formatter is configured: the plan may (heuristic: does) start with a formatting-only batch. */
  formatting?: boolean;
  diffBudgetLoc: number;
  /** The configured scope (`scope_globs`): what any batch may change at most. */
  scopeGlobs: string[];
  scopeExcludes: string[];
  /** Every file of the index: a planned batch must match at least one. */
  files: string[];
  /**
   * Directories no verifier command tests (a nested Go module that `go test ./...` stops at, see
   * `untestedGoModulesOf`): a change there would pass every gate untested, so no batch goes there.
   */
  untestedDirs?: readonly string[];
  /**
   * Files no patch may change (those that define verification, see `verificationFileMatcher` in verify/verification-files.ts): a
   * batch scoped only to them could never land, so none is planned.
   */
  isProtected?: (path: string) => boolean;
  /**
   * The heuristic plan the planner refines (seed 002, 11.3: it "cannot invent unbounded tasks"):
   * when given, no planner batch may cover more files than the largest heuristic batch, or than
   * `MIN_PLANNER_FILES` (a planner may group a few small files): no `**` over the repository.
   */
  heuristic?: PlannedBatch[];
}

/**
 * Seed 002, 11.2: batches are ordered so that the least risky kinds of change come first. The
 * formatting-only pass, when a formatter is configured, comes before all of them (see
 * `FORMAT_OPERATION`).
 */
const CATEGORY_ORDER = ['import-cleanup', 'small-extracts', 'tests', 'restructure'] as const;
type BatchCategory = (typeof CATEGORY_ORDER)[number];

const OPERATIONS: Record<BatchCategory, string[]> = {
  'import-cleanup': ['remove-unused-imports', 'remove-dead-code'],
  'small-extracts': ['rename', 'extract-function', 'split-module'],
  tests: ['add-tests', 'strengthen-tests'],
  restructure: ['extract-class', 'move-code', 'split-module'],
};

/**
 * The operation of a formatting-only batch (seed 002, 11.2 step 1 and 17.3): the configured
 * formatter runs instead of the patcher, and only formatting-only changes within scope are kept.
 */
export const FORMAT_OPERATION = 'format';

export function isFormatBatch(batch: Pick<PlannedBatch, 'allowed_operations'>): boolean {
  return batch.allowed_operations.includes(FORMAT_OPERATION);
}

function formatBatch(diffBudgetLoc: number): Omit<PlannedBatch, 'id'> {
  return {
    goal: 'Format the code with the configured formatter (formatting-only)',
    scope_globs: ['**'],
    allowed_operations: [FORMAT_OPERATION],
    diff_budget_loc: diffBudgetLoc,
    risk_score: 0,
    verifier_level: 'fast',
    notes: 'Runs the formatter commands; keeps only in-scope files whose syntax is unchanged.',
  };
}

/**
 * Where a test for `path` may live, by the usual conventions (a tests batch may create it); a
 * private Python module's test drops its leading underscores (`_funcs.py`: `test_funcs.py`).
 */
export function testGlobsFor(path: string): string[] {
  const name = path.split('/').pop() ?? path;
  const stem = name.replace(/\.[^.]+$/, '');
  const bare = stem.replace(/^_+(?=[^_])/, '');
  return [`**/${stem}.test.*`, `**/${stem}.spec.*`, `**/test_${bare}.py`, `**/${bare}_test.*`, `**/${stem}Test.*`];
}

function batchId(index: number): string {
  return `batch-${String(index + 1).padStart(3, '0')}`;
}

interface Candidate {
  /** Decides the batch's place in the plan (`CATEGORY_ORDER`). */
  category: BatchCategory;
  operations: string[];
  /** The scope includes where the file's tests may live (`testGlobsFor`). */
  withTests: boolean;
  file: FileFacts;
  goal: string;
  notes: string;
}

function candidate(category: BatchCategory, file: FileFacts, goal: string, notes: string): Candidate {
  return { category, operations: OPERATIONS[category], withTests: category === 'tests', file, goal, notes };
}

/**
 * Functions the language's runtime calls by name, which no call site in the repository names:
 * Go's `main` and `init`, Rust's `main`. They are never dead code, however unreferenced.
 */
const ENTRY_POINTS: Readonly<Record<string, readonly string[]>> = {
  go: ['main', 'init'],
  rust: ['main'],
};

/**
 * Unreferenced functions that are dead code: not the runtime's entry points, and in Rust not a
 * name with a leading underscore (the language's mark of "unused on purpose", such as a
 * compile-time check `fn _is_object_safe(_: &dyn Trait) {}`).
 */
function deadCodeOf(file: FileFacts): string[] {
  const entryPoints = ENTRY_POINTS[file.language ?? ''] ?? [];
  return file.unusedPrivateSymbols.filter(
    (name) => !entryPoints.includes(name) && !(file.language === 'rust' && name.startsWith('_')),
  );
}

function sizeFindings(file: FileFacts, kinds: readonly RefactorFindingKind[]): string[] {
  return file.sizeReasons.filter((reason) => kinds.includes(refactorFindingKind(reason)));
}

function candidatesFor(file: FileFacts, goal: string | null): Candidate[] {
  if (file.role !== 'code') return [];
  if (goal !== null) return goalCandidates(file, goal);
  const found: Candidate[] = [];
  const dead = deadCodeOf(file);
  if (dead.length > 0)
    found.push(
      candidate('import-cleanup', file, `Remove dead code in ${file.path}`, `unreferenced: ${dead.join(', ')}`),
    );
  const small = sizeFindings(file, ['long-file', 'long-function']);
  if (small.length > 0)
    found.push(candidate('small-extracts', file, `Split long code in ${file.path}`, small.join('; ')));
  if (!file.hasTest && file.fanIn > 0)
    found.push(
      candidate(
        'tests',
        file,
        `Add tests for ${file.path}`,
        `${file.fanIn} ${file.fanIn === 1 ? 'file depends' : 'files depend'} on it and no test covers it by convention`,
      ),
    );
  const structural = sizeFindings(file, ['big-class']);
  if (structural.length > 0)
    found.push(candidate('restructure', file, `Restructure ${file.path}`, structural.join('; ')));
  return found;
}

const FOCUS_CATEGORY: Readonly<Record<GoalFocus, BatchCategory>> = {
  'dead-code': 'import-cleanup',
  tests: 'tests',
  'long-functions': 'small-extracts',
  'long-files': 'small-extracts',
  size: 'small-extracts',
  'big-classes': 'restructure',
};

/** What a focus of the goal finds in a file (the batch's notes), or null when it does not apply there. */
function focusFindings(file: FileFacts, focus: GoalFocus): string[] | null {
  const found = (findings: string[]): string[] | null => (findings.length > 0 ? findings : null);
  switch (focus) {
    case 'dead-code': {
      const dead = deadCodeOf(file);
      return dead.length > 0 ? [`unreferenced: ${dead.join(', ')}`] : null;
    }
    case 'tests':
      return file.hasTest ? null : ['no test covers it by convention'];
    case 'long-functions':
      return found(sizeFindings(file, ['long-function']));
    case 'long-files':
      return found(sizeFindings(file, ['long-file']));
    case 'big-classes':
      return found(sizeFindings(file, ['big-class']));
    case 'size':
      return found(file.sizeReasons);
  }
}

/**
 * Why a batch without a finding is planned (a goal about something the index does not check
 * plans one in every file of code): where its risk puts it, so the plan never shows a bare batch.
 */
function unfoundReason(file: FileFacts): string {
  const dependents = `${file.fanIn} ${file.fanIn === 1 ? 'file depends' : 'files depend'} on it`;
  const commits = `${file.churn} recent ${file.churn === 1 ? 'commit' : 'commits'}`;
  return `no finding: the goal is about nothing the index checks, so every file of code in scope gets a batch, least risky first (risk ${file.risk}: ${dependents}, ${commits}, ${file.hasTest ? 'tested' : 'no test'})`;
}

/**
 * The batch a goal plans in a file: one where the goal applies (see `goalFocuses`), with the
 * operations of every focus that applies and the findings as notes; for a goal about something
 * else, one in every file of code.
 */
function goalCandidates(file: FileFacts, goal: string): Candidate[] {
  const text = `${goal} (in ${file.path})`;
  const focuses = goalFocuses(goal);
  if (focuses.length === 0)
    return [candidate('small-extracts', file, text, file.sizeReasons.join('; ') || unfoundReason(file))];
  const applying = focuses.flatMap((focus) => {
    const findings = focusFindings(file, focus);
    return findings === null ? [] : [{ category: FOCUS_CATEGORY[focus], findings }];
  });
  if (applying.length === 0) return [];
  const categories = CATEGORY_ORDER.filter((category) => applying.some((entry) => entry.category === category));
  return [
    {
      category: categories[0] ?? 'small-extracts',
      operations: [...new Set(categories.flatMap((category) => OPERATIONS[category]))],
      withTests: categories.includes('tests'),
      file,
      goal: text,
      notes: [...new Set(applying.flatMap((entry) => entry.findings))].join('; '),
    },
  ];
}

/**
 * The naive plan (seed 002, 11.3): one batch per finding, risk-limiting order (category, then
 * risk, then path), each scoped to one file of code (`FileFacts.role`); with a goal, one batch
 * per file the goal applies to (see `goalCandidates`). Pure: every input is a parameter.
 */
export function heuristicPlan(
  files: FileFacts[],
  options: { goal: string | null; bounds: PlanBounds },
): PlannedBatch[] {
  const mayChange = changeableMatcher(options.bounds);
  const candidates = files.filter((file) => mayChange(file.path)).flatMap((file) => candidatesFor(file, options.goal));
  candidates.sort(
    (a, b) =>
      CATEGORY_ORDER.indexOf(a.category) - CATEGORY_ORDER.indexOf(b.category) ||
      a.file.risk - b.file.risk ||
      a.file.path.localeCompare(b.file.path),
  );
  const batches: Omit<PlannedBatch, 'id'>[] =
    options.bounds.formatting === true ? [formatBatch(options.bounds.diffBudgetLoc)] : [];
  for (const candidate of candidates) {
    batches.push({
      goal: candidate.goal,
      scope_globs: candidate.withTests
        ? [candidate.file.path, ...testGlobsFor(candidate.file.path)]
        : [candidate.file.path],
      allowed_operations: candidate.operations,
      diff_budget_loc: options.bounds.diffBudgetLoc,
      risk_score: candidate.file.risk,
      verifier_level: candidate.file.risk >= 60 ? 'full' : 'fast',
      notes: candidate.notes,
    });
  }
  return batches.slice(0, options.bounds.maxBatches).map((batch, index) => ({ id: batchId(index), ...batch }));
}

/**
 * Whether a file is one any batch may change: in the configured scope, not excluded, not
 * protected (a verifier file).
 */
function changeableMatcher(bounds: PlanBounds): (path: string) => boolean {
  const inScope = picomatch(bounds.scopeGlobs, { dot: true });
  const isExcluded = picomatch(bounds.scopeExcludes.length > 0 ? bounds.scopeExcludes : ['\0'], { dot: true });
  const untested = (bounds.untestedDirs ?? []).map((dir) => `${dir}/`);
  return (path) =>
    inScope(path) &&
    !isExcluded(path) &&
    bounds.isProtected?.(path) !== true &&
    !untested.some((dir) => path.startsWith(dir));
}

/** Files a planner batch may always cover, whatever the heuristic batches look like. */
const MIN_PLANNER_FILES = 3;

/** The most files a planner batch may cover: as many as the largest heuristic batch, at least a few. */
function largestBatch(heuristic: readonly PlannedBatch[], eligible: readonly string[]): number {
  let largest = MIN_PLANNER_FILES;
  for (const batch of heuristic) {
    const matcher = picomatch(batch.scope_globs, { dot: true });
    largest = Math.max(largest, eligible.filter((file) => matcher(file)).length);
  }
  return largest;
}

/**
 * The planner's refinement, kept within bounds (seed 002, 11.3: it cannot invent unbounded
 * tasks): batches whose scope matches no indexed file in the configured scope, or only excluded
 * or protected files, are dropped; budgets are clamped; ids are renumbered; the count is capped.
 * A batch's scope only ever narrows the configured one: admission checks a patch against both.
 * Returns the problems too, so the caller can report them. An empty result means the heuristic
 * plan stands.
 */
export function boundPlannerBatches(
  response: PlannerResponse,
  bounds: PlanBounds,
): { batches: PlannedBatch[]; dropped: string[] } {
  const eligible = bounds.files.filter(changeableMatcher(bounds));
  const dropped: string[] = [];
  const kept: PlannedBatch[] = [];
  const maxFiles =
    bounds.heuristic === undefined
      ? null
      : largestBatch(
          bounds.heuristic.filter((batch) => !isFormatBatch(batch)),
          eligible,
        );
  // Formatting comes first (11.2), and only when there is a formatter to run.
  const ordered = [
    ...response.batches.filter(isFormatBatch),
    ...response.batches.filter((batch) => !isFormatBatch(batch)),
  ];
  for (const batch of ordered) {
    if (isFormatBatch(batch) && bounds.formatting !== true) {
      dropped.push(`${batch.id}: a formatting batch, but no formatter is configured (refactor.formatter)`);
      continue;
    }
    const matcher = picomatch(batch.scope_globs, { dot: true });
    if (!eligible.some((file) => matcher(file))) {
      dropped.push(`${batch.id}: scope ${batch.scope_globs.join(', ')} matches no file a patch may change`);
      continue;
    }
    if (maxFiles !== null && !isFormatBatch(batch)) {
      const matched = eligible.filter((file) => matcher(file)).length;
      if (matched > maxFiles) {
        dropped.push(
          `${batch.id}: scope ${batch.scope_globs.join(', ')} covers ${matched} files; a batch covers at most ${maxFiles}`,
        );
        continue;
      }
    }
    if (kept.length >= bounds.maxBatches) {
      dropped.push(`${batch.id}: over max_batches (${bounds.maxBatches})`);
      continue;
    }
    kept.push({
      ...batch,
      diff_budget_loc: Math.min(batch.diff_budget_loc, bounds.diffBudgetLoc),
      // The plan says why each batch is there; the planner's own note, when it wrote one.
      notes: batch.notes?.trim() ? batch.notes : 'no finding: the planner model chose this scope without a note',
    });
  }
  return { batches: kept.map((batch, index) => ({ ...batch, id: batchId(index) })), dropped };
}
