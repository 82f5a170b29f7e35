/**
 * The derived views of an index after a few files changed, patched instead of recomputed: what
 * keeps a one-file update of a large repository within milliseconds (see bench/index.ts). Valid
 * only when the set of paths, the Go modules and churn are those of the previous index, so that
 * the imports of unchanged files resolve as before. Gives what `deriveIndex` gives for the same
 * files (test/code/index-incremental.test.ts compares the two).
 *
 * - Dependencies: recomputed for the changed files only; when none of them imports anything new
 *   or anything less (the usual edit), both graphs are the previous ones, shared.
 * - Dependents: recomputed for the files a changed file imported before or imports now.
 * - Coverage: naming is unchanged (same paths); coverage by import changes only for the files
 *   a changed file imports or imported, so their tests are recomputed. When a change makes a
 *   Rust module a test module or no longer one, everything is derived again (`deriveIndex`).
 * - Risk: the entries of the changed files and of those they import(ed), merged into the
 *   previous register's order.
 */
import { isRankedCode } from '../file-role.js';
import {
  deriveIndex,
  importTargets,
  resolveImports,
  riskSignals,
  testPathsOf,
  type DerivedViews,
  type LazyResolver,
} from './derive.js';
import { NO_MANIFESTS } from './resolve-imports.js';
import { compareRisk, riskEntry } from './risk.js';
import { markRustTestModules, testsBySource } from './test-files.js';
import type { IndexedFile, RiskEntry } from './types.js';

export function deriveChanged(
  previous: DerivedViews,
  files: readonly IndexedFile[],
  changed: readonly IndexedFile[],
  churn: ReadonlyMap<string, number>,
  resolver: LazyResolver,
): DerivedViews {
  const changedPaths = new Set(changed.map((file) => file.path));
  const targetsOf = new Map<IndexedFile, string[]>();
  let edgesChanged = false;
  for (const file of changed) {
    resolveImports(file, resolver);
    const targets = file.language === null ? [] : importTargets(file);
    targetsOf.set(file, targets);
    if (!sameList(targets, previous.dependencies[file.path] ?? [])) edgesChanged = true;
  }
  // A changed `#[cfg(test)] mod` line turns a module into a test or back (rare): derive it all.
  if (markRustTestModules(files).length > 0)
    return deriveIndex([...files], NO_MANIFESTS, churn, new Set(files), resolver);
  // The usual edit leaves a file's imports as they were: the graphs stay as they are, shared.
  const views = edgesChanged
    ? changedGraphs(previous, files, targetsOf, changedPaths)
    : { dependencies: previous.dependencies, dependents: previous.dependents, touched: new Set<string>() };
  const { touched } = views;
  const affected = new Set([...touched, ...changedPaths]);
  const testPaths = testPathsOf(files);
  const affectedSources = files.filter(
    (file) => affected.has(file.path) && file.language !== null && !file.isTest && isRankedCode(file),
  );
  const tests = testsBySource(affectedSources, testPaths, views.dependents);
  const entries = affectedSources
    .map((file) => riskEntry(file.path, riskSignals(file, views, testPaths, churn, tests.get(file.path) ?? [])))
    .sort(compareRisk);
  const kept = previous.risk.filter((entry) => !affected.has(entry.path));
  return { dependencies: views.dependencies, dependents: views.dependents, risk: mergeSorted(kept, entries) };
}

/** The graphs with the edges of the changed files replaced, and the files whose importers may have changed. */
function changedGraphs(
  previous: DerivedViews,
  files: readonly IndexedFile[],
  targetsOf: ReadonlyMap<IndexedFile, string[]>,
  changedPaths: ReadonlySet<string>,
): Pick<DerivedViews, 'dependencies' | 'dependents'> & { touched: Set<string> } {
  const dependencies: Record<string, string[]> = { ...previous.dependencies };
  let dependencyKeysChanged = false;
  const touched = new Set<string>();
  for (const [file, targets] of targetsOf) {
    for (const target of previous.dependencies[file.path] ?? []) touched.add(target);
    for (const target of targets) touched.add(target);
    const had = Object.hasOwn(dependencies, file.path);
    if (targets.length > 0) dependencies[file.path] = targets;
    else delete dependencies[file.path];
    if (had !== targets.length > 0) dependencyKeysChanged = true;
  }
  const dependents: Record<string, string[]> = { ...previous.dependents };
  let dependentKeysChanged = false;
  for (const target of touched) {
    const importers = (previous.dependents[target] ?? []).filter((path) => !changedPaths.has(path));
    for (const [file, targets] of targetsOf) if (targets.includes(target)) importers.push(file.path);
    const had = Object.hasOwn(dependents, target);
    if (importers.length > 0) dependents[target] = importers.sort();
    else delete dependents[target];
    if (had !== importers.length > 0) dependentKeysChanged = true;
  }
  return {
    // Keys in the order `deriveIndex` makes them: files in path order, dependents sorted.
    dependencies: dependencyKeysChanged ? inFileOrder(dependencies, files) : dependencies,
    dependents: dependentKeysChanged ? sortedKeys(dependents) : dependents,
    touched,
  };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, index) => value === b[index]);
}

function inFileOrder(record: Record<string, string[]>, files: readonly IndexedFile[]): Record<string, string[]> {
  const ordered: Record<string, string[]> = {};
  for (const file of files) {
    const value = record[file.path];
    if (value !== undefined) ordered[file.path] = value;
  }
  return ordered;
}

function sortedKeys(record: Record<string, string[]>): Record<string, string[]> {
  const ordered: Record<string, string[]> = {};
  for (const key of Object.keys(record).sort()) ordered[key] = record[key] ?? [];
  return ordered;
}

/** Two arrays sorted by `compareRisk`, merged. */
function mergeSorted(a: readonly RiskEntry[], b: readonly RiskEntry[]): RiskEntry[] {
  const merged: RiskEntry[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length)
    merged.push(compareRisk(a[i] as RiskEntry, b[j] as RiskEntry) <= 0 ? (a[i++] as RiskEntry) : (b[j++] as RiskEntry));
  while (i < a.length) merged.push(a[i++] as RiskEntry);
  while (j < b.length) merged.push(b[j++] as RiskEntry);
  return merged;
}
