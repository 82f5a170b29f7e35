import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeAnthropicServer } from '../test/support/fake-anthropic-server.js';
import { createTempRepo } from '../test/support/temp-repo.js';
import { createTasksBrain, letterTask, LETTERS_PROJECT, tasksFile } from '../test/support/tasks-brain.js';
import { formatMs, formatPercent, median, table, type Bench, type BenchOptions, type BenchSummary } from './harness.js';

/**
 * The worker pool overlaps model calls (issue 14): `ratchet tasks run` of 8 independent tasks
 * against a fake model that takes 1 s per call (the loopback Anthropic fake, replies not
 * streamed, so the second is spent once per call), with 8 workers and with 1. Each side is the
 * built CLI (`dist/bundle/bin.js`, as `ratchet` runs, with the compile cache a first run wrote) in its own
 * process on a fresh repository; its wall time and the coordinator's own
 * CPU time (utime + stime of the CLI process, its children's not counted: the tasks' pipelines
 * run in the pool's worker processes, and the tests and sandboxes are the project's work) are
 * measured, and beside it the worker processes' CPU (sampled, the last reading of each).
 * Targets: >= 6x faster with 8 workers; the coordinator's CPU < 10% of one core over the
 * 8-worker run, start-up included.
 * Shown beside it, not instead: the share from the first model call to the end, without the
 * process's start-up (loading the CLI, opening the ledger, the run's checks and worktree), which a
 * run pays once however long its model calls take.
 */

// The executable users run (`ratchet`): it turns on Node's compile cache before loading the CLI.
const CLI = fileURLToPath(new URL('../dist/bundle/bin.js', import.meta.url));
const MODEL_MS = 1000;
const TASKS = 8;
const TARGET_SPEEDUP = 6;
const TARGET_CPU_SHARE = 0.1;
const TICKS_PER_SECOND = 100;

interface SideResult {
  wallMs: number;
  cpuMs: number;
  /** Wall and CPU time from the first model call to the end. */
  afterStartWallMs: number;
  afterStartCpuMs: number;
  /** The CPU time of the run's worker processes (`task-worker.js`), summed. */
  workerCpuMs: number;
  workerProcesses: number;
  modelCalls: number;
}

/** The pids of the run's worker processes: the coordinator's children running `task-worker.js`. */
async function workerPids(pid: number): Promise<number[]> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  const pids = children.split(/\s+/).filter(Boolean).map(Number);
  const commands = await Promise.all(pids.map((child) => readFile(`/proc/${child}/cmdline`, 'utf8').catch(() => '')));
  return pids.filter((_, index) => commands[index]?.includes('task-worker.js'));
}

/** utime + stime of one process (not of its children), in ms; null once it is gone. */
async function processCpuMs(pid: number): Promise<number | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat(5), counted from the state (field 3) here.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

async function runSideOnce(workers: number, cacheHome: string): Promise<SideResult> {
  const server = await startFakeAnthropicServer({ apiKey: 'sk-ant-bench-workers-0000000000' });
  const tasks = Array.from({ length: TASKS }, (_, index) => letterTask(`T${index + 1}`, `T${index + 1}`));
  const brain = createTasksBrain(tasks, { delayMs: MODEL_MS });
  // Read when the first model call arrives (the process is waiting on it then).
  let firstCall: Promise<{ at: number; cpuMs: number | null }> | undefined;
  let pid = -1;
  server.setFallback((request) => {
    firstCall ??= processCpuMs(pid).then((cpuMs) => ({ at: performance.now(), cpuMs }));
    return brain.reply(request);
  });
  const repo = await createTempRepo({
    files: { ...LETTERS_PROJECT, '.ratchet/config.toml': '[provider]\nstream = false\n' },
  });
  try {
    const file = join(repo.root, 'tasks.json');
    await writeFile(file, tasksFile(tasks));
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [
        CLI,
        'tasks',
        'run',
        file,
        '--workers',
        String(workers),
        '--refactor',
        'never',
        '--provider',
        'anthropic',
        '--model',
        'claude-bench',
        '--json',
      ],
      {
        cwd: repo.dir,
        env: {
          ...process.env,
          ...repo.env,
          RATCHET_HOME: repo.path('ratchet-home'),
          // The compile cache outlives each side's fresh HOME, as a user's does between runs:
          // the warm-up run writes it (bench/index.ts measures the same way).
          XDG_CACHE_HOME: cacheHome,
          ANTHROPIC_BASE_URL: server.url,
          ANTHROPIC_API_KEY: 'sk-ant-bench-workers-0000000000',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // The last reading before the process ends is its CPU time (sampled: no reading after exit).
    let cpuMs = 0;
    pid = child.pid ?? -1;
    const workerCpu = new Map<number, number>();
    const sampler = setInterval(() => {
      void processCpuMs(pid).then((value) => {
        if (value !== null) cpuMs = Math.max(cpuMs, value);
      });
      void workerPids(pid).then((pids) =>
        Promise.all(
          pids.map(async (worker) => {
            const value = await processCpuMs(worker);
            if (value !== null) workerCpu.set(worker, Math.max(workerCpu.get(worker) ?? 0, value));
          }),
        ),
      );
    }, 100);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearInterval(sampler);
    const wallMs = performance.now() - started;
    if (code !== 0)
      throw new Error(`tasks run with ${workers} worker(s) exited ${String(code)}: ${stderr.slice(-2000)}`);
    const first = await firstCall;
    if (first?.cpuMs === null || first === undefined) throw new Error('no model call arrived while the run was alive');
    return {
      wallMs,
      cpuMs,
      afterStartWallMs: started + wallMs - first.at,
      afterStartCpuMs: cpuMs - first.cpuMs,
      workerCpuMs: [...workerCpu.values()].reduce((sum, value) => sum + value, 0),
      workerProcesses: workerCpu.size,
      modelCalls: brain.calls.length,
    };
  } finally {
    await server.close();
    await repo.cleanup();
  }
}

/** `<CPU> / <wall> = <share>` from the first model call on (medians). */
function afterStart(sides: readonly SideResult[]): string {
  const cpu = median(sides.map((side) => side.afterStartCpuMs));
  const wall = median(sides.map((side) => side.afterStartWallMs));
  return `${formatMs(cpu)} / ${formatMs(wall)} = ${formatPercent(median(sides.map((side) => side.afterStartCpuMs / side.afterStartWallMs)))}`;
}

/** `<CPU> in <n> process(es)` of the worker processes (medians). */
function workerCpu(sides: readonly SideResult[]): string {
  const processes = median(sides.map((side) => side.workerProcesses));
  return `${formatMs(median(sides.map((side) => side.workerCpuMs)))} in ${processes} process${processes === 1 ? '' : 'es'}`;
}

export const workersBench: Bench = {
  name: 'workers',
  description: `tasks run: ${TASKS} independent tasks, a model taking ${MODEL_MS} ms per call, 8 workers vs 1`,
  async run(options: BenchOptions): Promise<BenchSummary> {
    const eight: SideResult[] = [];
    const one: SideResult[] = [];
    const cacheHome = await mkdtemp(join(tmpdir(), 'ratchet-bench-workers-cache-'));
    try {
      await runSideOnce(8, cacheHome); // warm-up: the compile cache written
      for (let run = 0; run < options.runs; run++) {
        eight.push(await runSideOnce(8, cacheHome));
        one.push(await runSideOnce(1, cacheHome));
      }
    } finally {
      await rm(cacheHome, { recursive: true, force: true });
    }
    const wall8 = median(eight.map((side) => side.wallMs));
    const wall1 = median(one.map((side) => side.wallMs));
    const cpu8 = median(eight.map((side) => side.cpuMs / side.wallMs));
    const speedup = wall1 / wall8;
    console.log(
      table(
        [
          'workers',
          'wall',
          'coordinator CPU',
          'CPU / wall',
          'after start-up: CPU / wall',
          'worker processes: CPU',
          'model calls',
        ],
        [
          [
            '8',
            formatMs(wall8),
            formatMs(median(eight.map((side) => side.cpuMs))),
            formatPercent(cpu8),
            afterStart(eight),
            workerCpu(eight),
            String(eight[0]?.modelCalls ?? 0),
          ],
          [
            '1',
            formatMs(wall1),
            formatMs(median(one.map((side) => side.cpuMs))),
            formatPercent(median(one.map((side) => side.cpuMs / side.wallMs))),
            afterStart(one),
            workerCpu(one),
            String(one[0]?.modelCalls ?? 0),
          ],
        ],
      ),
    );
    return {
      name: 'workers',
      headline: `8 workers ${speedup.toFixed(1)}x faster than 1 (target >= ${TARGET_SPEEDUP}x); coordinator CPU ${formatPercent(cpu8)} of a core (target < ${formatPercent(TARGET_CPU_SHARE)})`,
      targetsMet: speedup >= TARGET_SPEEDUP && cpu8 < TARGET_CPU_SHARE,
    };
  },
};
