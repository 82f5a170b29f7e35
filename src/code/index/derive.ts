/**
 * Views derived from the per-file results: resolved imports, the dependency graph and its
 * reverse, test coverage by convention, and the risk register. Pure: every input is a parameter.
 */
import { isRankedCode } from '../file-role.js';
import { ImportResolver, type Manifests } from './resolve-imports.js';
import { buildRiskRegister, type RiskSignals } from './risk.js';
import { markRustTestModules, testsBySource } from './test-files.js';
import type { LanguageId } from '../tree-sitter.js';
import type { CodeIndex, ImportRef, IndexedFile } from './types.js';

/**
 * Builds the resolver's lookup tables only when some file needs resolving; one instance serves
 * successive builds of an unchanged set of paths.
 */
export class LazyResolver {
  private resolver: ImportResolver | undefined;
  constructor(
    private readonly files: readonly IndexedFile[],
    private readonly manifests: Manifests,
  ) {}
  resolve(from: string, language: LanguageId, ref: ImportRef): string[] {
    this.resolver ??= new ImportResolver(
      this.files.map((file) => file.path),
      this.manifests,
    );
    return this.resolver.resolve(from, language, ref);
  }
}

export type DerivedViews = Pick<CodeIndex, 'dependencies' | 'dependents' | 'risk'>;

/**
 * Resolves the imports of a file in a supported language, in place: its import objects are its
 * own (`toIndexedFile` makes them), never shared with a cached result or another index.
 */
export function resolveImports(file: IndexedFile, resolver: LazyResolver): void {
  const { language, path } = file;
  if (language === null) return;
  for (const ref of file.imports) {
    const resolved = resolver.resolve(path, language, ref);
    ref.resolved = resolved.includes(path) ? resolved.filter((target) => target !== path) : resolved;
  }
}

/** The repository files a file's resolved imports name, sorted. */
export function importTargets(file: IndexedFile): string[] {
  let targets: string[] | undefined;
  let unique: Set<string> | undefined;
  for (const ref of file.imports) {
    for (const path of ref.resolved) {
      if (targets === undefined) targets = [path];
      else {
        unique ??= new Set(targets);
        if (!unique.has(path)) {
          unique.add(path);
          targets.push(path);
        }
      }
    }
  }
  return targets === undefined ? [] : targets.sort();
}

/** Test paths among the source files (coverage counts only tests the index parsed). */
export function testPathsOf(files: readonly IndexedFile[]): Set<string> {
  const paths = new Set<string>();
  for (const file of files) if (file.language !== null && file.isTest) paths.add(file.path);
  return paths;
}

/** The risk signals of a non-test source file, given the graphs and its tests. */
export function riskSignals(
  file: IndexedFile,
  views: Pick<DerivedViews, 'dependencies' | 'dependents'>,
  testPaths: ReadonlySet<string>,
  churn: ReadonlyMap<string, number>,
  tests: string[],
): RiskSignals {
  return {
    fanIn: (views.dependents[file.path] ?? []).filter((importer) => !testPaths.has(importer)).length,
    fanOut: views.dependencies[file.path]?.length ?? 0,
    churn: churn.get(file.path) ?? 0,
    lines: file.lines,
    tests,
  };
}

/**
 * Resolves `files[].imports` in place (except for files in `alreadyResolved`, whose imports
 * resolve the same way because the set of paths has not changed), marks the Rust test modules
 * (`markRustTestModules`, in place too) and returns the graphs and the risk register.
 */
export function deriveIndex(
  files: IndexedFile[],
  manifests: Manifests,
  churn: ReadonlyMap<string, number>,
  alreadyResolved: ReadonlySet<IndexedFile> = new Set(),
  resolver: LazyResolver = new LazyResolver(files, manifests),
): DerivedViews {
  const dependencies: Record<string, string[]> = {};
  const dependentSets = new Map<string, Set<string>>();
  for (const file of files) {
    const language = file.language;
    if (language === null || file.imports.length === 0) continue;
    if (!alreadyResolved.has(file)) resolveImports(file, resolver);
    const targets = importTargets(file);
    if (targets.length === 0) continue;
    dependencies[file.path] = targets;
    for (const target of targets) {
      let set = dependentSets.get(target);
      if (set === undefined) dependentSets.set(target, (set = new Set()));
      set.add(file.path);
    }
  }
  const dependents: Record<string, string[]> = {};
  for (const path of [...dependentSets.keys()].sort()) dependents[path] = [...(dependentSets.get(path) ?? [])].sort();

  // Which Rust modules are tests is known only now, with every `#[cfg(test)] mod` resolved.
  markRustTestModules(files);
  const sources = files.filter((file) => file.language !== null);
  const testPaths = testPathsOf(files);
  const tests = testsBySource(sources, testPaths, dependents);
  const signals = new Map<string, RiskSignals>();
  for (const file of sources) {
    // Tool configuration (`vite.config.ts`), examples, benchmarks and files declaring nothing are not ranked.
    if (file.isTest || !isRankedCode(file)) continue;
    signals.set(
      file.path,
      riskSignals(file, { dependencies, dependents }, testPaths, churn, tests.get(file.path) ?? []),
    );
  }
  return { dependencies, dependents, risk: buildRiskRegister(signals) };
}
