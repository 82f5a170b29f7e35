/**
 * Writes the index artifacts of seed 002 (section 10.2) into a directory:
 *
 * - `ARCHITECTURE_SNAPSHOT.md`: languages, modules, most depended-on files, hotspots.
 * - `SYMBOL_REGISTRY.json`: every symbol with file, kind, lines, signature, doc.
 * - `DEPENDENCY_GRAPH.json`: file -> imported repository files, the reverse, and unresolved
 *   (external) specifiers per file.
 * - `CALL_GRAPH.json`: best-effort caller -> callee symbol ids (`path#name`).
 * - `RISK_REGISTER.json`: per-file risk with the formula that produced it.
 * - `TASK_LEDGER.jsonl`: created empty when absent; the refactor loop appends to it.
 * - `CONTRACTS/public_api_snapshot.json`: the public API snapshot.
 */
import { mkdir, open, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { snapshotPublicApi } from '../public-api.js';
import { renderArchitectureSnapshot } from './architecture-snapshot.js';
import { callGraphOf } from './call-graph.js';
import type { Redactor } from '../../core/redact.js';
import type { CodeIndex } from './types.js';

/** The refactor run's task ledger in the artifacts folder, one JSON line per batch outcome. */
export const TASK_LEDGER_FILE = 'TASK_LEDGER.jsonl';

const RISK_FORMULA =
  'score = round(100 * (0.35*F + 0.25*C + 0.15*S + 0.25*U)); F = min(1, log2(1+fanIn)/log2(21)); ' +
  'C = min(1, log2(1+churn)/log2(21)); S = min(1, log2(1+lines)/log2(2001)); U = 0 if a test covers the file, else 1';

export interface IndexArtifacts {
  dir: string;
  /** Absolute paths of the files written (the task ledger included). */
  files: string[];
}

export interface IndexArtifactOptions {
  /**
   * Applied to every artifact: symbol docs and signatures quote the repository's text, which may
   * hold a key the ledger and the reports never show either.
   */
  redact?: Redactor;
}

export async function writeIndexArtifacts(
  index: CodeIndex,
  dir: string,
  options: IndexArtifactOptions = {},
): Promise<IndexArtifacts> {
  const redact = options.redact ?? ((text: string) => text);
  await mkdir(join(dir, 'CONTRACTS'), { recursive: true });
  const header = { version: index.version, root: index.root, builtAt: index.builtAt };
  const unresolved: Record<string, string[]> = {};
  for (const file of index.files) {
    const specifiers = file.imports.filter((ref) => ref.resolved.length === 0).map((ref) => ref.specifier);
    if (specifiers.length > 0) unresolved[file.path] = [...new Set(specifiers)].sort();
  }
  const outputs: [string, string][] = [
    ['ARCHITECTURE_SNAPSHOT.md', renderArchitectureSnapshot(index)],
    [
      'SYMBOL_REGISTRY.json',
      json({
        ...header,
        symbols: index.files.flatMap((file) => file.symbols.map((symbol) => ({ file: file.path, ...symbol }))),
      }),
    ],
    [
      'DEPENDENCY_GRAPH.json',
      json({ ...header, dependencies: index.dependencies, dependents: index.dependents, unresolved }),
    ],
    ['CALL_GRAPH.json', json({ ...header, bestEffort: true, calls: callGraphOf(index) })],
    [
      'RISK_REGISTER.json',
      json({ ...header, formula: RISK_FORMULA, churnCommits: index.churnCommits, entries: index.risk }),
    ],
    [join('CONTRACTS', 'public_api_snapshot.json'), json(snapshotPublicApi(index))],
  ];
  const written: string[] = [];
  for (const [name, content] of outputs) {
    const path = join(dir, name);
    const temporary = `${path}.${process.pid}.tmp`;
    await writeFile(temporary, redact(content));
    await rename(temporary, path);
    written.push(path);
  }
  const ledger = join(dir, TASK_LEDGER_FILE);
  await (await open(ledger, 'a')).close();
  written.push(ledger);
  return { dir, files: written };
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
