import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Shared pieces of the benchmarks (DESIGN.md, Testing strategy): every bench measures Ratchet
 * against a baseline in the same run and prints ratios. Benchmarks inform; they never gate. A
 * bench throws only when the run itself breaks.
 */

export interface BenchOptions {
  /** Measured repetitions per side (after one warm-up of each). */
  runs: number;
}

/** One line of the closing summary printed by `bench/run.ts`. */
export interface BenchSummary {
  name: string;
  /** The key numbers, on one line. */
  headline: string;
  /** Null when the bench has no targets. */
  targetsMet: boolean | null;
}

export interface Bench {
  name: string;
  description: string;
  run(options: BenchOptions): Promise<BenchSummary>;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const upper = sorted[middle] ?? 0;
  return sorted.length % 2 === 1 ? upper : ((sorted[middle - 1] ?? 0) + upper) / 2;
}

export function formatMs(ms: number): string {
  return ms >= 10_000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
}

export function formatMb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export function formatPercent(share: number): string {
  return `${(share * 100).toFixed(1)} %`;
}

/** Renders rows as an aligned text table (first column left-aligned, the others right-aligned). */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)));
  const render = (row: readonly string[]): string =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [render(header), rule, ...rows.map(render)].join('\n');
}

interface ProcessResult {
  exitCode: number | null;
  output: string;
}

/** Runs a program without a shell and resolves with its exit code and combined output. */
function spawnCollect(file: string, args: readonly string[], cwd: string): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ exitCode: code, output: Buffer.concat(chunks).toString('utf8') }));
  });
}

/** Runs git and returns its output; throws when it exits non-zero. */
export async function git(cwd: string, args: readonly string[]): Promise<string> {
  const result = await spawnCollect('git', args, cwd);
  if (result.exitCode !== 0) {
    throw new Error(
      `git ${args.join(' ')} failed (exit ${String(result.exitCode)}) in ${cwd}: ${result.output.trim()}`,
    );
  }
  return result.output;
}

/**
 * Runs one side of a benchmark as its own, plain `node` process (Node strips the types of
 * `bench/*.ts`): the job goes in as a JSON file, the result comes back as one. A separate process
 * keeps each side's memory, and so the cost of every process it spawns, its own; `fork` of a big
 * process is slow.
 */
export async function runSide<Job, Result>(
  script: string,
  job: Job,
  /** Options for `node` itself, before the script (e.g. V8 heap settings). */
  nodeOptions: readonly string[] = [],
): Promise<Result> {
  const dir = await mkdtemp(join(tmpdir(), 'ratchet-bench-job-'));
  try {
    const jobFile = join(dir, 'job.json');
    const resultFile = join(dir, 'result.json');
    await writeFile(jobFile, JSON.stringify(job));
    const child = await spawnCollect(process.execPath, [...nodeOptions, script, jobFile, resultFile], process.cwd());
    if (child.exitCode !== 0) {
      throw new Error(`${script} failed (exit ${String(child.exitCode)}):\n${child.output.trim()}`);
    }
    return JSON.parse(await readFile(resultFile, 'utf8')) as Result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
