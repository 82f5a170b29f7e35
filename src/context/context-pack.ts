import picomatch from 'picomatch';
import type { CodeIndex, IndexedFile } from '../code/index/types.js';

/** Seed 002, 13.1: limits of one context packet. */
export interface ContextBudgets {
  maxChars: number;
  maxExcerptLines: number;
  ledgerEntries: number;
  ledgerLinesPerEntry: number;
}

export const DEFAULT_BUDGETS: ContextBudgets = {
  maxChars: 40_000,
  maxExcerptLines: 600,
  ledgerEntries: 10,
  ledgerLinesPerEntry: 8,
};

export interface BatchBrief {
  id: string;
  goal: string;
  scope_globs: string[];
  allowed_operations: string[];
  diff_budget_loc: number;
  risk_score: number;
  notes?: string;
}

export interface ContextPackInput {
  batch: BatchBrief;
  index: CodeIndex;
  /** Current text of a repository file (null when unreadable). */
  readText: (path: string) => string | null;
  /** TASK_LEDGER.jsonl lines, oldest first. */
  ledger: string[];
  feedback: string | null;
  budgets?: ContextBudgets;
}

function numbered(text: string, from: number, to: number): string {
  return text
    .split('\n')
    .slice(from - 1, to)
    .map((line, offset) => `${String(from + offset).padStart(5)}  ${line}`)
    .join('\n');
}

/** Plain code-unit order, as the index sorts paths (not locale-dependent). */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function signatures(file: IndexedFile, limit: number): string[] {
  return file.symbols
    .filter((symbol) => symbol.container === undefined || symbol.exported)
    .slice(0, limit)
    .map(
      (symbol) =>
        `  ${file.path}:${symbol.startLine} ${symbol.exported ? 'export ' : ''}${symbol.signature}${symbol.doc ? `  // ${symbol.doc.split('\n')[0]}` : ''}`,
    );
}

/**
 * Builds the patcher's prompt body for one batch, deterministically and within budgets
 * (seed 002, section 13): the batch, the previous attempt's feedback, the in-scope files (whole
 * when they fit the excerpt budget, else their symbol outlines), the signatures of the files they
 * import, who depends on them and through which names, and the tail of the task ledger.
 */
export function buildContextPack(input: ContextPackInput): string {
  const budgets = input.budgets ?? DEFAULT_BUDGETS;
  const { batch, index } = input;
  const inScope = picomatch(batch.scope_globs, { dot: true });
  const byPath = new Map(index.files.map((file) => [file.path, file]));
  // Files and links in path order, not in the order an index happens to list them (a built index
  // is sorted; one assembled otherwise gives the same pack): the first files get the excerpt budget.
  const scoped = index.files.filter((file) => inScope(file.path)).sort((a, b) => byCodeUnits(a.path, b.path));
  const parts: string[] = [];
  parts.push(`# Batch ${batch.id}: ${batch.goal}`);
  parts.push(
    [
      `Scope (only these files may change): ${batch.scope_globs.join(', ')}`,
      `Allowed operations: ${batch.allowed_operations.join(', ') || 'any behaviour-preserving refactoring'}`,
      `Diff budget: at most ${batch.diff_budget_loc} added + deleted lines`,
      `Risk score: ${batch.risk_score}/100`,
      batch.notes ? `Notes: ${batch.notes}` : '',
    ]
      .filter(Boolean)
      .join('\n'),
  );
  if (input.feedback) parts.push(`## Feedback on your previous attempt\n${input.feedback}`);

  let excerptLines = 0;
  const fileParts: string[] = [];
  for (const file of scoped) {
    const read = input.readText(file.path);
    if (read === null) continue;
    // A final newline ends the last line; it does not start another one.
    const text = read.endsWith('\n') ? read.slice(0, -1) : read;
    const lines = text.split('\n').length;
    if (excerptLines + lines <= budgets.maxExcerptLines) {
      excerptLines += lines;
      fileParts.push(`### ${file.path} (${lines} lines, complete)\n${numbered(text, 1, lines)}`);
    } else {
      const room = Math.max(0, budgets.maxExcerptLines - excerptLines);
      const outline = signatures(file, 60).join('\n') || '  (no symbols)';
      const head = room > 0 ? `\n${numbered(text, 1, Math.min(room, lines))}` : '';
      excerptLines += Math.min(room, lines);
      fileParts.push(
        `### ${file.path} (${lines} lines; outline, and the first ${Math.min(room, lines)} lines — use Read for the rest)\n${outline}${head}`,
      );
    }
  }
  parts.push(`## Files in scope\n${fileParts.join('\n\n') || '(no indexed file matches the scope)'}`);

  const imported = new Set(
    scoped.flatMap((file) => index.dependencies[file.path] ?? []).filter((path) => !inScope(path)),
  );
  const importedSignatures = [...imported].sort(byCodeUnits).flatMap((path) => {
    const file = byPath.get(path);
    return file ? signatures(file, 20) : [];
  });
  if (importedSignatures.length > 0)
    parts.push(`## Signatures of files the scope imports\n${importedSignatures.join('\n')}`);

  const dependents = scoped.flatMap((file) =>
    [...(index.dependents[file.path] ?? [])].sort(byCodeUnits).map((dependent) => {
      const names =
        byPath
          .get(dependent)
          ?.imports.filter((entry) => entry.resolved.includes(file.path))
          .flatMap((entry) => entry.names) ?? [];
      return `  ${dependent} uses ${file.path}${names.length > 0 ? `: ${[...new Set(names)].join(', ')}` : ''}`;
    }),
  );
  if (dependents.length > 0)
    parts.push(
      `## Who depends on the scope (keep these names and signatures working)\n${dependents.slice(0, 40).join('\n')}`,
    );

  const tail = input.ledger
    .slice(-budgets.ledgerEntries)
    .map((line) => line.split('\n').slice(0, budgets.ledgerLinesPerEntry).join('\n'));
  if (tail.length > 0) parts.push(`## Recent batches (task ledger)\n${tail.join('\n')}`);

  const closing =
    'Answer with the PatchResponse structured output. Return status "noop" if nothing is worth changing safely.';
  let text = parts.join('\n\n');
  // The closing instruction survives truncation: the body gives way first.
  const room = budgets.maxChars - closing.length - 2;
  if (text.length > room) text = `${text.slice(0, room - 60)}\n\n[context truncated to ${budgets.maxChars} characters]`;
  return `${text}\n\n${closing}`;
}
