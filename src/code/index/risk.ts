/**
 * The risk register: how risky it is to change each non-test source file, from four signals
 * (tool configuration, examples, benchmarks and files that declare nothing, see `isRankedCode`,
 * are no code to rank and have no entry).
 *
 *   score = round(100 * (0.35 * F + 0.25 * C + 0.15 * S + 0.25 * U))
 *
 *   F = min(1, log2(1 + fanIn) / log2(1 + 20))     files importing it; 20 or more saturates
 *   C = min(1, log2(1 + churn) / log2(1 + 20))     commits touching it in the recent history window
 *   S = min(1, log2(1 + lines) / log2(1 + 2000))   size; 2000 lines or more saturates
 *   U = 0 when a test covers it, else 1            (see `test-files.ts`)
 *
 * Logarithms because the first few dependents or commits say more than the hundredth; fixed
 * saturation points (not the repository maximum) so scores compare across runs and repositories.
 * An untested 2000-line file nobody imports and nobody touched scores 40; a tested file imported
 * by 20 others and changed in 20 recent commits scores 60 plus its size term.
 */
import type { RiskEntry } from './types.js';

export interface RiskSignals {
  fanIn: number;
  fanOut: number;
  churn: number;
  lines: number;
  tests: string[];
}

function saturating(value: number, saturation: number): number {
  return Math.min(1, Math.log2(1 + Math.max(0, value)) / Math.log2(1 + saturation));
}

/** The 0-100 risk score of a file (formula in the module comment). */
function riskScore(signals: Pick<RiskSignals, 'fanIn' | 'churn' | 'lines' | 'tests'>): number {
  const score =
    0.35 * saturating(signals.fanIn, 20) +
    0.25 * saturating(signals.churn, 20) +
    0.15 * saturating(signals.lines, 2000) +
    0.25 * (signals.tests.length > 0 ? 0 : 1);
  return Math.round(100 * score);
}

/** The register's order: by score (highest first), then by fan-in, churn, and path. */
export function compareRisk(a: RiskEntry, b: RiskEntry): number {
  return (
    b.score - a.score || b.fanIn - a.fanIn || b.churn - a.churn || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
}

export function riskEntry(path: string, signals: RiskSignals): RiskEntry {
  return { path, ...signals, score: riskScore(signals) };
}

/** Entries sorted by `compareRisk`. */
export function buildRiskRegister(signals: ReadonlyMap<string, RiskSignals>): RiskEntry[] {
  const entries: RiskEntry[] = [];
  for (const [path, signal] of signals) entries.push(riskEntry(path, signal));
  return entries.sort(compareRisk);
}
