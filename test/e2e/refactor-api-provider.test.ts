import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import {
  oneBatchBrain,
  REFACTOR_FILES,
  REFACTOR_MATH,
  refactorBrain,
  stageOf,
} from '../support/refactor-js-fixture.js';
import { describeResult, runCli } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

/**
 * `ratchet refactor run` on an API provider: our own tool loop returns the PatchResponse as
 * structured output (the StructuredOutput tool), through the real Anthropic adapter.
 */

/** The subject is the refactor run, not the sandbox: where bubblewrap is missing the runs opt out. */
const sandbox = sandboxForThisMachine();

describe(`ratchet refactor run on an API provider (tool loop, structured PatchResponse)${sandbox.note}`, () => {
  let server: FakeAnthropicServer;
  let fixture: TempRepo;
  let repo: string;
  let home: string;

  beforeAll(async () => {
    server = await startFakeAnthropicServer();
    server.setFallback(refactorBrain);
    fixture = await createTempRepo({ files: REFACTOR_FILES });
    repo = fixture.dir;
    home = fixture.path('ratchet-home');
  });

  afterAll(async () => {
    await server.close();
    await fixture.cleanup();
  });

  it('commits the admitted, verified patch as a checkpoint and writes the report', async () => {
    const env = {
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-refactor-api-0000000000',
      RATCHET_HOME: home,
    };
    const result = await runCli(
      [
        'refactor',
        'run',
        repo,
        '--provider',
        'anthropic',
        '--model',
        'claude-refactor-e2e',
        '--yes',
        '--json',
        ...sandbox.flags,
      ],
      { cwd: repo, env },
    );
    expect(result.exitCode, describeResult(result)).toBe(0);
    const events = result.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map(
        (line) =>
          JSON.parse(line) as {
            type: string;
            runId?: string;
            batch?: string;
            outcome?: string;
            admitted?: boolean;
            html?: string;
          },
      );
    const runId = events.find((event) => event.type === 'run-start')?.runId ?? '';
    expect(runId).not.toBe('');
    const ends = events
      .filter((event) => event.type === 'batch-end')
      .map((event) => `${event.batch ?? ''} ${event.outcome ?? ''}`);
    expect(ends).toEqual(['batch-001 committed', 'batch-002 noop']);
    expect(events.some((event) => event.type === 'patch-check' && event.admitted === true)).toBe(true);

    const branch = `ratchet/${runId}`;
    const subjects = execFileSync('git', ['log', '--format=%s', `main..${branch}`], { cwd: repo, encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(subjects).toEqual(['checkpoint: batch-001 Remove dead code in src/math.js']);
    const changed = execFileSync('git', ['show', `${branch}:src/math.js`], { cwd: repo, encoding: 'utf8' });
    expect(changed).not.toContain('unusedHelper');
    // The user's checkout is untouched until accept.
    expect(await readFile(join(repo, 'src', 'math.js'), 'utf8')).toBe(REFACTOR_MATH);
    // The patcher was asked through our tool loop, with the StructuredOutput tool and read-only tools.
    const patcherRequest = server.requests.find((request) => stageOf(request) === 'Stage: PATCHER');
    const tools = ((patcherRequest?.body as { tools?: Array<{ name: string }> }).tools ?? []).map((tool) => tool.name);
    expect(tools).toContain('StructuredOutput');
    const report = events.find((event) => event.type === 'report');
    expect(report?.html).toBeDefined();
    const html = await readFile(report?.html ?? '', 'utf8');
    expect(html).toContain('batch-001');

    // status and history speak of batches and checkpoints (refactor checkpoints carry no notes).
    const status = await runCli(['status', runId], { cwd: repo, env });
    expect(status.exitCode, describeResult(status)).toBe(0);
    expect(status.stdout).toMatch(
      /batches +1 committed \(last [0-9a-f]{8} checkpoint: batch-001 Remove dead code in src\/math\.js\)/,
    );
    expect(status.stdout).toContain(`backup    ${join(home, 'backups', 'repo', runId)}`);
    expect(status.stdout).not.toContain('phase');
    const history = await runCli(['history', runId], { cwd: repo, env });
    expect(history.exitCode, describeResult(history)).toBe(0);
    expect(history.stdout).toContain(`Checkpoints of ${runId}`);
    expect(history.stdout).toMatch(/^ +[0-9a-f]{8} checkpoint: batch-001 Remove dead code in src\/math\.js$/m);
    expect(history.stdout).not.toContain('no note');

    // rollback to a checkpoint points a refactor run at accept --force or reject, never resume.
    const tip = execFileSync('git', ['rev-parse', branch], { cwd: repo, encoding: 'utf8' }).trim();
    const rolledBack = await runCli(['rollback', tip], { cwd: repo, env });
    expect(rolledBack.exitCode, describeResult(rolledBack)).toBe(0);
    expect(rolledBack.stdout).toContain(
      `Keep its batches up to here with ratchet accept ${runId} --force, or drop it with ratchet reject ${runId}.`,
    );
    expect(rolledBack.stdout).not.toContain('resume');

    const accepted = await runCli(['accept', runId, '--force'], { cwd: repo, env });
    expect(accepted.exitCode, describeResult(accepted)).toBe(0);
    expect(await readFile(join(repo, 'src', 'math.js'), 'utf8')).not.toContain('unusedHelper');
  });

  it('fails a batch that makes the suite pass by skipping a test that passed at the baseline', async () => {
    const other = await createTempRepo({ files: REFACTOR_FILES });
    const skipping = await startFakeAnthropicServer();
    try {
      skipping.setFallback(
        oneBatchBrain(
          { goal: 'Tidy the tests', scope: ['test/**'], budget: 20 },
          { diff: SKIP_TEST, files: ['test/app.test.js'], rationale: 'The test is slow.' },
        ),
      );
      const env = {
        ANTHROPIC_BASE_URL: skipping.url,
        ANTHROPIC_API_KEY: 'sk-ant-test-refactor-api-0000000000',
        RATCHET_HOME: other.path('ratchet-home'),
      };
      const result = await runCli(
        [
          'refactor',
          'run',
          other.dir,
          '--provider',
          'anthropic',
          '--model',
          'claude-refactor-e2e',
          '--yes',
          '--json',
          ...sandbox.flags,
        ],
        { cwd: other.dir, env },
      );
      const events = result.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map(
          (line) =>
            JSON.parse(line) as { type: string; runId?: string; batch?: string; outcome?: string; markdown?: string },
        );
      expect(
        events
          .filter((event) => event.type === 'batch-end')
          .map((event) => `${event.batch ?? ''} ${event.outcome ?? ''}`),
        describeResult(result),
      ).toEqual(['batch-001 failed']);
      const runId = events.find((event) => event.type === 'run-start')?.runId ?? '';
      // Nothing was committed on the run's branch, and the patcher was told why its patch was refused.
      expect(
        execFileSync('git', ['rev-list', '--count', `main..ratchet/${runId}`], {
          cwd: other.dir,
          encoding: 'utf8',
        }).trim(),
      ).toBe('0');
      const retries = skipping.requests
        .filter((request) => stageOf(request) === 'Stage: PATCHER')
        .map((request) => JSON.stringify(request.body));
      expect(retries.some((body) => body.includes('a refactoring keeps every test running'))).toBe(true);
      expect(retries.some((body) => body.includes('test/app.test.js::total'))).toBe(true);
      const markdown = await readFile(events.find((event) => event.type === 'report')?.markdown ?? '', 'utf8');
      expect(markdown).toContain('Plan: 1 batch (planner)');
      // The report says the test went missing, not that it threw.
      expect(markdown).toContain('test/app.test.js::total (missing)');
    } finally {
      await skipping.close();
      await other.cleanup();
    }
  });
});

/** A patch that turns the only test into a skipped one: `node --test` still exits 0. */
const SKIP_TEST = `diff --git a/test/app.test.js b/test/app.test.js
--- a/test/app.test.js
+++ b/test/app.test.js
@@ -2,4 +2,4 @@ import { test } from 'node:test';
 import assert from 'node:assert/strict';
 import { total } from '../src/app.js';
 
-test('total', () => assert.equal(total([1, 2, 3]), 6));
+test.skip('total', () => assert.equal(total([1, 2, 3]), 6));
`;
