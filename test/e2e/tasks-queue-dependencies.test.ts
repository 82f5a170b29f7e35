/**
 * A queue worker's task worktree gets the project's installed dependencies as a local task's
 * does: `ratchet worker --dependencies <checkout>` shares that checkout's `node_modules` into each
 * task's worktree (read-only in the sandbox). The project's tests import a package that only
 * `node_modules` holds (ignored by git, so the published repository lacks it): without the shared
 * folder the baseline suite cannot load and the task fails.
 */
import { mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { ANTHROPIC_FLAGS, createProjectRepo, E2E_API_KEY, ratchetEnv, type ProjectRepo } from '../support/e2e-run.js';
import { startQueueWorker, tasksRunOnQueueArgs } from '../support/queue-worker.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { describeResult, parseNdjson, runCli } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { createTasksBrain, letterTask, LETTERS_PROJECT, tasksFile } from '../support/tasks-brain.js';
import { toolchain } from '../support/toolchains.js';

const redis = toolchain('redis');
const sandbox = sandboxForThisMachine();

const HELPER = {
  'node_modules/letters-helper/package.json': `${JSON.stringify({ name: 'letters-helper', type: 'module', main: 'index.js' })}\n`,
  'node_modules/letters-helper/index.js': 'export const shout = (text) => text.toUpperCase();\n',
};
const PROJECT = {
  ...LETTERS_PROJECT,
  '.gitignore': 'node_modules/\n',
  'test/helper.test.js': `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shout } from 'letters-helper';
test('helper', () => assert.equal(shout('a'), 'A'));
`,
};

describe.skipIf(redis.missing)(`a queue worker shares a checkout's dependencies${redis.note}`, () => {
  let server: FakeAnthropicServer;
  let redisServer: RedisServer;
  let repo: ProjectRepo;
  const tasks = [letterTask('A', 'A')];

  beforeAll(async () => {
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    const brain = createTasksBrain(tasks);
    server.setFallback((request) => brain.reply(request));
    redisServer = await startRedisServer();
    repo = await createProjectRepo(PROJECT);
    // The coordinator's checkout has the package installed (its baseline passes); so has the
    // worker machine's own checkout, elsewhere.
    await repo.write(HELPER);
    const checkout = repo.path('worker-checkout');
    for (const [path, text] of Object.entries(HELPER)) {
      mkdirSync(join(checkout, path, '..'), { recursive: true });
      await writeFile(join(checkout, path), text);
    }
    await writeFile(join(repo.root, 'tasks.json'), tasksFile(tasks));
  }, 60_000);

  afterAll(async () => {
    await redisServer?.stop();
    await server?.close();
    await repo?.cleanup();
  });

  it('runs the task with the node_modules of --dependencies in its worktree, and merges it', async () => {
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
      expect(result.exitCode, `${describeResult(result)}\n--- worker\n${lines.join('\n')}`).toBe(0);
      const runId = z
        .object({ runId: z.string() })
        .parse(parseNdjson(result.stdout).find((event) => event.type === 'run-start')).runId;
      expect(repo.run('log', '--format=%s', `ratchet/${runId}`)).toContain('merge: A Letter A');
      // The link was the worktree's own, never committed.
      expect(repo.run('ls-tree', '-r', '--name-only', `ratchet/${runId}`)).not.toContain('node_modules');
    } finally {
      worker.kill('SIGTERM');
      await exited;
    }
  }, 300_000);

  it('refuses --dependencies naming a directory without installed dependencies (exit 2)', async () => {
    const result = await runCli(
      [
        'worker',
        '--queue',
        redisServer.url,
        '--repositories',
        repo.home,
        '--dependencies',
        repo.dir + '/src',
        ...ANTHROPIC_FLAGS,
        ...sandbox.flags,
      ],
      { cwd: repo.dir, env: ratchetEnv(repo, server), timeoutMs: 60_000 },
    );
    expect(result.exitCode, describeResult(result)).toBe(2);
    expect(result.stderr).toContain('holds none of node_modules');
  });
});
