/**
 * A provider's `retry-after` longer than Ratchet waits (60 s) is capped, and the retry's
 * progress line says so. The real Anthropic adapter talks to the loopback fake; only the clock
 * is a fake (its `sleep` records the wait and returns at once), so no test waits a minute.
 */
import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/effects.js';
import { loadConfig } from '../../src/config/load.js';
import { createEnveloper } from '../../src/engine/event-stream.js';
import { createRuntimeFactory } from '../../src/agent/models/model-factory.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { createPlainReporter } from '../../src/cli/reporters/plain-reporter.js';
import type { Output } from '../../src/cli/output.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { OPEN_POLICY, createTempWorktree, type TempWorktree } from './agent-fixtures.js';

const API_KEY = 'sk-ant-test-retry-progress-0000000000';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Runs one PLAN stage whose first call is answered with `retryAfter`; returns the waits and the progress lines. */
async function stageAfter429(retryAfter: string): Promise<{ sleeps: number[]; lines: string[] }> {
  const server: FakeAnthropicServer = await startFakeAnthropicServer({ apiKey: API_KEY });
  cleanups.push(() => server.close());
  const tmp: TempWorktree = await createTempWorktree({ 'README.md': '# x\n' });
  cleanups.push(() => tmp.cleanup());
  server.enqueue(
    { kind: 'error', status: 429, headers: { 'retry-after': retryAfter } },
    { kind: 'message', content: [{ type: 'text', text: 'done' }] },
  );
  const env = { ANTHROPIC_API_KEY: API_KEY, HOME: tmp.root };
  const config = await loadConfig({
    repoRoot: tmp.dir,
    env,
    flags: { provider: 'anthropic', model: 'claude-test', baseUrl: server.url },
  });
  const sleeps: number[] = [];
  const clock: Clock = {
    now: () => new Date(),
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
  };
  const runtime = createRuntimeFactory({ config, env, runner: createProcessRunner(), clock })('PLAN');
  const lines: string[] = [];
  const output: Output = {
    json: false,
    // Without colours (picocolors colours output when CI is set).
    out: (line) => lines.push(stripVTControlCharacters(line)),
    err: (line) => lines.push(stripVTControlCharacters(line)),
    progress: () => {},
  };
  const report = createPlainReporter(output, env);
  const envelope = createEnveloper('run-1', clock);
  const outcome = await runtime.runStage({
    stage: 'PLAN',
    worktree: tmp.dir,
    systemPrompt: 'Stage: PLAN\nPick the next test.',
    prompt: 'Go.',
    paths: OPEN_POLICY,
    maxTurns: 3,
    bashTimeoutMs: 10_000,
    emit: (event) => {
      if (event.type === 'model-retry') report(envelope(event));
    },
  });
  expect(outcome.status).toBe('completed');
  expect(server.requests.filter((request) => request.path === '/v1/messages')).toHaveLength(2);
  return { sleeps, lines };
}

describe('retry-after', () => {
  it('caps a longer retry-after at 60 s and says so on the retry line', async () => {
    const { sleeps, lines } = await stageAfter429('600');
    expect(sleeps).toEqual([60_000]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\s+↻ rate-limit: .*\(the server asked to wait 600 s; waiting at most 60 s\); retry 1 in 60\.0 s$/,
    );
  });

  it('waits a retry-after under the cap as asked, without a note', async () => {
    const { sleeps, lines } = await stageAfter429('7');
    expect(sleeps).toEqual([7000]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/; retry 1 in 7\.0 s$/);
    expect(lines[0]).not.toContain('the server asked');
  });
});
