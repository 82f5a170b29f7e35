/**
 * A queue worker's task worktree shares the worker machine's `node_modules` (`--dependencies`),
 * and its sandbox puts the link back before every command should the task's code swap it. The
 * restore was silent on the worker: here a task's tests replace the link whenever they run, and
 * the worker streams the warning back like its other events, so the coordinator shows it as the
 * task's (`--json`) and records it in its ledger; the worker's checkout is as it was (built CLI,
 * scripted model, a real Redis).
 */
import { lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openLedger } from '../../src/ledger/ledger.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { createProjectRepo, E2E_API_KEY, ratchetEnv, type ProjectRepo } from '../support/e2e-run.js';
import { startQueueWorker, tasksRunOnQueueArgs } from '../support/queue-worker.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { assertFreshBuild, describeResult, parseNdjson, runCli } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { createTasksBrain, LETTERS_PROJECT, nodeModulesSwapperTask, tasksFile } from '../support/tasks-brain.js';
import { toolchain } from '../support/toolchains.js';

const redis = toolchain('redis');
const sandbox = sandboxForThisMachine();
const RESTORED = 'replaced or changed node_modules';
const WarningSchema = z.object({ type: z.literal('warning'), message: z.string(), task: z.string().optional() });

describe.skipIf(redis.missing)(`a queue worker's task that swaps the shared node_modules${redis.note}`, () => {
  let server: FakeAnthropicServer;
  let redisServer: RedisServer;
  let repo: ProjectRepo;
  let checkoutModules: string;
  const tasks = [nodeModulesSwapperTask('S')];

  beforeAll(async () => {
    assertFreshBuild();
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    const brain = createTasksBrain(tasks);
    server.setFallback((request) => brain.reply(request));
    redisServer = await startRedisServer();
    repo = await createProjectRepo({ ...LETTERS_PROJECT, '.gitignore': 'node_modules/\n' });
    // The worker machine's own checkout, with its installed dependencies.
    checkoutModules = join(repo.path('worker-checkout'), 'node_modules');
    mkdirSync(join(checkoutModules, 'left-pad'), { recursive: true });
    await writeFile(join(checkoutModules, 'left-pad', 'index.js'), 'module.exports = (s) => s;\n');
    await writeFile(join(repo.root, 'tasks.json'), tasksFile(tasks));
  }, 60_000);

  afterAll(async () => {
    await redisServer?.stop();
    await server?.close();
    await repo?.cleanup();
  });

  it("streams the restore back as the task's warning, shown and recorded by the coordinator", async () => {
    const {
      child: worker,
      lines,
      exited,
    } = startQueueWorker(redisServer.url, repo, server, {
      name: 'home',
      sandboxFlags: sandbox.flags,
      args: ['--dependencies', repo.path('worker-checkout')],
    });
    try {
      const result = await runCli(tasksRunOnQueueArgs(join(repo.root, 'tasks.json'), redisServer.url, sandbox.flags), {
        cwd: repo.dir,
        env: ratchetEnv(repo, server),
        timeoutMs: 240_000,
      });
      const why = `${describeResult(result)}\n--- worker\n${lines.join('\n')}`;
      expect(result.exitCode, why).toBe(0);
      const events = parseNdjson(result.stdout);
      const warnings = events.flatMap((event) => (event.type === 'warning' ? [WarningSchema.parse(event)] : []));
      expect(
        warnings.some((warning) => warning.task === 'S' && warning.message.includes(RESTORED)),
        why,
      ).toBe(true);
      const runId = z.object({ runId: z.string() }).parse(events.find((event) => event.type === 'run-start')).runId;
      const ledger = await openLedger(join(repo.dir, '.ratchet', 'ledger.db'), { secrets: [] });
      try {
        const recorded = await ledger.events(runId);
        expect(
          recorded.some((event) => event.type === 'warning' && event.task === 'S' && event.message.includes(RESTORED)),
        ).toBe(true);
      } finally {
        await ledger.close();
      }
    } finally {
      worker.kill('SIGTERM');
      await exited;
    }
    // The worker machine's checkout kept its node_modules.
    expect(lstatSync(checkoutModules).isDirectory()).toBe(true);
    expect(readdirSync(checkoutModules)).toEqual(['left-pad']);
  }, 300_000);
});
