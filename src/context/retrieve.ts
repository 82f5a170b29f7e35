import { RatchetError } from '../core/errors.js';
import type { CodeIndex } from '../code/index/types.js';
import {
  assembleContextPackage,
  outlineOf,
  type ContextPackage,
  type RankedCandidate,
  type RetrievalStage,
} from './context-package.js';
import { scopeCandidates, type ScopeCandidate } from './retrieval-scope.js';

/**
 * The retrieval pipeline of a solve pass (seed 004, R1-R5): `scope` finds candidates without a
 * model call; `precision`, when chosen, has the model grade them (through `PrecisionGrader`, so
 * the call is made and recorded by the workflow); the package then takes the most relevant
 * files whole and the signatures of the rest, within the budget.
 */

/** The stages `--stages` accepts, in the order they run. */
const RETRIEVAL_STAGES: readonly RetrievalStage[] = ['scope', 'precision'];

/** Parses `--stages scope,precision`; throws `usage` naming what is wrong. */
export function parseRetrievalStages(text: string): RetrievalStage[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => !(RETRIEVAL_STAGES as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0) {
    throw new RatchetError(
      'usage',
      `Unknown retrieval stage(s) in --stages "${text}": ${unknown.join(', ') || '(none given)'}`,
      {
        hint: `Choose among ${RETRIEVAL_STAGES.join(', ')}, comma-separated (default scope,precision).`,
      },
    );
  }
  if (!names.includes('scope')) {
    throw new RatchetError('usage', `--stages "${text}" leaves out scope, which finds the files precision grades.`, {
      hint: 'Use --stages scope, or --stages scope,precision.',
    });
  }
  return RETRIEVAL_STAGES.filter((stage) => names.includes(stage));
}

/** What the model is asked to grade: candidates with their reasons and outlines. */
interface PrecisionRequest {
  task: string;
  candidates: readonly ScopeCandidate[];
  /** One block per candidate: path, reasons, outline. */
  listing: string;
}

/**
 * The precision stage: grades each candidate 0-3 (paths it leaves out count as 0); null when no
 * grades could be had (an answer that does not parse): the scope order is used instead.
 */
export interface PrecisionGrader {
  grade(request: PrecisionRequest): Promise<ReadonlyMap<string, number> | null>;
}

export interface RetrieveInput {
  task: string;
  seeds: readonly string[];
  symbols: readonly string[];
  index: CodeIndex;
  readText: (path: string) => Promise<string | null>;
  stages: readonly RetrievalStage[];
  budgetTokens: number;
  maxFullFiles?: number;
  maxCandidates?: number;
  /**
   * Whole-file prompting (`[solve] context = "whole-files"`): every scope candidate whole, as far
   * as the budget goes, and no precision call. The baseline the context pack is measured against
   * (`bench/solve-context.ts`); also for models whose window makes packing pointless.
   */
  wholeFiles?: boolean;
}

/** The listing of candidates the precision prompt shows. */
function candidateListing(candidates: readonly ScopeCandidate[], index: CodeIndex): string {
  const byPath = new Map(index.files.map((file) => [file.path, file]));
  return candidates
    .map((candidate) => {
      const outline = candidate.missing ? '(does not exist yet)' : outlineOf(byPath.get(candidate.path));
      return `## ${candidate.path}\nWhy: ${candidate.reasons.join('; ')}\n${outline.split('\n').slice(0, 12).join('\n')}`;
    })
    .join('\n\n');
}

/**
 * Without precision, relevance follows the scope order: the seeds and the first three
 * candidates 2 (whole if room), the rest 1 (signatures).
 */
function rankByScope(candidates: readonly ScopeCandidate[]): RankedCandidate[] {
  return candidates.map((candidate, position) => ({
    ...candidate,
    relevance: candidate.reasons.includes('plan seed') || position < 3 ? 2 : 1,
  }));
}

/** Plan seeds keep at least relevance 1: a plan that names a file outranks a grade that drops it. */
function rankByGrades(candidates: readonly ScopeCandidate[], grades: ReadonlyMap<string, number>): RankedCandidate[] {
  return candidates
    .map((candidate, position) => {
      const grade = Math.max(0, Math.min(3, Math.round(grades.get(candidate.path) ?? 0)));
      const relevance = candidate.reasons.includes('plan seed') ? Math.max(1, grade) : grade;
      return { candidate: { ...candidate, relevance }, position };
    })
    .sort((a, b) => b.candidate.relevance - a.candidate.relevance || a.position - b.position)
    .map(({ candidate }) => candidate);
}

/** Runs the chosen stages and assembles the package. */
export async function retrieve(input: RetrieveInput, grader?: PrecisionGrader): Promise<ContextPackage> {
  const candidates = scopeCandidates({
    task: input.task,
    seeds: input.seeds,
    symbols: input.symbols,
    index: input.index,
    ...(input.maxCandidates === undefined ? {} : { maxCandidates: input.maxCandidates }),
  });
  if (input.wholeFiles === true) {
    return assembleContextPackage({
      ranked: candidates.map((candidate) => ({ ...candidate, relevance: 2 })),
      stages: ['scope'],
      index: input.index,
      readText: input.readText,
      budgetTokens: input.budgetTokens,
      maxFullFiles: Number.POSITIVE_INFINITY,
    });
  }
  const usePrecision = input.stages.includes('precision') && candidates.length > 0;
  if (usePrecision && grader === undefined) {
    throw new RatchetError('internal', 'The precision stage was chosen but no grader was given.');
  }
  const grades =
    usePrecision && grader !== undefined
      ? await grader.grade({ task: input.task, candidates, listing: candidateListing(candidates, input.index) })
      : null;
  const ranked = grades === null ? rankByScope(candidates) : rankByGrades(candidates, grades);
  return assembleContextPackage({
    ranked,
    stages: [...input.stages],
    index: input.index,
    readText: input.readText,
    budgetTokens: input.budgetTokens,
    ...(input.maxFullFiles === undefined ? {} : { maxFullFiles: input.maxFullFiles }),
  });
}
