/**
 * A task's worktree gets the checkout's `node_modules` as a link, as the run's does, and its
 * sandbox puts the link back before every command should the task's agent or code swap it. The
 * main run said so; a task said nothing, so neither the user nor the ledger learned an agent tried.
 * Here a task's tests (the model's code, run by its RED gate) replace the link with a folder
 * holding a runner of their own: the task's next command finds the link restored, and the run
 * shows the warning as that task's (`--json`), records it in the ledger with the task, and the
 * checkout's `node_modules` is as it was (built CLI, scripted model).
 */
import { lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openLedger } from '../../src/ledger/ledger.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { createProjectRepo, E2E_API_KEY, type ProjectRepo } from '../support/e2e-run.js';
import { assertFreshBuild, describeResult, parseNdjson, type CliResult } from '../support/run-cli.js';
import { createTasksBrain, LETTERS_PROJECT, nodeModulesSwapperTask, taskUpdatesOf } from '../support/tasks-brain.js';
import { runTasksCli } from '../support/tasks-run-cli.js';

const RESTORED = 'replaced or changed node_modules';

const swapper = nodeModulesSwapperTask('S');

const WarningSchema = z.object({ type: z.literal('warning'), message: z.string(), task: z.string().optional() });

describe('ratchet tasks run: a task whose code swaps the shared node_modules (built CLI, scripted model)', () => {
  let server: FakeAnthropicServer;
  let repo: ProjectRepo;
  let result: CliResult;
  let events: Array<{ type?: unknown }>;
  let modules: string;
  const brain = createTasksBrain([swapper]);

  beforeAll(async () => {
    assertFreshBuild();
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    server.setFallback((request) => brain.reply(request));
    repo = await createProjectRepo({ ...LETTERS_PROJECT, '.gitignore': 'node_modules/\n' });
    // The checkout's installed dependencies (ignored by git), which each worktree shares.
    modules = join(repo.dir, 'node_modules');
    mkdirSync(join(modules, 'left-pad'), { recursive: true });
    writeFileSync(join(modules, 'left-pad', 'index.js'), 'module.exports = (s) => s;\n');
    result = await runTasksCli(repo, server, [swapper], { workers: 1, timeoutMs: 240_000 });
    events = parseNdjson(result.stdout);
  }, 260_000);

  afterAll(async () => {
    await server.close();
    await repo.cleanup();
  });

  it("shows the restore as the task's warning, and the task still merges", () => {
    expect(result.exitCode, describeResult(result)).toBe(0);
    expect(brain.unexpected).toEqual([]);
    expect(taskUpdatesOf(events).some((update) => update.task === 'S' && update.status === 'merged')).toBe(true);
    const warnings = events.flatMap((event) => (event.type === 'warning' ? [WarningSchema.parse(event)] : []));
    expect(
      warnings.some((warning) => warning.task === 'S' && warning.message.includes(RESTORED)),
      describeResult(result),
    ).toBe(true);
  });

  it("puts the folder back when the task's work leaves the agent's hands, though no command of the task follows its last test run", () => {
    // The task's last command is its last test run (GREEN's: VERIFY reuses it), which swaps the
    // folder again; nothing of the task runs after it, so only the restore at the stage's end
    // notices (and says so).
    const task = events.filter((event) => (event as { task?: unknown }).task === 'S');
    const lastRun = task.findLastIndex((event) => event.type === 'verify-end');
    expect(lastRun).toBeGreaterThan(-1);
    const after = task
      .slice(lastRun)
      .flatMap((event) => (event.type === 'warning' ? [WarningSchema.parse(event)] : []));
    expect(
      after.some((warning) => warning.message.includes(RESTORED)),
      describeResult(result),
    ).toBe(true);
  });

  it('records the warning in the ledger with its task', async () => {
    const runId = z.object({ runId: z.string() }).parse(events.find((event) => event.type === 'run-start')).runId;
    const ledger = await openLedger(join(repo.dir, '.ratchet', 'ledger.db'), { secrets: [] });
    try {
      const recorded = (await ledger.events(runId)).filter((event) => event.type === 'warning');
      expect(
        recorded.some((event) => event.task === 'S' && event.type === 'warning' && event.message.includes(RESTORED)),
      ).toBe(true);
    } finally {
      await ledger.close();
    }
  });

  it("left the checkout's node_modules and the checkout as they were", () => {
    expect(lstatSync(modules).isDirectory()).toBe(true);
    expect(readdirSync(modules)).toEqual(['left-pad']);
    expect(repo.run('status', '--porcelain')).toBe('');
  });
});
