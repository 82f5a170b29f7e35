import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatMs, median, table, type Bench, type BenchOptions, type BenchSummary } from './harness.js';

/**
 * CLI start-up bench (issue 13; bundling, issue 14): the wall time of a fresh `ratchet` process,
 * spawn to exit, for `--version`, `--help` and `status` (in a repository without runs: the status
 * command's code is loaded, the ledger found missing), three ways, measured in the same run:
 * - `bundled`: the executable users run (`dist/bundle/bin.js`, scripts/bundle-cli.ts);
 * - `unbundled`: the same code as tsc emits it (`dist/cli/bin.js`), one file per module;
 * - `every command`: the unbundled CLI with every command file imported before it starts (the
 *   start-up of the eager command table, which imported them all);
 * and a bare `node -e 0` (Node's own start-up, the floor).
 *
 * Every side runs with the same Node compile cache (`NODE_COMPILE_CACHE`, written by a warm-up
 * run of each case), as an installed `ratchet` has after its first run. The machine may be shared:
 * each case is the median of `runs x 5` spawns, with the load average printed beside it.
 *
 * `tsx bench/cli-startup.ts` runs it alone.
 */

const PROJECT = dirname(dirname(fileURLToPath(import.meta.url)));
const BIN = join(PROJECT, 'dist', 'bundle', 'bin.js');
const UNBUNDLED = join(PROJECT, 'dist', 'cli', 'bin.js');
const COMMANDS_DIR = join(PROJECT, 'dist', 'cli', 'commands');
const CASES: readonly (readonly string[])[] = [['--version'], ['--help'], ['status']];

/** A preload that imports every command file, as `ratchet` did before the table was lazy. */
function everyCommandPreload(): string {
  const files = readdirSync(COMMANDS_DIR).filter((name) => /-commands?\.js$/.test(name));
  const imports = files.map((name) => `await import(${JSON.stringify(pathToFileURL(join(COMMANDS_DIR, name)).href)});`);
  return `data:text/javascript,${encodeURIComponent(imports.join('\n'))}`;
}

/** Wall time of one spawn of `node <args>` in `cwd` (any exit code: `status` without runs exits 2). */
function timeSpawn(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { cwd, env, stdio: 'ignore' });
  const ms = performance.now() - started;
  if (result.error) throw result.error;
  if (result.signal !== null) throw new Error(`node ${args.join(' ')} was killed by ${result.signal}`);
  return ms;
}

interface CliStartupResult {
  /** Per case (`--version`, `--help`, `status`): median wall times in ms. */
  cases: { args: string; bundled: number; unbundled: number; eager: number }[];
  node: number;
}

/** Runs the bench and returns its numbers; prints a table through `log` (default console.log). */
async function runCliStartupBench(options: BenchOptions & { log?: (line: string) => void }): Promise<CliStartupResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const work = await mkdtemp(join(tmpdir(), 'ratchet-bench-startup-'));
  try {
    const repo = join(work, 'repo');
    execFileSync('git', ['init', '-q', repo]);
    const env = {
      ...process.env,
      NODE_COMPILE_CACHE: join(work, 'compile-cache'),
      RATCHET_HOME: join(work, 'home'),
      NO_COLOR: '1',
    };
    const spawns = options.runs * 5;
    const sample = (args: readonly string[]): number => {
      timeSpawn(args, repo, env);
      return median(Array.from({ length: spawns }, () => timeSpawn(args, repo, env)));
    };
    const preload = everyCommandPreload();
    const cases = CASES.map((args) => ({
      args: args.join(' '),
      bundled: sample([BIN, ...args]),
      unbundled: sample([UNBUNDLED, ...args]),
      eager: sample(['--import', preload, UNBUNDLED, ...args]),
    }));
    const node = sample(['-e', '0']);
    log(
      table(
        ['ratchet', 'bundled', 'unbundled', 'every command imported', 'bundled / unbundled'],
        cases.map(({ args, bundled, unbundled, eager }) => [
          args,
          formatMs(bundled),
          formatMs(unbundled),
          formatMs(eager),
          `${(bundled / unbundled).toFixed(2)}x`,
        ]),
      ),
    );
    log(`node -e 0: ${formatMs(node)}; median of ${spawns} spawns each; load average ${loadavg()[0]?.toFixed(2)}`);
    return { cases, node };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export const cliStartupBench: Bench = {
  name: 'cli-startup',
  description: 'a fresh `ratchet --version`, `--help` and `status`: the bundle against the unbundled CLI',
  async run(options: BenchOptions): Promise<BenchSummary> {
    const { cases } = await runCliStartupBench(options);
    return {
      name: 'cli-startup',
      headline: `bundled / unbundled: ${cases.map(({ args, bundled, unbundled }) => `${args} ${(bundled / unbundled).toFixed(2)}x`).join(', ')}`,
      targetsMet: null,
    };
  },
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runCliStartupBench({ runs: 3 });
}
