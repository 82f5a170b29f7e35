/**
 * End to end: a refactor run on a project shaped like more-itertools, stopped by a network error
 * at its first model call (the planner), is `failed` in `status` and `history`, as a TDD run
 * stopped so is: it used to show as `rejected`, which the user never did (issue 13, point 7).
 * `status` and `status --json` agree on its cost: unknown is said in words and is null in JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { MORE_ITERTOOLS } from '../support/real-repo-fixtures.js';
import { assertFreshBuild, describeResult, runCli } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { toolchain } from '../support/toolchains.js';

// The baseline runs the project's pytest tests; the run opts out of the sandbox where bubblewrap is missing.
const pytest = toolchain('python3-pytest');
const sandbox = sandboxForThisMachine();

const KEY = 'sk-ant-test-refactor-network-0123456789';
const MODEL = 'claude-from-a-gateway';

const StatusSchema = z.object({
  run: z.object({ id: z.string(), status: z.string(), error: z.string().nullable() }),
  summary: z.object({
    modelCalls: z.object({ total: z.number(), failed: z.number(), costUsd: z.number().nullable() }),
  }),
});
const HistorySchema = z.object({ runs: z.array(z.object({ id: z.string(), status: z.string() })) });

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

describe.skipIf(pytest.missing)(
  `a refactor run stopped by a network error (issue 13, point 7)${pytest.note}${sandbox.note}`,
  () => {
    beforeAll(() => assertFreshBuild());

    it('is failed, not rejected, in status and history; its unknown cost is null in --json as in the text', async () => {
      const repo: TempRepo = await createTempRepo({ files: MORE_ITERTOOLS });
      cleanups.push(() => repo.cleanup());
      await repo.write({
        // No retries: the network error ends the planner's call at once.
        '.ratchet/config.toml': '[test]\ncommand = "python3 -m pytest -q"\n\n[provider]\nmax_retries = 0\n',
      });
      // The key and the model pass the check before the run; then the connection drops.
      const server = await startFakeAnthropicServer({ apiKey: KEY });
      cleanups.push(() => server.close());
      server.setFallback(() => ({ kind: 'disconnect' }));
      const env = {
        ...repo.env,
        RATCHET_HOME: repo.path('ratchet-home'),
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: KEY,
      };

      const run = await runCli(
        [
          'refactor',
          'run',
          '--goal',
          'split long functions',
          '--provider',
          'anthropic',
          '--model',
          MODEL,
          '--yes',
          ...sandbox.flags,
        ],
        { cwd: repo.dir, env },
      );
      expect(run.exitCode, describeResult(run)).toBe(3);
      expect(
        server.requests.some((request) => request.path === '/v1/messages'),
        describeResult(run),
      ).toBe(true);

      const json = StatusSchema.parse(JSON.parse((await runCli(['status', '--json'], { cwd: repo.dir, env })).stdout));
      expect(json.run).toMatchObject({ status: 'failed', error: expect.stringMatching(/^network: /) as unknown });
      expect(json.summary.modelCalls).toMatchObject({ total: 1, failed: 1, costUsd: null });

      const text = await runCli(['status'], { cwd: repo.dir, env });
      expect(text.exitCode, describeResult(text)).toBe(0);
      expect(text.stdout).toMatch(new RegExp(`^Run ${json.run.id} \\(refactor\\) +failed$`, 'm'));
      expect(text.stdout).toContain(`cost unknown (the only call failed; no price known for ${MODEL})`);

      const history = await runCli(['history', '--json'], { cwd: repo.dir, env });
      expect(HistorySchema.parse(JSON.parse(history.stdout)).runs).toEqual([
        expect.objectContaining({ id: json.run.id, status: 'failed' }),
      ]);
      const historyText = await runCli(['history'], { cwd: repo.dir, env });
      expect(historyText.stdout).toMatch(new RegExp(`^ +${json.run.id} +failed +refactor `, 'm'));
      expect(historyText.stdout).not.toContain('rejected');
      // Nothing of the run is left to reject: its worktree and branch went with the failure.
      expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');
    });
  },
);
