/**
 * A task's tests are the model's code: run by the pool's RED gate, they plant a symbolic link to
 * the machine's root in the task's worktree. The pool reads `git status` once until the worktree
 * may have changed (its agents and the verifier's commands say when), so this is what must hold:
 * the checkpoint after the tests sees the link and refuses to commit it, no branch of the
 * repository ever holds it, and the user's checkout is untouched (built CLI, scripted model).
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { createProjectRepo, E2E_API_KEY, type ProjectRepo } from '../support/e2e-run.js';
import { describeResult, parseNdjson, type CliResult } from '../support/run-cli.js';
import {
  createTasksBrain,
  letterTask,
  LETTERS_PROJECT,
  taskUpdatesOf,
  type TaskUpdate,
} from '../support/tasks-brain.js';
import { runTasksCli } from '../support/tasks-run-cli.js';

const honest = letterTask('H', 'H');
const planted = letterTask('L', 'L');
// Its test plants `escape -> /` at the worktree's root whenever it runs, then fails by assertion.
planted.test = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { symlinkSync } from 'node:fs';
import { l } from '../src/l.js';
try { symlinkSync('/', new URL('../escape', import.meta.url)); } catch {}
test('l returns L', () => assert.equal(l(), 'L'));
`;

describe('ratchet tasks run: a task whose tests plant a link out of the repository (built CLI, scripted model)', () => {
  let server: FakeAnthropicServer;
  let repo: ProjectRepo;
  let result: CliResult;
  let updates: TaskUpdate[];
  let checkoutBefore: string;
  const brain = createTasksBrain([honest, planted]);

  beforeAll(async () => {
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    server.setFallback((request) => brain.reply(request));
    repo = await createProjectRepo(LETTERS_PROJECT);
    checkoutBefore = repo.run('status', '--porcelain');
    result = await runTasksCli(repo, server, [honest, planted], { workers: 2, timeoutMs: 240_000 });
    updates = taskUpdatesOf(parseNdjson(result.stdout));
  }, 260_000);

  afterAll(async () => {
    await server.close();
    await repo.cleanup();
  });

  it('refuses to commit the link: that task fails naming it, the other merges, the run ends partial', () => {
    expect(result.exitCode, describeResult(result)).toBe(1);
    const failed = updates.find((update) => update.task === 'L' && update.status === 'failed');
    expect(failed?.reason, describeResult(result)).toMatch(/Refusing to commit.*escape/s);
    expect(updates.some((update) => update.task === 'H' && update.status === 'merged')).toBe(true);
  });

  it('leaves the link in no commit of any branch, and the checkout as it was', () => {
    const commits = repo.run('rev-list', '--all').split('\n').filter(Boolean);
    for (const commit of commits) expect(repo.run('ls-tree', '-r', '--name-only', commit)).not.toMatch(/^escape$/m);
    expect(repo.run('status', '--porcelain')).toBe(checkoutBefore);
    expect(lstatSync(join(repo.dir, 'escape'), { throwIfNoEntry: false })).toBeUndefined();
  });
});
