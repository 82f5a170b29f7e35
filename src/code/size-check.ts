/**
 * The pre-REFACTOR static checker (seed 000, Task 2.1), for every language Ratchet parses. It
 * decides whether the REFACTOR stage is worth a model call and, when it is, gives the model the
 * reasons as human-readable lines. Deterministic and best-effort: a missing file is skipped, an
 * unsupported language gets only the line-count checks, and a file that does not parse gets no
 * structural findings (VERIFY reports broken code; this checker never blocks on it).
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { measureCode, type CodeMetrics } from './metrics.js';

export interface RefactorCheckConfig {
  /** Lines above which a file should be split. */
  splitThreshold: number;
  /** Lines above which a file MUST be split. */
  hardLimit: number;
  /** Maximum lines of one function or method. */
  maxFunctionLength: number;
  /** Maximum methods of one class (or Go/Rust type). */
  maxClassMethods: number;
}

/** Seed 000's thresholds (also the `[refactor_check]` defaults). */
export const DEFAULT_REFACTOR_CHECK_CONFIG: Readonly<RefactorCheckConfig> = {
  splitThreshold: 400,
  hardLimit: 800,
  maxFunctionLength: 50,
  maxClassMethods: 15,
};

export interface RefactorCheck {
  needsRefactor: boolean;
  /** One human-readable finding per line, ready for the REFACTOR prompt. */
  reasons: string[];
  /** Files that existed and were read. */
  filesChecked: number;
  /** Line count per checked file, keyed by its path relative to `root`. */
  fileLines: Record<string, number>;
}

/**
 * Checks files (relative to `root`, or absolute) against the thresholds: file length against the
 * split threshold and the hard limit, every function's length, and every class's method count.
 */
export async function checkNeedsRefactor(
  files: readonly string[],
  root: string,
  config: RefactorCheckConfig,
): Promise<RefactorCheck> {
  const reasons: string[] = [];
  const fileLines: Record<string, number> = {};
  const seen = new Set<string>();
  for (const file of files) {
    const absolute = isAbsolute(file) ? file : resolve(root, file);
    const display = relative(root, absolute).split(sep).join('/') || file;
    if (seen.has(display)) continue;
    seen.add(display);
    const text = await readSource(absolute);
    if (text === undefined) continue;
    const metrics = await measureCode(absolute, text);
    fileLines[display] = metrics.lines;
    reasons.push(...refactorReasons(display, metrics, config));
  }
  return {
    needsRefactor: reasons.length > 0,
    reasons,
    filesChecked: Object.keys(fileLines).length,
    fileLines,
  };
}

/** What a finding of `checkNeedsRefactor` is about: the file's length, a function's, or a class's methods. */
export type RefactorFindingKind = 'long-file' | 'long-function' | 'big-class';

/**
 * The kind of a finding, read from its wording (`refactorReasons` below): `... has 20 methods`
 * is a big class, `function|method ... is 97 lines long` a long function, anything else (`...
 * exceeds 400-line split threshold`) a long file. The name of a function never decides it: a
 * method called `_create_slots_class` is a long function, not a big class.
 */
export function refactorFindingKind(reason: string): RefactorFindingKind {
  if (/ has \d+ methods\b/.test(reason)) return 'big-class';
  if (/\b(?:function|method)\b.* is \d+ lines\b/.test(reason)) return 'long-function';
  return 'long-file';
}

/** The findings for one measured file (pure). */
function refactorReasons(file: string, metrics: CodeMetrics, config: RefactorCheckConfig): string[] {
  const reasons: string[] = [];
  if (metrics.lines > config.hardLimit) {
    reasons.push(
      `${file} exceeds ${config.hardLimit}-line hard limit (${metrics.lines} lines): it MUST split into smaller modules`,
    );
  } else if (metrics.lines > config.splitThreshold) {
    reasons.push(
      `${file} exceeds ${config.splitThreshold}-line split threshold (${metrics.lines} lines): split it into cohesive modules`,
    );
  }
  for (const fn of metrics.functions) {
    if (fn.lines <= config.maxFunctionLength) continue;
    const what =
      fn.kind === 'anonymous' ? `an anonymous function at line ${fn.startLine}` : `${fn.kind} \`${fn.name}\``;
    reasons.push(
      `${file}: ${what} is ${fn.lines} lines long (max ${config.maxFunctionLength}, lines ${fn.startLine}-${fn.endLine}): extract smaller functions`,
    );
  }
  for (const owner of metrics.classes) {
    if (owner.methods <= config.maxClassMethods) continue;
    reasons.push(
      `${file}: ${owner.kind} \`${owner.name}\` has ${owner.methods} methods (max ${config.maxClassMethods}): split its responsibilities`,
    );
  }
  return reasons;
}

/** File text, or undefined when it is missing, unreadable, a directory, or binary. */
async function readSource(path: string): Promise<string | undefined> {
  try {
    const text = await readFile(path, 'utf8');
    return text.includes('\0') ? undefined : text;
  } catch {
    return undefined;
  }
}
