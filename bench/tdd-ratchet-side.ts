/**
 * The Ratchet side of `tdd-overhead`, run by `bench/tdd-overhead.ts` as a plain `node` process:
 * `node bench/tdd-ratchet-side.ts <job.json> <result.json>`.
 *
 * It drives `startRun` of the TDD workflow in the built engine (`dist/`, what `ratchet` runs) with the demo's
 * configuration: the replay provider on the scripted cassette (zero latency), RATCHET_HOME in
 * the job's directory, a file ledger, the real process runner, clock and ids.
 *
 * Node runs this file by stripping its types, so it imports nothing but `node:` modules, `dist/`
 * by URL, and types (`import type` only: it is erased).
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { RatchetEvent } from '../src/core/events.js';
import type { EngineServices } from '../src/engine/effects.js';
import type { RunOutcome } from '../src/engine/run-process.js';

export interface RatchetSideJob {
  repo: string;
  home: string;
  cassette: string;
  feature: string;
  /** `off`: the same run without the sandbox (`--no-sandbox`), to measure what the sandbox costs. */
  sandbox?: 'on' | 'off';
}

export interface RatchetSideResult {
  wallMs: number;
  runId: string;
  branch: string;
  baseCommit: string;
  stageAttempts: number;
  modelCalls: number;
  toolCalls: number;
  testRuns: number;
  /** Summed `durationMs` of the test runs (`verify-end` of kind test/baseline). */
  testMs: number;
  /** Bash commands of the scripted agent (e.g. `npm test`) and their summed duration. */
  bashRuns: number;
  bashMs: number;
  commits: number;
  /** Bytes: after loading Ratchet, peak during the run (sampled), and getrusage's maxRSS at the end. */
  memory: { rssLoaded: number; peakRss: number; peakHeapUsed: number; maxRss: number };
  /** Median wall time of one `git rev-parse HEAD` spawned from this process after the run. */
  gitSpawnMs: number;
  /** The run's stored events (`ledger.events`), for the plain script to replay. */
  events: RatchetEvent[];
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

async function load<T>(relative: string): Promise<T> {
  return (await import(pathToFileURL(join(ROOT, 'dist', relative)).href)) as T;
}

/** Median time of short git commands spawned from this process (`fork` cost grows with its size). */
async function gitSpawnCost(cwd: string, probes = 15): Promise<number> {
  const times: number[] = [];
  for (let probe = 0; probe < probes; probe++) {
    const started = performance.now();
    await new Promise<void>((resolve, reject) => {
      const child = spawn('git', ['rev-parse', '--verify', 'HEAD'], { cwd, stdio: 'ignore' });
      child.on('error', reject);
      child.on('close', () => resolve());
    });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

async function main(jobFile: string, resultFile: string): Promise<void> {
  const job = JSON.parse(await readFile(jobFile, 'utf8')) as RatchetSideJob;
  const [startModule, tddModule, configLoad, ledgerModule, runnerModule, effects, runPaths] = await Promise.all([
    load<typeof import('../src/engine/start-run.js')>('engine/start-run.js'),
    load<typeof import('../src/workflows/tdd/definition.js')>('workflows/tdd/definition.js'),
    load<typeof import('../src/config/load.js')>('config/load.js'),
    load<typeof import('../src/ledger/ledger.js')>('ledger/ledger.js'),
    load<typeof import('../src/process/runner.js')>('process/runner.js'),
    load<typeof import('../src/engine/effects.js')>('engine/effects.js'),
    load<typeof import('../src/engine/run-paths.js')>('engine/run-paths.js'),
  ]);
  const rssLoaded = process.memoryUsage.rss();
  let peakRss = rssLoaded;
  let peakHeapUsed = 0;
  const sample = (): void => {
    const { rss, heapUsed } = process.memoryUsage();
    peakRss = Math.max(peakRss, rss);
    peakHeapUsed = Math.max(peakHeapUsed, heapUsed);
  };
  const sampler = setInterval(sample, 10);

  const started = performance.now();
  const config = await configLoad.loadConfig({
    repoRoot: job.repo,
    env: { ...process.env, RATCHET_HOME: job.home },
    flags: {
      provider: 'replay',
      cassette: job.cassette,
      model: 'scripted-demo-model',
      refactor: 'always',
      ...(job.sandbox === 'off' ? { noSandbox: true } : {}),
    },
  });
  const ledger = await ledgerModule.openLedger(runPaths.ledgerPath(job.repo), {
    secrets: ledgerModule.secretsFromEnv(process.env),
  });
  try {
    const clock = effects.systemClock;
    const services: EngineServices = {
      ledger,
      clock,
      ids: effects.createIdGenerator(clock),
      runner: runnerModule.createProcessRunner(),
      env: process.env,
    };
    const counts = {
      stageAttempts: 0,
      modelCalls: 0,
      toolCalls: 0,
      testRuns: 0,
      testMs: 0,
      bashRuns: 0,
      bashMs: 0,
      commits: 0,
    };
    let baseCommit = '';
    let branch = '';
    const run = startModule.startRun(
      tddModule.tddWorkflow,
      { directory: job.repo, request: { feature: job.feature }, config, allowDirty: false },
      services,
    );
    let step = await run.next();
    while (step.done !== true) {
      const event = step.value;
      if (event.type === 'run-start') {
        baseCommit = event.baseCommit;
        branch = event.branch;
      } else if (event.type === 'stage-start') counts.stageAttempts++;
      else if (event.type === 'model-call') counts.modelCalls++;
      else if (event.type === 'checkpoint-create') counts.commits++;
      else if (event.type === 'tool-call') {
        counts.toolCalls++;
        if (event.tool === 'Bash') {
          counts.bashRuns++;
          counts.bashMs += event.durationMs;
        }
      } else if (event.type === 'verify-end' && (event.kind === 'test' || event.kind === 'baseline')) {
        counts.testRuns++;
        counts.testMs += event.result.durationMs;
      }
      step = await run.next();
    }
    const outcome: RunOutcome = step.value;
    const wallMs = performance.now() - started;
    clearInterval(sampler);
    sample();
    if (outcome.status !== 'completed') {
      throw new Error(`The Ratchet run ${outcome.status}: ${outcome.error?.message ?? 'no error recorded'}`);
    }
    const result: RatchetSideResult = {
      ...counts,
      wallMs,
      runId: outcome.runId,
      branch,
      baseCommit,
      memory: { rssLoaded, peakRss, peakHeapUsed, maxRss: process.resourceUsage().maxRSS * 1024 },
      gitSpawnMs: await gitSpawnCost(job.repo),
      events: await ledger.events(outcome.runId),
    };
    await writeFile(resultFile, JSON.stringify(result));
  } finally {
    clearInterval(sampler);
    await ledger.close();
  }
}

const [jobFile, resultFile] = process.argv.slice(2);
if (jobFile === undefined || resultFile === undefined) {
  console.error('usage: node bench/tdd-ratchet-side.ts <job.json> <result.json>');
  process.exitCode = 2;
} else {
  await main(jobFile, resultFile);
}
