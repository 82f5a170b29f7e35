/**
 * A run started with `--model` and `--record FILE`:
 * - `--model` wins over `[stages.red] model` (flags beat the file, and `--model` applies to every
 *   stage), but never silently: the run warns on the terminal and records the warning;
 * - `ratchet resume` keeps appending to the cassette (its path is stored with the run), so the
 *   cassette holds the calls of the whole run, not only those before the failure;
 * - `[stages.green] max_output_tokens` is what GREEN's calls ask for.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/ledger.js';
import { textOf } from '../support/anthropic-request.js';
import { parseCassette } from '../../src/llm/cassette.js';
import { createProjectRepo, E2E_API_KEY, ratchetEnv, readLedger, startScriptedModel } from '../support/e2e-run.js';
import { assertFreshBuild, describeResult, runCli } from '../support/run-cli.js';
import { JS_FEATURE, JS_PROJECT_FILES, javascriptScript } from '../support/tdd-script-javascript.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

const CONFIG = `[provider]
name = "anthropic"
model = "claude-e2e-global"

[lint]
command = "node scripts/lint.mjs"

[tdd]
refactor = "always"

[stages.red]
model = "claude-e2e-red"

[stages.green]
max_output_tokens = 3000
`;

const OVERRIDE_WARNING =
  '--model claude-e2e-flag applies to every stage: the stage models of .ratchet/config.toml are not used ([stages.red] model = "claude-e2e-red"). Leave out --model to use them.';

/** A run needs bubblewrap unless it opts out: where it is missing these runs do (the subject is resume, not the sandbox). */
const sandbox = sandboxForThisMachine();

describe(`a run started with --model and --record${sandbox.note}`, () => {
  beforeAll(() => assertFreshBuild());

  it('warns about the stage models --model overrides, and resume keeps recording into the cassette', async () => {
    const repo = await createProjectRepo({ ...JS_PROJECT_FILES, '.ratchet/config.toml': sandbox.config(CONFIG) });
    const model = await startScriptedModel(javascriptScript(E2E_API_KEY));
    const cassette = repo.path('session.ndjson');
    try {
      // The third model call is refused (a non-retryable 401): the run stops after two recorded calls.
      let calls = 0;
      model.server.setFallback((request) =>
        ++calls === 3 ? { kind: 'error', status: 401 } : model.brain.reply(request),
      );
      const failed = await runCli(['tdd', JS_FEATURE, '--model', 'claude-e2e-flag', '--record', cassette], {
        cwd: repo.dir,
        env: ratchetEnv(repo, model.server),
      });
      expect(failed.exitCode, describeResult(failed)).toBe(3);
      expect(failed.stdout + failed.stderr).toContain(OVERRIDE_WARNING);
      const runId = /ratchet resume (\S+)/.exec(failed.stderr)?.[1] ?? '(no run id)';
      const recordedBefore = parseCassette(await readFile(cassette, 'utf8')).entries.length;
      expect(recordedBefore).toBe(2);

      model.server.setFallback((request) => model.brain.reply(request));
      model.server.requests.length = 0;
      const resumed = await runCli(['resume', runId], { cwd: repo.dir, env: ratchetEnv(repo, model.server) });
      expect(resumed.exitCode, describeResult(resumed)).toBe(0);
      expect(model.brain.unexpected).toEqual([]);
      expect(resumed.stdout).toContain(`Recording continues in ${cassette} (the run was started with --record).`);
      // The run's --model still applies to every stage after the resume, and says so again.
      expect(resumed.stdout + resumed.stderr).toContain(OVERRIDE_WARNING);
      const bodies = model.server.requests
        .filter((request) => request.path === '/v1/messages')
        .map((request) => request.body as { model: string; max_tokens: number; system?: unknown });
      expect(new Set(bodies.map((body) => body.model))).toEqual(new Set(['claude-e2e-flag']));
      // [stages.green] max_output_tokens for GREEN; the default (16000) for a model of unknown limit elsewhere.
      const maxTokens = (stage: string) =>
        new Set(
          bodies.filter((body) => textOf(body.system).startsWith(`Stage: ${stage}\n`)).map((body) => body.max_tokens),
        );
      expect(maxTokens('GREEN')).toEqual(new Set([3000]));
      expect(maxTokens('RED')).toEqual(new Set([16_000]));

      // Every call that answered, before and after the resume, is in the one cassette (failed
      // calls, such as the script's one 429, are not recorded).
      const entries = parseCassette(await readFile(cassette, 'utf8')).entries;
      const answered = (await readLedger(repo.dir, runId)).modelCalls.filter((call) => call.error === null);
      expect(entries.length).toBeGreaterThan(recordedBefore + 10);
      expect(entries).toHaveLength(answered.length);

      const ledger = await openLedger(join(repo.dir, '.ratchet', 'ledger.db'), { secrets: [] });
      try {
        const warnings = await ledger.events(runId, { types: ['warning'] });
        const messages = warnings.map((event) => (event.type === 'warning' ? event.message : ''));
        // Once when the run started, once when it resumed.
        expect(messages.filter((message) => message === OVERRIDE_WARNING)).toHaveLength(2);
      } finally {
        await ledger.close();
      }
    } finally {
      await model.server.close();
      await repo.cleanup();
    }
  });
});
