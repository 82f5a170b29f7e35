import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  formatMb,
  formatMs,
  formatPercent,
  git,
  median,
  runSide,
  table,
  type Bench,
  type BenchOptions,
  type BenchSummary,
} from './harness.js';
import type { PlainSideJob, PlainSideResult } from './tdd-plain-side.js';
import type { RatchetSideJob, RatchetSideResult } from './tdd-ratchet-side.js';

/**
 * TDD orchestration overhead (the issue: "the same kata through `ratchet tdd` with a zero-latency
 * fake model versus a plain script that performs the same test runs and commits").
 *
 * - Ratchet side (`tdd-ratchet-side.ts`): the demo kata, set up as `ratchet demo` does, through
 *   `startTdd` of the built engine with the scripted replay cassette.
 * - Plain side (`tdd-plain-side.ts`): a fresh copy of the kata; the Ratchet run's stored events
 *   replayed as bare effects (file writes, the same test commands, commits + notes, discards and
 *   rollbacks). Both sides end on the same git tree, which is checked.
 *
 * Each side runs in its own plain `node` process, alternating, after one warm-up pair; medians
 * are reported. Targets: ratio <= 1.3x and < 50 ms of orchestration per stage attempt. The
 * sandbox's cost is measured alongside: the same Ratchet run with `--no-sandbox` (no target).
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RATCHET_SIDE = fileURLToPath(new URL('./tdd-ratchet-side.ts', import.meta.url));
const PLAIN_SIDE = fileURLToPath(new URL('./tdd-plain-side.ts', import.meta.url));
/** The demo's feature (src/cli/commands/demo-command.ts). */
const FEATURE = 'A stack with push, pop and peek; popping an empty stack throws';
const TARGET_RATIO = 1.3;
const TARGET_MS_PER_STAGE = 50;

interface Pair {
  ratchet: RatchetSideResult;
  plain: PlainSideResult;
  /** The same Ratchet run with `--no-sandbox`. */
  unsandboxed: RatchetSideResult;
}

/** A copy of demo/kata with `main` and an initial commit, as `ratchet demo` makes it. */
async function kataRepo(prefix: string): Promise<{ base: string; repo: string }> {
  const base = await mkdtemp(join(tmpdir(), prefix));
  const repo = join(base, 'stack-kata');
  await cp(join(ROOT, 'demo', 'kata'), repo, { recursive: true, errorOnExist: true, force: false });
  await git(repo, ['init', '--quiet', '--initial-branch=main']);
  await git(repo, ['add', '-A']);
  await git(repo, ['commit', '--quiet', '-m', 'Initial commit: stack kata']);
  return { base, repo };
}

async function branchShape(repo: string, from: string, to: string): Promise<string> {
  const tree = (await git(repo, ['rev-parse', `${to}^{tree}`])).trim();
  const commits = (await git(repo, ['rev-list', '--count', `${from}..${to}`])).trim();
  return `tree ${tree}, ${commits} commits`;
}

/** One Ratchet run, then the plain script replaying it; checks that both left the same branch. */
async function runPair(): Promise<Pair> {
  const ratchetDirs = await kataRepo('ratchet-bench-tdd-');
  const job: RatchetSideJob = {
    repo: ratchetDirs.repo,
    home: join(ratchetDirs.base, 'ratchet-home'),
    cassette: join(ROOT, 'demo', 'cassette.ndjson'),
    feature: FEATURE,
  };
  const ratchet = await runSide<RatchetSideJob, RatchetSideResult>(RATCHET_SIDE, job).catch((error: unknown) => {
    throw new Error(`The Ratchet side broke (left in ${ratchetDirs.base})`, { cause: error });
  });
  const expected = await branchShape(ratchetDirs.repo, ratchet.baseCommit, ratchet.branch);
  const plainDirs = await kataRepo('ratchet-bench-plain-');
  const plainJob: PlainSideJob = { repo: plainDirs.repo, baseCommit: ratchet.baseCommit, events: ratchet.events };
  const plain = await runSide<PlainSideJob, PlainSideResult>(PLAIN_SIDE, plainJob).catch((error: unknown) => {
    throw new Error(`The plain side broke (left in ${plainDirs.base})`, { cause: error });
  });
  const initial = (await git(plainDirs.repo, ['rev-list', '--max-parents=0', 'HEAD'])).trim();
  const actual = await branchShape(plainDirs.repo, initial, 'HEAD');
  if (actual !== expected) {
    throw new Error(
      `The plain script diverged from the Ratchet run: ${actual} vs ${expected} (left in ${plainDirs.base} and ${ratchetDirs.base})`,
    );
  }
  await rm(ratchetDirs.base, { recursive: true, force: true });
  await rm(plainDirs.base, { recursive: true, force: true });
  const offDirs = await kataRepo('ratchet-bench-nosandbox-');
  const offJob: RatchetSideJob = {
    ...job,
    repo: offDirs.repo,
    home: join(offDirs.base, 'ratchet-home'),
    sandbox: 'off',
  };
  const unsandboxed = await runSide<RatchetSideJob, RatchetSideResult>(RATCHET_SIDE, offJob).catch((error: unknown) => {
    throw new Error(`The unsandboxed Ratchet side broke (left in ${offDirs.base})`, { cause: error });
  });
  await rm(offDirs.base, { recursive: true, force: true });
  return { ratchet, plain, unsandboxed };
}

function range(values: readonly number[]): string {
  return `${formatMs(Math.min(...values))} – ${formatMs(Math.max(...values))}`;
}

function verdict(met: boolean): string {
  return met ? 'met' : 'MISSED';
}

export const tddOverheadBench: Bench = {
  name: 'tdd-overhead',
  description:
    'the demo kata through `ratchet tdd` (zero-latency replay model) vs a plain script doing the same test runs and commits',
  async run(options: BenchOptions): Promise<BenchSummary> {
    if (!existsSync(join(ROOT, 'dist', 'engine', 'tdd-run.js'))) {
      throw new Error('dist/ is missing: run the benchmarks with `npm run bench`, which builds it first.');
    }
    const loadBefore = loadavg()[0] ?? 0;
    const pairs: Pair[] = [];
    for (let index = 0; index <= options.runs; index++) {
      const pair = await runPair();
      const label = index === 0 ? 'warm-up' : `run ${index}/${options.runs}`;
      console.log(
        `  ${label.padEnd(9)} ratchet ${formatMs(pair.ratchet.wallMs).padStart(8)}   plain ${formatMs(pair.plain.wallMs).padStart(8)}` +
          `   ratio ${(pair.ratchet.wallMs / pair.plain.wallMs).toFixed(2)}x` +
          `   no sandbox ${formatMs(pair.unsandboxed.wallMs).padStart(8)}`,
      );
      if (index > 0) pairs.push(pair);
    }
    const loadAfter = loadavg()[0] ?? 0;
    const first = pairs[0]?.ratchet;
    if (!first) throw new Error('No measured runs (--runs must be at least 1).');
    for (const { ratchet } of pairs) {
      if (
        ratchet.stageAttempts !== first.stageAttempts ||
        ratchet.testRuns !== first.testRuns ||
        ratchet.commits !== first.commits
      ) {
        throw new Error('The Ratchet runs did not all do the same work (stage attempts, test runs or commits differ).');
      }
    }

    const ratchetRuns = pairs.map((pair) => pair.ratchet);
    const plainRuns = pairs.map((pair) => pair.plain);
    const pick = <T>(samples: readonly T[], get: (sample: T) => number): number => median(samples.map(get));
    const ratchetWall = pick(ratchetRuns, (s) => s.wallMs);
    const plainWall = pick(plainRuns, (s) => s.wallMs);
    const ratchetTests = pick(ratchetRuns, (s) => s.testMs);
    const plainTests = pick(plainRuns, (s) => s.testMs);
    const ratchetOther = pick(ratchetRuns, (s) => s.wallMs - s.testMs - s.bashMs);
    const plainOther = pick(plainRuns, (s) => s.wallMs - s.testMs - s.bashMs);
    const ratio = ratchetWall / plainWall;
    // Each pair ran back to back, so its ratio is less exposed to load that drifts during the bench.
    const pairedRatio = median(pairs.map((pair) => pair.ratchet.wallMs / pair.plain.wallMs));
    const perStage = (ratchetWall - plainWall) / first.stageAttempts;
    // The sandbox's cost: the same run with and without it, per command it wrapped.
    const unsandboxedWall = pick(pairs, (pair) => pair.unsandboxed.wallMs);
    const sandboxRatio = median(pairs.map((pair) => pair.ratchet.wallMs / pair.unsandboxed.wallMs));
    const sandboxedCommands = first.testRuns + first.bashRuns;
    const perCommand = (ratchetWall - unsandboxedWall) / sandboxedCommands;
    const perStageBeyondTests = (ratchetOther - plainOther) / first.stageAttempts;
    const memory = {
      rssLoaded: Math.max(...ratchetRuns.map((s) => s.memory.rssLoaded)),
      peakRss: Math.max(...ratchetRuns.map((s) => s.memory.peakRss)),
      peakHeapUsed: Math.max(...ratchetRuns.map((s) => s.memory.peakHeapUsed)),
      maxRss: Math.max(...ratchetRuns.map((s) => s.memory.maxRss)),
    };

    console.log('');
    console.log(
      `  work per run: ${first.stageAttempts} stage attempts, ${first.testRuns} test runs (+${first.bashRuns} agent Bash), ` +
        `${first.commits} commits with notes, ${first.modelCalls} model calls, ${first.toolCalls} tool calls; both sides end on the same tree`,
    );
    console.log('');
    console.log(
      table(
        ['', 'ratchet tdd', 'plain script', 'Ratchet / plain'],
        [
          [`wall time, median of ${options.runs}`, formatMs(ratchetWall), formatMs(plainWall), `${ratio.toFixed(2)}x`],
          ['wall time, range', range(ratchetRuns.map((s) => s.wallMs)), range(plainRuns.map((s) => s.wallMs)), ''],
          ['median of the per-pair ratios', '', '', `${pairedRatio.toFixed(2)}x`],
          [
            `test runs (${first.testRuns}), summed`,
            formatMs(ratchetTests),
            formatMs(plainTests),
            `${(ratchetTests / plainTests).toFixed(2)}x`,
          ],
          [
            `agent Bash (${first.bashRuns}), summed`,
            formatMs(pick(ratchetRuns, (s) => s.bashMs)),
            formatMs(pick(plainRuns, (s) => s.bashMs)),
            '',
          ],
          [
            'test-run share of wall time',
            formatPercent(ratchetTests / ratchetWall),
            formatPercent(plainTests / plainWall),
            '',
          ],
          [
            'everything else (wall - tests - Bash)',
            formatMs(ratchetOther),
            formatMs(plainOther),
            `${(ratchetOther / plainOther).toFixed(2)}x`,
          ],
          [
            `sandbox: same run with --no-sandbox (${sandboxedCommands} commands)`,
            formatMs(ratchetWall),
            formatMs(unsandboxedWall),
            `${sandboxRatio.toFixed(2)}x, ${perCommand.toFixed(0)} ms/command`,
          ],
          [
            'one git process from that process',
            `${pick(ratchetRuns, (s) => s.gitSpawnMs).toFixed(1)} ms`,
            `${pick(plainRuns, (s) => s.gitSpawnMs).toFixed(1)} ms`,
            '',
          ],
        ],
      ),
    );
    console.log('');
    console.log(
      `  memory of the Ratchet process: RSS ${formatMb(memory.rssLoaded)} with the engine loaded, peak ${formatMb(memory.peakRss)} ` +
        `during the run (sampled every 10 ms; heap used peak ${formatMb(memory.peakHeapUsed)}), maxRSS ${formatMb(memory.maxRss)}.`,
    );
    console.log(
      `  bench process maxRSS ${formatMb(process.resourceUsage().maxRSS * 1024)}. Test runners and git are child processes of each side, not included.`,
    );
    const busy = Math.max(loadBefore, loadAfter) > availableParallelism();
    console.log(
      `  load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after, on ${availableParallelism()} CPUs` +
        (busy ? ': the machine was busy, expect noise.' : '.'),
    );
    console.log('');
    const ratioMet = ratio <= TARGET_RATIO;
    const perStageMet = perStage < TARGET_MS_PER_STAGE;
    console.log(
      table(
        ['target', 'measured', 'goal', 'verdict'],
        [
          ['ratio ratchet / plain (medians)', `${ratio.toFixed(2)}x`, `<= ${TARGET_RATIO}x`, verdict(ratioMet)],
          [
            `orchestration per stage attempt (${first.stageAttempts})`,
            `${perStage.toFixed(1)} ms`,
            `< ${TARGET_MS_PER_STAGE} ms`,
            verdict(perStageMet),
          ],
          [
            '  same, with the test-run times taken out',
            `${perStageBeyondTests.toFixed(1)} ms`,
            `< ${TARGET_MS_PER_STAGE} ms`,
            verdict(perStageBeyondTests < TARGET_MS_PER_STAGE),
          ],
        ],
      ),
    );
    return {
      name: 'tdd-overhead',
      headline:
        `${ratio.toFixed(2)}x (goal <= ${TARGET_RATIO}x), ${perStage.toFixed(0)} ms/stage (goal < ${TARGET_MS_PER_STAGE}), ` +
        `sandbox ${sandboxRatio.toFixed(2)}x (${perCommand.toFixed(0)} ms/command), peak RSS ${formatMb(memory.peakRss)}`,
      targetsMet: ratioMet && perStageMet,
    };
  },
};
