import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { modelCallRequests } from '../support/e2e-run.js';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { startFakeOpenAiServer } from '../support/fake-openai-server.js';
import type { RecordedRequest } from '../support/fake-http-server.js';
import { describeResult, parseNdjson, runCli, type JsonLine } from '../support/run-cli.js';
import {
  anthropicPrompt,
  anthropicSolveBrain,
  openAiPrompt,
  openAiSolveBrain,
  SOLVE_FILES,
  SOLVE_TASK,
  STATS_JS,
  WRONG_FIX,
} from '../support/solve-fixture.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

// The runs opt out of the sandbox where bubblewrap is missing (their subject is not the sandbox).
const sandbox = sandboxForThisMachine();

/** A string field of an NDJSON line ('' when absent or not a string). */
function stringField(line: JsonLine | undefined, key: string): string {
  const value = line?.[key];
  return typeof value === 'string' ? value : '';
}

/**
 * Issue 15's "Done when": `ratchet solve` on a repository with a real bug (`total` starts at 1)
 * and a missing function (`median`), through the real provider SDKs against the loopback fakes:
 * META_PLAN, PART_PLAN, two steps (the first's first edit does not match and is retried with
 * that failure), an ADJUSTMENT after each, the tests green, the trace printable; then
 * `ratchet plan --output` and `solve --plan` in one pass.
 */

const API_KEY = 'sk-ant-test-solve-e2e-0000000000';

function git(repo: TempRepo, ...args: string[]): string {
  return execFileSync('git', args, { cwd: repo.dir, encoding: 'utf8' }).trim();
}

function passesOf(events: readonly JsonLine[]): string[] {
  return events
    .filter((event) => event.type === 'solve-pass-start')
    .map((event) => {
      const where = [event.partId, event.stepId].filter((id) => typeof id === 'string').join('/');
      return `${String(event.passType)}${where ? ` ${where}` : ''} #${String(event.attempt)}`;
    });
}

const EXPECTED_PASSES = [
  'meta_plan #1',
  'part_plan p1 #1',
  'implement p1/s1 #1',
  'implement p1/s1 #2',
  'adjustment p1/s1 #1',
  'implement p1/s2 #1',
  'adjustment p1/s2 #1',
];

describe('ratchet solve on the loopback Anthropic server', () => {
  let server: FakeAnthropicServer;
  let repo: TempRepo;
  let env: Record<string, string>;
  let runId = '';
  let events: JsonLine[] = [];

  beforeAll(async () => {
    server = await startFakeAnthropicServer();
    server.setFallback(anthropicSolveBrain);
    repo = await createTempRepo({ files: SOLVE_FILES });
    env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: API_KEY, RATCHET_HOME: repo.path('ratchet-home') };
    const result = await runCli(
      ['solve', SOLVE_TASK, '--provider', 'anthropic', '--model', 'claude-sonnet-4-5', ...sandbox.flags, '--json'],
      { cwd: repo.dir, env },
    );
    expect(result.exitCode, describeResult(result)).toBe(0);
    events = parseNdjson(result.stdout);
    runId = stringField(
      events.find((event) => event.type === 'run-start'),
      'runId',
    );
  }, 120_000);

  afterAll(async () => {
    await server.close();
    await repo.cleanup();
  });

  it('plans, implements two steps (retrying the edit that did not match with its failure), adjusts after each, and ends green', async () => {
    expect(passesOf(events)).toEqual(EXPECTED_PASSES);
    const progress = events.filter((event) => event.type === 'solve-progress').at(-1);
    expect(progress).toMatchObject({ status: 'complete', stepsCompleted: 2, stepsFailed: 0, totalSteps: 2 });

    // Every pass's system prompt names its stage on its first line.
    const stages = modelCallRequests(server).map((request) => anthropicPrompt(request).system.split('\n')[0]);
    expect(new Set(stages)).toEqual(
      new Set(['Stage: META_PLAN', 'Stage: PRECISION', 'Stage: PART_PLAN', 'Stage: IMPLEMENT', 'Stage: ADJUSTMENT']),
    );
    // The retry of s1 was told which edit failed and why.
    const implementS1 = modelCallRequests(server)
      .map((request: RecordedRequest) => anthropicPrompt(request))
      .filter(
        (prompt) => prompt.system.startsWith('Stage: IMPLEMENT') && prompt.user.includes('Step to implement:\ns1'),
      );
    expect(implementS1).toHaveLength(2);
    expect(implementS1[1]?.user).toContain('Edit 1 (src/stats.js): SEARCH matches 0 times in src/stats.js');
    // A failed attempt leaves no test run; each applied attempt is tested.
    const tests = events.filter((event) => event.type === 'verify-end' && event.kind === 'test');
    expect(tests).toHaveLength(2);

    const branch = `ratchet/${runId}`;
    const subjects = git(repo, 'log', '--format=%s', `main..${branch}`).split('\n').reverse();
    expect(subjects).toEqual([
      'plan: Fix total and add median',
      'plan: part p1: Fix total, then add median',
      'feat: s1 Fix total so that the sum starts at 0',
      'feat: s2 Add median(xs) to src/stats.js with a test',
    ]);
    const stats = git(repo, 'show', `${branch}:src/stats.js`);
    expect(stats).toContain('sum + x, 0)');
    expect(stats).toContain('export function median(xs)');
    expect(git(repo, 'show', `${branch}:test/median.test.js`)).toContain('median of an even count');
    // The user's checkout is untouched until accept.
    expect(await readFile(join(repo.dir, 'src', 'stats.js'), 'utf8')).toBe(STATS_JS);
  });

  it('prints the full trace: passes, attempts, validation and every model call with its prompt and response', async () => {
    const result = await runCli(['report', runId, '--trace'], { cwd: repo.dir, env });
    expect(result.exitCode, describeResult(result)).toBe(0);
    const trace = result.stdout;
    expect(trace).toContain('orchestrated, complete: 2 steps done, 0 failed, 2 planned in 1 parts');
    for (const heading of [
      'pass 1 META_PLAN attempt 1: ok',
      'pass 2 PART_PLAN p1 attempt 1: ok',
      'pass 3 IMPLEMENT p1/s1 attempt 1: failed',
      'pass 4 IMPLEMENT p1/s1 attempt 2: ok',
      'pass 5 ADJUSTMENT p1/s1 attempt 1: ok',
      'pass 6 IMPLEMENT p1/s2 attempt 1: ok',
      'pass 7 ADJUSTMENT p1/s2 attempt 1: ok',
    ]) {
      expect(trace).toContain(heading);
    }
    expect(trace).toContain('attempt 1 of s1: edits not applied');
    expect(trace).toContain('attempt 2 of s1: edits applied to src/stats.js');
    expect(trace).toContain('validation: tests pass');
    expect(trace).toContain('repaired:');
    // Every call the server answered is in the trace, prompt and response in full.
    const calls = trace.match(/^ {4}model call \d+ /gm) ?? [];
    expect(calls).toHaveLength(modelCallRequests(server).length);
    expect(trace).toContain(WRONG_FIX.split('\n')[2]);
    expect(trace).toContain('Why your previous attempt at this step failed');
  });

  it('shows in status and history, and accept brings the change into the checkout', async () => {
    const history = await runCli(['history', runId], { cwd: repo.dir, env });
    expect(history.exitCode, describeResult(history)).toBe(0);
    expect(history.stdout).toMatch(/^ +[0-9a-f]{8} feat: s2 Add median\(xs\) to src\/stats\.js with a test$/m);
    const status = await runCli(['status', runId], { cwd: repo.dir, env });
    expect(status.exitCode, describeResult(status)).toBe(0);
    expect(status.stdout).toContain('steps     2 done, 0 failed, of 2 planned in 1 parts (orchestrated, complete)');
    expect(status.stdout).not.toContain('phase');
    // Passes, not stage attempts: no line counting none.
    expect(status.stdout).not.toMatch(/^ +stages /m);
    const accepted = await runCli(['accept', runId], { cwd: repo.dir, env });
    expect(accepted.exitCode, describeResult(accepted)).toBe(0);
    expect(await readFile(join(repo.dir, 'src', 'stats.js'), 'utf8')).toContain('export function median(xs)');
  });
});

describe('ratchet solve on OpenAI-compatible servers', () => {
  for (const provider of ['openai-compatible', 'ollama'] as const) {
    it(`runs the same passes and ends green with --provider ${provider}`, async () => {
      // The endpoint lists the model (a run checks that before it starts).
      const server = await startFakeOpenAiServer({ models: ['qwen2.5-coder:3b'] });
      server.setFallback(openAiSolveBrain);
      // The first call fails with a server error: it is retried, and the failed call recorded.
      server.enqueue({ kind: 'error', status: 500 });
      const repo = await createTempRepo({ files: SOLVE_FILES });
      try {
        const env = { OPENAI_API_KEY: 'sk-test-solve-0000000000', RATCHET_HOME: repo.path('ratchet-home') };
        const result = await runCli(
          [
            'solve',
            SOLVE_TASK,
            '--provider',
            provider,
            '--model',
            'qwen2.5-coder:3b',
            '--base-url',
            server.url,
            ...sandbox.flags,
            '--json',
          ],
          { cwd: repo.dir, env },
        );
        expect(result.exitCode, describeResult(result)).toBe(0);
        const events = parseNdjson(result.stdout);
        expect(passesOf(events)).toEqual(EXPECTED_PASSES);
        expect(events.filter((event) => event.type === 'solve-progress').at(-1)).toMatchObject({ status: 'complete' });
        expect(events.filter((event) => event.type === 'model-retry')).toHaveLength(1);
        const failedCalls = events.filter((event) => event.type === 'model-call' && event.response === null);
        expect(failedCalls).toHaveLength(1);
        const systems = modelCallRequests(server).map((request) => openAiPrompt(request).system.split('\n')[0]);
        expect(systems).toContain('Stage: IMPLEMENT');
        // Ollama serves 4096 tokens unless told otherwise: every prompt was budgeted to fit half of it.
        if (provider === 'ollama') {
          const ends = events.filter((event) => event.type === 'solve-pass-end');
          for (const end of ends) expect(end.context).toMatchObject({ budgetTokens: 2048 });
        }
      } finally {
        await server.close();
        await repo.cleanup();
      }
    }, 120_000);
  }
});

describe('ratchet plan, then solve --plan', () => {
  it('writes a PlanArtifact that solve --plan executes in one pass', async () => {
    const server = await startFakeAnthropicServer();
    server.setFallback(anthropicSolveBrain);
    const repo = await createTempRepo({ files: SOLVE_FILES });
    try {
      const env = {
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: API_KEY,
        RATCHET_HOME: repo.path('ratchet-home'),
      };
      const planFile = repo.path('plan.json');
      const planned = await runCli(
        [
          'plan',
          SOLVE_TASK,
          '--provider',
          'anthropic',
          '--model',
          'claude-sonnet-4-5',
          '--output',
          planFile,
          '--stages',
          'scope',
          ...sandbox.flags,
          '--json',
        ],
        { cwd: repo.dir, env },
      );
      expect(planned.exitCode, describeResult(planned)).toBe(0);
      const artifact = JSON.parse(await readFile(planFile, 'utf8')) as Record<string, unknown>;
      // --stages scope: retrieval made no model call.
      const planStages = modelCallRequests(server).map((request) => anthropicPrompt(request).system.split('\n')[0]);
      expect(planStages).toEqual(['Stage: META_PLAN']);
      expect(artifact).toMatchObject({
        taskSummary: 'Fix total and add median',
        affectedFiles: [{ path: 'src/stats.js' }],
        executionOrder: ['p1'],
      });
      const planRun = stringField(
        parseNdjson(planned.stdout).find((event) => event.type === 'run-start'),
        'runId',
      );
      const status = await runCli(['status', planRun], { cwd: repo.dir, env });
      expect(status.stdout).toContain('plan.json (ratchet report');
      // Planning changed nothing in the checkout.
      expect(await readFile(join(repo.dir, 'src', 'stats.js'), 'utf8')).toBe(STATS_JS);
      // The plan made, its worktree is gone (nothing in it to keep) and its branch stays for reject.
      const planWorktree = stringField(
        parseNdjson(planned.stdout).find((event) => event.type === 'run-start'),
        'worktree',
      );
      expect(existsSync(planWorktree)).toBe(false);
      expect(git(repo, 'worktree', 'list', '--porcelain')).not.toContain(planWorktree);
      expect(git(repo, 'branch', '--list', `ratchet/${planRun}`)).toContain(`ratchet/${planRun}`);
      expect(status.stdout).not.toContain('worktree');
      const rejected = await runCli(['reject', planRun], { cwd: repo.dir, env });
      expect(rejected.exitCode, describeResult(rejected)).toBe(0);
      expect(git(repo, 'branch', '--list', `ratchet/${planRun}`)).toBe('');

      server.reset();
      server.setFallback(anthropicSolveBrain);
      const solved = await runCli(
        [
          'solve',
          SOLVE_TASK,
          '--plan',
          planFile,
          '--provider',
          'anthropic',
          '--model',
          'claude-sonnet-4-5',
          ...sandbox.flags,
          '--json',
        ],
        { cwd: repo.dir, env },
      );
      expect(solved.exitCode, describeResult(solved)).toBe(0);
      const events = parseNdjson(solved.stdout);
      expect(passesOf(events)).toEqual(['implement plan #1']);
      const stagesAsked = modelCallRequests(server).map((request) => anthropicPrompt(request).system.split('\n')[0]);
      expect(stagesAsked).not.toContain('Stage: META_PLAN');
      expect(events.filter((event) => event.type === 'solve-progress').at(-1)).toMatchObject({
        mode: 'single-pass',
        status: 'complete',
      });
      const runId = stringField(
        events.find((event) => event.type === 'run-start'),
        'runId',
      );
      expect(git(repo, 'show', `ratchet/${runId}:src/stats.js`)).toContain('export function median(xs)');
    } finally {
      await server.close();
      await repo.cleanup();
    }
  }, 120_000);

  it('refuses a plan file that is not a PlanArtifact before any run exists', async () => {
    const repo = await createTempRepo({ files: SOLVE_FILES });
    try {
      const planFile = repo.path('plan.json');
      await writeFile(planFile, JSON.stringify({ taskSummary: 'x', affectedFiles: [] }));
      const env = { ANTHROPIC_API_KEY: API_KEY, RATCHET_HOME: repo.path('ratchet-home') };
      const result = await runCli(['solve', 'x', '--plan', planFile, '--provider', 'anthropic'], {
        cwd: repo.dir,
        env,
      });
      expect(result.exitCode, describeResult(result)).toBe(2);
      expect(result.stderr).toContain('is not a plan');
      expect(git(repo, 'branch', '--list', 'ratchet/*')).toBe('');
    } finally {
      await repo.cleanup();
    }
  });
});
