/**
 * `ratchet report` of a tasks run: tasks run their stages at once, so each verification row says
 * whose test or check run it was (the `verify-end` event's task), in the printed Markdown, the
 * HTML page and `report --json`; the run's own baseline and its suite after a merge have none.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { createProjectRepo, E2E_API_KEY, ratchetEnv, type ProjectRepo } from '../support/e2e-run.js';
import { describeResult, parseNdjson, runCli } from '../support/run-cli.js';
import { createTasksBrain, letterTask, LETTERS_PROJECT } from '../support/tasks-brain.js';
import { runTasksCli } from '../support/tasks-run-cli.js';

const TASKS = [letterTask('A', 'A'), letterTask('B', 'B')];

const reportJson = z.object({
  html: z.string(),
  verifications: z.array(z.object({ task: z.string().nullable(), stage: z.string(), command: z.string() })),
});

describe('ratchet report of a tasks run of two tasks (fake Anthropic, real git, node --test)', () => {
  let server: FakeAnthropicServer;
  let repo: ProjectRepo;
  let runId: string;
  const brain = createTasksBrain(TASKS);

  beforeAll(async () => {
    server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
    server.setFallback((request) => brain.reply(request));
    repo = await createProjectRepo(LETTERS_PROJECT);
    const result = await runTasksCli(repo, server, TASKS, { workers: 2, timeoutMs: 240_000 });
    expect(result.exitCode, describeResult(result)).toBe(0);
    const events = parseNdjson(result.stdout);
    runId = z.object({ runId: z.string() }).parse(events.find((event) => event.type === 'run-start')).runId;
  }, 260_000);

  afterAll(async () => {
    await server.close();
    await repo.cleanup();
  });

  it('names the task of each verification run in the Markdown, the HTML and the JSON', async () => {
    const env = ratchetEnv(repo, server);
    const json = await runCli(['report', runId, '--json'], { cwd: repo.dir, env });
    expect(json.exitCode, describeResult(json)).toBe(0);
    const { html, verifications } = reportJson.parse(JSON.parse(json.stdout));
    // Each task's RED and GREEN ran its tests; the run's own baseline (PLAN) and the suite after
    // each merge (VERIFY) belong to no task.
    for (const task of ['A', 'B'])
      expect(verifications.filter((row) => row.task === task).map((row) => row.stage)).toEqual(['RED', 'GREEN']);
    const own = verifications.filter((row) => row.task === null).map((row) => row.stage);
    expect(own).toContain('VERIFY');
    expect(verifications).toHaveLength(4 + own.length);

    const text = await runCli(['report', runId], { cwd: repo.dir, env });
    expect(text.exitCode, describeResult(text)).toBe(0);
    const section = text.stdout.slice(text.stdout.indexOf('## Verification runs'), text.stdout.indexOf('## Changes'));
    expect(section).toContain('| Task | Stage | Kind | Command | Result | Duration | Failing |');
    const rows = section.split('\n').filter((line) => /^\| (A|B|) ?\| [A-Z]+ \|/.test(line));
    expect(rows.map((line) => line.split('|')[1]?.trim() ?? '')).toEqual(verifications.map((row) => row.task ?? ''));

    const page = await readFile(html, 'utf8');
    const table = page.slice(page.indexOf('<table id="verifications">'));
    expect(table).toMatch(/^<table id="verifications"><tr><th>Task<\/th><th>Stage<\/th>/);
    for (const task of ['A', 'B']) expect(table).toContain(`<tr><td>${task}</td><td>RED</td>`);
  });
});
