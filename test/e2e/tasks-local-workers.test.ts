/**
 * `ratchet tasks run` runs its tasks in local worker processes (issue 14): the coordinator
 * schedules, merges and records; the pipelines run in processes it starts. A user who kills one
 * of them (the pid is in the progress) loses nothing: the killed worker's task starts again on
 * another worker as its next delivery, on a branch made anew from its start point, and the run
 * ends with every task merged once, the ledger telling which worker ran what.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { ANTHROPIC_FLAGS, createProjectRepo, E2E_API_KEY, ratchetEnv, type ProjectRepo } from '../support/e2e-run.js';
import { CLI, cliEnv, describeResult, parseNdjson, runCli, type CliResult } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import {
  createTasksBrain,
  letterTask,
  LETTERS_PROJECT,
  tasksFile,
  taskUpdatesOf,
  type TasksBrain,
} from '../support/tasks-brain.js';
import { until } from '../support/wait-until.js';

const sandbox = sandboxForThisMachine();

// A, B, C independent; D needs A; E needs B and C.
const TASKS = [
  letterTask('A', 'A'),
  letterTask('B', 'B'),
  letterTask('C', 'C'),
  letterTask('D', 'AD', ['A']),
  letterTask('E', 'BCE', ['B', 'C']),
];
/** The task whose worker process is killed while the model works on its GREEN stage. */
const KILLED_TASK = 'C';

/**
 * A fake model whose first call for `hold` (`<task> <stage>`) is answered only after 30 s; the
 * returned function says whether it arrived.
 */
function holdingServer(server: FakeAnthropicServer, brain: TasksBrain, hold: string): () => boolean {
  let held = false;
  server.setFallback((request) => {
    const reply = brain.reply(request);
    if (!held && brain.calls.at(-1) === hold) {
      held = true;
      return { ...reply, delayMs: 30_000 };
    }
    return reply;
  });
  return () => held;
}

/** `ratchet tasks run` of the built CLI as a user starts it, its output read as it comes. */
function startTasksRun(
  repo: ProjectRepo,
  server: FakeAnthropicServer,
  args: readonly string[],
  options: { detached?: boolean } = {},
): { child: ChildProcess; stdout(): string; exited: Promise<CliResult> } {
  const child = spawn(
    process.execPath,
    [CLI, 'tasks', 'run', ...args, ...ANTHROPIC_FLAGS, ...sandbox.flags, '--json'],
    {
      cwd: repo.dir,
      env: cliEnv(ratchetEnv(repo, server)),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.detached === true,
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
  const exited = new Promise<CliResult>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ exitCode: code ?? -1, stdout, stderr });
    }),
  );
  return { child, stdout: () => stdout, exited };
}

/** The pids of the processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

describe.skipIf(process.platform !== 'linux')(
  'ratchet tasks run: local worker processes, one killed with SIGKILL mid-task',
  () => {
    let server: FakeAnthropicServer;
    let repo: ProjectRepo;
    let result: CliResult;
    let runId: string;
    let killedPid = 0;
    let workerPids: number[] = [];
    const brain = createTasksBrain(TASKS);

    beforeAll(async () => {
      server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
      // The killed task's first GREEN call is answered slowly: its worker is killed while it waits.
      const held = holdingServer(server, brain, `${KILLED_TASK} GREEN`);
      repo = await createProjectRepo(LETTERS_PROJECT);
      const file = join(repo.root, 'tasks.json');
      await writeFile(file, tasksFile(TASKS));
      const run = startTasksRun(repo, server, [file, '--workers', '3', '--refactor', 'never']);
      await until(`${KILLED_TASK}'s GREEN call arrives`, held);
      // The worker named in C's progress, as a user reads it: `worker-N pid P`.
      const running = taskUpdatesOf(parseNdjson(run.stdout())).find(
        (update) => update.task === KILLED_TASK && update.status === 'running',
      );
      const pid = /\bpid (\d+)$/.exec(running?.worker ?? '')?.[1];
      if (pid === undefined)
        throw new Error(`No worker pid in ${KILLED_TASK}'s progress: ${run.stdout().slice(-2000)}`);
      killedPid = Number(pid);
      workerPids = childrenOf(run.child.pid ?? 0);
      process.kill(killedPid, 'SIGKILL');
      result = await run.exited;
      runId = z
        .object({ runId: z.string() })
        .parse(parseNdjson(result.stdout).find((event) => event.type === 'run-start')).runId;
    }, 330_000);

    afterAll(async () => {
      await server?.close();
      await repo?.cleanup();
    });

    it('killed a worker process of the coordinator, not the coordinator', () => {
      expect(workerPids).toContain(killedPid);
    });

    it('merges every task into the run branch, each task once, and the run branch passes its tests', () => {
      expect(result.exitCode, describeResult(result)).toBe(0);
      expect(brain.unexpected).toEqual([]);
      const updates = taskUpdatesOf(parseNdjson(result.stdout));
      const merged = updates.filter((update) => update.status === 'merged').map((update) => update.task);
      expect(merged.sort()).toEqual(['A', 'B', 'C', 'D', 'E']);
      const branch = `ratchet/${runId}`;
      for (const task of TASKS) {
        expect(repo.run('show', `${branch}:${task.implFile}`)).toBe(task.impl.trimEnd());
        // Each task's commits are on the run branch once: its test (with the stub), its implementation.
        const subjects = repo.run('log', '--format=%s', branch, '--', task.implFile).split('\n');
        expect(subjects, task.key).toHaveLength(2);
      }
    });

    it("says the worker stopped, and never merges the killed worker's commits", () => {
      const warnings = parseNdjson(result.stdout).flatMap((event) =>
        event.type === 'warning' && typeof event.message === 'string' ? [event.message] : [],
      );
      expect(warnings).toContainEqual(
        expect.stringContaining(`${KILLED_TASK}: worker process ${killedPid} stopped (signal SIGKILL)`),
      );
      expect(warnings).toContainEqual(expect.stringMatching(new RegExp(`^${KILLED_TASK}: re-delivered to worker-`)));
      // Its first delivery's RED commit was recorded, then the second delivery made its own on a
      // branch made anew from the start point: the run branch holds the task's commits once
      // (checked above), never the dead worker's beside the second delivery's.
      const reds = parseNdjson(result.stdout).filter(
        (event) => event.type === 'checkpoint-create' && event.task === KILLED_TASK && event.stage === 'RED',
      );
      expect(reds).toHaveLength(2);
      const subjects = repo.run('log', '--format=%s', `ratchet/${runId}`, '--', TASKS[2]?.testFile ?? '').split('\n');
      expect(subjects).toHaveLength(1);
    });

    it('tells which worker ran which task, and that the killed one was re-delivered (tasks status)', async () => {
      const env = ratchetEnv(repo, server);
      const json = await runCli(['tasks', 'status', runId, '--json'], { cwd: repo.dir, env });
      expect(json.exitCode, describeResult(json)).toBe(0);
      const starts = z
        .object({ starts: z.array(z.object({ task: z.string(), worker: z.string(), delivery: z.number() })) })
        .parse(JSON.parse(json.stdout)).starts;
      const killed = starts.filter((start) => start.task === KILLED_TASK);
      expect(killed.map((start) => start.delivery)).toEqual([1, 2]);
      expect(killed[0]?.worker).toMatch(new RegExp(`pid ${killedPid}$`));
      expect(killed[1]?.worker).not.toMatch(new RegExp(`pid ${killedPid}$`));
      for (const task of TASKS.filter((entry) => entry.key !== KILLED_TASK))
        expect(starts.filter((start) => start.task === task.key).map((start) => start.delivery)).toEqual([1]);
    });

    it('leaves no worker process behind, and the checkout as it was', () => {
      for (const pid of workerPids) expect(() => process.kill(pid, 0), String(pid)).toThrow();
      expect(repo.run('status', '--porcelain')).toBe('');
    });
  },
);

describe.skipIf(process.platform !== 'linux')(
  'ratchet tasks run: Ctrl-C in the terminal (SIGINT to the coordinator and its worker processes)',
  () => {
    let server: FakeAnthropicServer;
    let repo: ProjectRepo;
    let interrupted: CliResult;
    let workerPids: number[] = [];
    const tasks = [letterTask('A', 'A'), letterTask('B', 'B'), letterTask('C', 'AC', ['A'])];
    const brain = createTasksBrain(tasks);

    beforeAll(async () => {
      server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
      const held = holdingServer(server, brain, 'B GREEN');
      repo = await createProjectRepo(LETTERS_PROJECT);
      const file = join(repo.root, 'tasks.json');
      await writeFile(file, tasksFile(tasks));
      // Its own process group, as a terminal's foreground job: Ctrl-C signals every process in it.
      const run = startTasksRun(repo, server, [file, '--workers', '2', '--refactor', 'never'], { detached: true });
      await until('B GREEN call arrives', held);
      workerPids = childrenOf(run.child.pid ?? 0).filter((pid) =>
        readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('task-worker'),
      );
      process.kill(-(run.child.pid ?? 0), 'SIGINT');
      interrupted = await run.exited;
    }, 330_000);

    afterAll(async () => {
      await server?.close();
      await repo?.cleanup();
    });

    it('stops the run (exit 130, interrupted) and every worker process with it', () => {
      expect(interrupted.exitCode, describeResult(interrupted)).toBe(130);
      expect(workerPids.length).toBeGreaterThan(0);
      for (const pid of workerPids) expect(() => process.kill(pid, 0), String(pid)).toThrow();
      const end = parseNdjson(interrupted.stdout).find((event) => event.type === 'run-end');
      expect(end).toMatchObject({ status: 'interrupted' });
    });

    it('then `ratchet resume` merges every task once', async () => {
      const runId = z
        .object({ runId: z.string() })
        .parse(parseNdjson(interrupted.stdout).find((event) => event.type === 'run-start')).runId;
      const resumed = await runCli(['resume', runId, ...ANTHROPIC_FLAGS, ...sandbox.flags, '--json'], {
        cwd: repo.dir,
        env: ratchetEnv(repo, server),
        timeoutMs: 300_000,
      });
      expect(resumed.exitCode, describeResult(resumed)).toBe(0);
      for (const task of tasks) {
        expect(repo.run('show', `ratchet/${runId}:${task.implFile}`)).toBe(task.impl.trimEnd());
        const adds = repo
          .run('log', '--format=%H', '--diff-filter=A', `ratchet/${runId}`, '--', task.implFile)
          .split('\n')
          .filter(Boolean);
        expect(adds, task.implFile).toHaveLength(1);
      }
      expect(repo.run('worktree', 'list', '--porcelain')).not.toContain('-tasks/');
    }, 330_000);
  },
);
