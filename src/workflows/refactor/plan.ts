import picomatch from 'picomatch';
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
  isTest: boolean;
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

/** Where a test for `path` may live, by the usual conventions (a tests batch may create it). */
export function testGlobsFor(path: string): string[] {
  const name = path.split('/').pop() ?? path;
  const stem = name.replace(/\.[^.]+$/, '');
  return [`**/${stem}.test.*`, `**/${stem}.spec.*`, `**/test_${stem}.py`, `**/${stem}_test.*`, `**/${stem}Test.*`];
}

function batchId(index: number): string {
  return `batch-${String(index + 1).padStart(3, '0')}`;
}

interface Candidate {
  category: BatchCategory;
  file: FileFacts;
  goal: string;
  notes: string;
}

/**
 * Functions the language's runtime calls by name, which no call site in the repository names:
 * Go's `main` and `init`, Rust's `main`. They are never dead code, however unreferenced.
 */
const ENTRY_POINTS: Readonly<Record<string, readonly string[]>> = {
  go: ['main', 'init'],
  rust: ['main'],
};

function deadCodeOf(file: FileFacts): string[] {
  const entryPoints = ENTRY_POINTS[file.language ?? ''] ?? [];
  return file.unusedPrivateSymbols.filter((name) => !entryPoints.includes(name));
}

function candidatesFor(file: FileFacts, goal: string | null): Candidate[] {
  if (file.isTest) return [];
  if (goal !== null)
    return [
      { category: 'small-extracts', file, goal: `${goal} (in ${file.path})`, notes: file.sizeReasons.join('; ') },
    ];
  const found: Candidate[] = [];
  const dead = deadCodeOf(file);
  if (dead.length > 0) {
    found.push({
      category: 'import-cleanup',
      file,
      goal: `Remove dead code in ${file.path}`,
      notes: `unreferenced: ${dead.join(', ')}`,
    });
  }
  const structural = file.sizeReasons.filter((reason) => /class|methods/.test(reason));
  const small = file.sizeReasons.filter((reason) => !structural.includes(reason));
  if (small.length > 0)
    found.push({ category: 'small-extracts', file, goal: `Split long code in ${file.path}`, notes: small.join('; ') });
  if (!file.hasTest && file.fanIn > 0)
    found.push({
      category: 'tests',
      file,
      goal: `Add tests for ${file.path}`,
      notes: `${file.fanIn} ${file.fanIn === 1 ? 'file depends' : 'files depend'} on it and no test covers it by convention`,
    });
  if (structural.length > 0)
    found.push({ category: 'restructure', file, goal: `Restructure ${file.path}`, notes: structural.join('; ') });
  return found;
}

/**
 * The naive plan (seed 002, 11.3): one batch per finding, risk-limiting order (category, then
 * risk, then path), each scoped to one file. Pure: every input is a parameter.
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
      scope_globs:
        candidate.category === 'tests'
          ? [candidate.file.path, ...testGlobsFor(candidate.file.path)]
          : [candidate.file.path],
      allowed_operations: OPERATIONS[candidate.category],
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
  return (path) => inScope(path) && !isExcluded(path) && bounds.isProtected?.(path) !== true;
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
    kept.push({ ...batch, diff_budget_loc: Math.min(batch.diff_budget_loc, bounds.diffBudgetLoc) });
  }
  return { batches: kept.map((batch, index) => ({ ...batch, id: batchId(index) })), dropped };
}
