import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { RatchetError } from '../../core/errors.js';
import { resolveRatchetHome } from '../../config/load.js';
import {
  benchResult,
  runBench,
  type BenchEvent,
  type BenchMode,
  type BenchResult,
} from '../../bench/polyglot/run-bench.js';
import { BENCH_MODES } from '../../bench/polyglot/results.js';
import { honestyLine, renderBenchPage, TABLE_HEADINGS, tableRows } from '../../bench/polyglot/report-page.js';
import { configFor, createCliOutput, startServices, type ProviderFlags } from '../context.js';
import { interruptOnSignals } from '../drive-run.js';
import { EXIT } from '../exit-codes.js';
import type { Output } from '../output.js';
import type { CliSetup } from './cli-setup.js';
import { addProviderOptions } from './provider-options.js';

interface PolyglotFlags extends ProviderFlags {
  languages?: string;
  exercises?: string;
  mode: string;
  tries: string;
  workers: string;
  out?: string;
  jsCache?: string;
  testTimeout: string;
}

function positiveInteger(flag: string, value: string, max: number): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > max) {
    throw new RatchetError('usage', `${flag} must be a whole number from 1 to ${max}, got "${value}".`);
  }
  return number;
}

const list = (value: string | undefined): string[] | undefined =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== '');

/** The table of a benchmark's figures, as aligned text. */
function table(result: BenchResult): string[] {
  const rows = [[...TABLE_HEADINGS], ...tableRows(result)];
  const widths = TABLE_HEADINGS.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}

function printResult(output: Output, result: BenchResult, out: string): void {
  if (output.json) {
    output.out(JSON.stringify({ type: 'bench-summary', out, ...result }));
    return;
  }
  for (const line of table(result)) output.out(line);
  const honesty = honestyLine(result);
  if (honesty !== null) output.out(honesty);
  for (const skipped of result.skippedLanguages)
    output.out(pc.yellow(`skipped ${skipped.language}: ${skipped.reason}`));
}

function render(output: Output, event: BenchEvent): void {
  if (event.type === 'exercise-event') return;
  if (output.json) {
    output.out(JSON.stringify(event));
    return;
  }
  switch (event.type) {
    case 'language-skip':
      output.out(pc.yellow(`skip ${event.language}: ${event.reason}`));
      return;
    case 'dependencies-install':
      output.out(pc.dim(`installing the ${event.language} exercises' dependencies once into ${event.into}…`));
      return;
    case 'exercise-skip':
      output.out(
        pc.dim(
          `${event.language}/${event.exercise}: finished before (${event.passedAtTry === null ? 'failed' : `passed at try ${event.passedAtTry}`})`,
        ),
      );
      return;
    case 'exercise-start':
      output.out(pc.dim(`${event.language}/${event.exercise}: started`));
      return;
    case 'exercise-end': {
      const { record } = event;
      const verdict =
        record.status === 'error'
          ? pc.red(`error: ${record.error ?? ''}`)
          : record.passedAtTry === null
            ? pc.red('failed')
            : pc.green(`passed at try ${record.passedAtTry}`);
      const calls = record.tries.reduce((sum, entry) => sum + entry.modelCalls, 0);
      output.out(`${record.language}/${record.exercise}: ${verdict} (${calls} model calls, ${record.seconds} s)`);
    }
  }
}

/** `ratchet bench polyglot <dir>` and `ratchet bench polyglot report <DIR>`. */
export function registerBenchCommands(program: Command, cli: CliSetup): void {
  const bench = program
    .command('bench')
    .description('Measure a model through Ratchet on a public benchmark (not `npm run bench`, the project’s own)');
  const polyglot = addProviderOptions(
    bench
      .command('polyglot')
      .description(
        "Run Aider's polyglot benchmark (a checkout of github.com/Aider-AI/polyglot-benchmark): each exercise in a fresh repository, its official tests withheld from the model and run afterwards",
      )
      .argument('<benchmark-dir>', 'the benchmark checkout: <language>/exercises/practice/<exercise>/'),
  )
    .option('--languages <list>', 'comma-separated languages (default: all in the checkout)')
    .option('--exercises <list>', 'comma-separated exercise names (default: all)')
    .option(
      '--mode <mode>',
      'direct: one EXERCISE stage per try, as Aider; tdd, solve: a ratchet tdd or solve run per try, graded afterwards',
      'direct',
    )
    .option('--tries <n>', 'tries per exercise; a failed try gives the next the first 50 lines of the test output', '2')
    .option('--workers <n>', 'exercises run at once', '1')
    .option(
      '--out <dir>',
      'where the results go; the --out of an interrupted run continues it (default: polyglot-<time>)',
    )
    .option(
      '--js-cache <dir>',
      'where the JavaScript exercises’ jest is installed once (default: $RATCHET_HOME/cache/polyglot-js)',
    )
    .option('--test-timeout <seconds>', 'time limit of one run of an exercise’s tests', '180')
    .addHelpText(
      'after',
      '\nExample:\n  git clone https://github.com/Aider-AI/polyglot-benchmark\n  ANTHROPIC_API_KEY=... ratchet bench polyglot polyglot-benchmark --provider anthropic --model claude-sonnet-4-5 --workers 4 --out polyglot-sonnet\n  ratchet bench polyglot report polyglot-sonnet\n',
    )
    .action(async (dir: string, flags: PolyglotFlags, command: Command) => {
      const output = createCliOutput(command);
      if (!BENCH_MODES.includes(flags.mode as BenchMode)) {
        throw new RatchetError('usage', `--mode ${flags.mode} is not available: --mode direct, tdd and solve are.`, {
          hint: 'Run with --mode direct (one EXERCISE stage per try, the protocol of Aider’s leaderboard), --mode tdd or --mode solve (a ratchet tdd or ratchet solve run per try, graded afterwards).',
        });
      }
      const out = resolve(flags.out ?? `polyglot-${new Date().toISOString().replace(/[:.]/g, '-')}`);
      const interrupt = interruptOnSignals();
      try {
        const result = await runBench({
          benchmarkDir: resolve(dir),
          out,
          ...(flags.languages === undefined ? {} : { languages: list(flags.languages) ?? [] }),
          ...(flags.exercises === undefined ? {} : { exercises: list(flags.exercises) ?? [] }),
          mode: flags.mode as BenchMode,
          tries: positiveInteger('--tries', flags.tries, 5),
          workers: positiveInteger('--workers', flags.workers, 32),
          feedbackLines: 50,
          testTimeoutMs: positiveInteger('--test-timeout', flags.testTimeout, 86_400) * 1000,
          jsCache: resolve(flags.jsCache ?? join(resolveRatchetHome(process.env), 'cache', 'polyglot-js')),
          configFor: (repoRoot) => configFor(repoRoot, flags),
          services: startServices(),
          now: () => Date.now(),
          signal: interrupt.signal,
          onEvent: (event) => render(output, event),
        });
        if (interrupt.signal.aborted) {
          output.err(pc.red(`Interrupted; continue with the same command and --out ${out}`));
          cli.setExit(interrupt.bySigint() ? EXIT.sigint : EXIT.interrupted);
          return;
        }
        printResult(output, result, out);
        if (!output.json)
          output.out(`Results in ${pc.cyan(out)}; the page: ${pc.cyan(`ratchet bench polyglot report ${out}`)}`);
        cli.setExit(EXIT.ok);
      } finally {
        interrupt.dispose();
      }
    });

  polyglot
    .command('report')
    .description('Print the figures of a benchmark run and write its HTML page (<DIR>/report.html)')
    .argument('<dir>', 'the --out directory of a ratchet bench polyglot run')
    .action(async (dir: string, _flags: unknown, command: Command) => {
      const output = createCliOutput(command);
      const out = resolve(dir);
      const result = await benchResult(out);
      await mkdir(out, { recursive: true });
      const page = join(out, 'report.html');
      await writeFile(page, renderBenchPage(result, `Ratchet on the polyglot benchmark (${out})`));
      printResult(output, result, out);
      if (!output.json) output.out(`Page: ${pc.cyan(page)}`);
      cli.setExit(EXIT.ok);
    });
}
