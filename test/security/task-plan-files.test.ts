/**
 * In a tasks run each task owns its test and implementation file. A model whose PLAN names
 * another task's implementation file (its RED and GREEN would then write into it, and the two
 * branches would fight over it at merge) must be refused with the reason, and retried; the task
 * then works on its own files only. Driven through the built CLI and the real Anthropic adapter
 * against a loopback fake; nothing outside the run may change.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { bodySchema, textOf } from '../support/anthropic-request.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import {
  checkoutState,
  createProjectRepo,
  E2E_API_KEY,
  ratchetEnv,
  type CheckoutState,
  type ProjectRepo,
} from '../support/e2e-run.js';
import { startQueueWorker, tasksRunOnQueueArgs } from '../support/queue-worker.js';
import { startRedisServer } from '../support/redis-server.js';
import { describeResult, parseNdjson, runCli, type CliResult } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { createTasksBrain, letterTask, LETTERS_PROJECT, tasksFile } from '../support/tasks-brain.js';
import { runTasksCli } from '../support/tasks-run-cli.js';
import { toolchain } from '../support/toolchains.js';

const B = letterTask('B', 'B');
/** A's first PLAN answer takes B's implementation file. */
const A = { ...letterTask('A', 'A'), planFiles: { testFile: 'test/a.test.js', implFile: B.implFile } };

const StageEndSchema = z.object({
  type: z.literal('stage-end'),
  stage: z.string(),
  attempt: z.number(),
  outcome: z.string(),
  reason: z.string().optional(),
  task: z.string().optional(),
});

/** Runs the tasks A and B of `repo` against `server`: on the run's own workers, or on a queue's. */
type RunTasks = (repo: ProjectRepo, server: FakeAnthropicServer) => Promise<CliResult>;

const redis = toolchain('redis');
const sandbox = sandboxForThisMachine();

/** The same run with its tasks on a Redis queue's worker (another machine's, which PLAN's check must hold on too). */
const onQueue: RunTasks = async (repo, server) => {
  const redisServer = await startRedisServer();
  const worker = startQueueWorker(redisServer.url, repo, server, { name: '1', sandboxFlags: sandbox.flags });
  try {
    const file = join(repo.root, 'tasks.json');
    await writeFile(file, tasksFile([A, B]));
    return await runCli(tasksRunOnQueueArgs(file, redisServer.url, sandbox.flags), {
      cwd: repo.dir,
      env: ratchetEnv(repo, server),
      timeoutMs: 300_000,
    });
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
    await redisServer.stop();
  }
};

describe('a task whose PLAN names a file another task owns is refused and retried on its own files', () => {
  planFilesSuite((repo, server) => runTasksCli(repo, server, [A, B], { workers: 2, timeoutMs: 300_000 }));
});

describe.skipIf(redis.missing)(`the same on a Redis queue's worker${redis.note}`, () => {
  planFilesSuite(onQueue);
});

function planFilesSuite(runTasks: RunTasks): void {
  let server: FakeAnthropicServer;
  let repo: ProjectRepo;
  let result: CliResult;
  let runId: string;
  let before: CheckoutState;
  let plans: string[];
  const brain = createTasksBrain([A, B]);

  beforeAll(async () => {
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    server.setFallback((request) => brain.reply(request));
    repo = await createProjectRepo(LETTERS_PROJECT);
    before = checkoutState(repo);
    result = await runTasks(repo, server);
    const events = parseNdjson(result.stdout);
    runId = z.object({ runId: z.string() }).parse(events.find((event) => event.type === 'run-start')).runId;
    plans = events.flatMap((event) => {
      const parsed = StageEndSchema.safeParse(event);
      return parsed.success && parsed.data.stage === 'PLAN' && parsed.data.task === 'A'
        ? [`${parsed.data.attempt} ${parsed.data.outcome}${parsed.data.reason ? ` ${parsed.data.reason}` : ''}`]
        : [];
    });
  }, 320_000);

  afterAll(async () => {
    await server.close();
    await repo.cleanup();
  });

  it('refuses the PLAN with the reason, tells the model which files the task owns, and the run completes', () => {
    expect(result.exitCode, describeResult(result)).toBe(0);
    expect(brain.unexpected).toEqual([]);
    expect(plans).toEqual(['1 rejected not-task-files', '2 accepted', '1 accepted']);
    const retried = server.requests.flatMap((request) => {
      const body = bodySchema.safeParse(request.body);
      if (!body.success || !/^Stage: PLAN/.test(textOf(body.data.system))) return [];
      const prompt = textOf(body.data.messages[0]?.content);
      return prompt.includes('Task A:') && prompt.includes('answer with exactly these files') ? [prompt] : [];
    });
    expect(retried[0]).toContain(
      'Task A owns test/a.test.js (its tests) and src/a.js (its implementation): answer with exactly these files. implFile is src/b.js, which task B owns; it must be src/a.js.',
    );
  });

  it("keeps each task to its own files: B's implementation is B's, A's is A's", () => {
    const branch = `ratchet/${runId}`;
    expect(repo.run('show', `${branch}:${B.implFile}`)).toBe(B.impl.trimEnd());
    expect(repo.run('show', `${branch}:${A.implFile}`)).toBe(A.impl.trimEnd());
    // A's branch never touched B's file.
    expect(repo.run('log', '--format=%H', `ratchet/${runId}-A-1`, '--', B.implFile)).toBe('');
  });

  it("left the user's checkout as it was", () => {
    expect(checkoutState(repo)).toEqual(before);
    expect(existsSync(join(repo.dir, B.implFile))).toBe(false);
  });
}
