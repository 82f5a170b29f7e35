import { parseArgs } from 'node:util';
import { table, type Bench, type BenchSummary } from './harness.js';
import { cliStartupBench } from './cli-startup.js';
import { indexBench } from './index.js';
import { solveContextBench } from './solve-context.js';
import { tddOverheadBench } from './tdd-overhead.js';
import { workersBench } from './workers.js';

/**
 * `npm run bench [-- [--runs N] [name ...]]`: runs every benchmark (or the named ones) in order
 * and prints a summary. Missing a target never fails the process (benchmarks inform, they do not
 * gate); a benchmark that breaks does (exit code 1).
 */

const BENCHES: readonly Bench[] = [tddOverheadBench, indexBench, cliStartupBench, solveContextBench, workersBench];

const DEFAULT_RUNS = 3;

/** An error with its chain of causes (a side's own output is in the innermost). */
function describe(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  while (current instanceof Error) {
    parts.push(current.message);
    current = current.cause;
  }
  if (current !== undefined) parts.push(JSON.stringify(current));
  return parts.join('\n  caused by: ');
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({ options: { runs: { type: 'string' } }, allowPositionals: true });
  const runs = values.runs === undefined ? DEFAULT_RUNS : Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) {
    console.error(`--runs must be a positive integer, got "${values.runs ?? ''}".`);
    return 2;
  }
  const unknown = positionals.filter((name) => !BENCHES.some((bench) => bench.name === name));
  if (unknown.length > 0) {
    console.error(
      `Unknown benchmark(s): ${unknown.join(', ')}. Available: ${BENCHES.map((bench) => bench.name).join(', ')}`,
    );
    return 2;
  }
  const selected = positionals.length === 0 ? BENCHES : BENCHES.filter((bench) => positionals.includes(bench.name));
  console.log(`Ratchet benchmarks on Node ${process.version}, ${runs} measured run(s) per side after one warm-up.\n`);

  const results: (BenchSummary | { name: string; error: string })[] = [];
  for (const bench of selected) {
    console.log(`== ${bench.name}: ${bench.description}`);
    const started = performance.now();
    try {
      results.push(await bench.run({ runs }));
    } catch (error) {
      console.error(`  BROKEN: ${describe(error)}`);
      results.push({ name: bench.name, error: error instanceof Error ? error.message : String(error) });
    }
    console.log(`  (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
  }

  console.log('== summary');
  console.log(
    table(
      ['bench', 'result', 'targets'],
      results.map((result) =>
        'error' in result
          ? [result.name, result.error.slice(0, 100), 'BROKEN']
          : [result.name, result.headline, result.targetsMet === null ? '-' : result.targetsMet ? 'met' : 'missed'],
      ),
    ),
  );
  return results.some((result) => 'error' in result) ? 1 : 0;
}

process.exitCode = await main();
