/**
 * `ratchet resume` keeps the models of the run's configuration: a run whose model comes from
 * `.ratchet/config.toml` and whose RED stage has a model of its own (`[stages.red] model`) asks
 * RED's model for RED after a resume too. (Resume used to pass the run's model as `--model`,
 * which applies to every stage, so RED silently went to the global model.)
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { textOf } from '../support/anthropic-request.js';
import { createProjectRepo, E2E_API_KEY, ratchetEnv, startScriptedModel } from '../support/e2e-run.js';
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
`;

/** Runs `tdd` with `startArgs` (its first call is refused: 401), then `resume`; the model each stage asked for after it. */
async function modelsAfterResume(startArgs: readonly string[]): Promise<Record<string, string[]>> {
  const repo = await createProjectRepo({ ...JS_PROJECT_FILES, '.ratchet/config.toml': sandbox.config(CONFIG) });
  const model = await startScriptedModel(javascriptScript(E2E_API_KEY));
  try {
    // The key passes the provider check before the run; its first model call is refused (401).
    model.server.enqueue({
      kind: 'raw',
      status: 401,
      body: JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }),
    });
    const failed = await runCli(['tdd', JS_FEATURE, ...startArgs], {
      cwd: repo.dir,
      env: ratchetEnv(repo, model.server),
    });
    expect(failed.exitCode, describeResult(failed)).toBe(3);
    const runId = /ratchet resume (\S+)/.exec(failed.stderr)?.[1] ?? '(no run id)';
    model.server.requests.length = 0;

    const resumed = await runCli(['resume', runId], { cwd: repo.dir, env: ratchetEnv(repo, model.server) });
    expect(resumed.exitCode, describeResult(resumed)).toBe(0);
    expect(model.brain.unexpected).toEqual([]);

    const models = new Map<string, Set<string>>();
    for (const request of model.server.requests.filter((each) => each.path === '/v1/messages')) {
      const body = request.body as { model: string; system?: unknown };
      const stage = /^\s*Stage: (\w+)/.exec(textOf(body.system))?.[1] ?? '?';
      models.set(stage, (models.get(stage) ?? new Set()).add(body.model));
    }
    return Object.fromEntries([...models].map(([stage, used]) => [stage, [...used]]));
  } finally {
    await model.server.close();
    await repo.cleanup();
  }
}

/** A run needs bubblewrap unless it opts out: where it is missing these runs do (the subject is resume, not the sandbox). */
const sandbox = sandboxForThisMachine();

describe(`ratchet resume with a per-stage model in the configuration${sandbox.note}`, () => {
  beforeAll(() => assertFreshBuild());

  it('asks the stage model for RED after the resume, the global model for the other stages', async () => {
    expect(await modelsAfterResume([])).toEqual({
      PLAN: ['claude-e2e-global'],
      RED: ['claude-e2e-red'],
      RED_FIX: ['claude-e2e-global'],
      GREEN: ['claude-e2e-global'],
      FIX: ['claude-e2e-global'],
      REFACTOR: ['claude-e2e-global'],
    });
  });

  it('keeps a --model the run started with for every stage, RED included', async () => {
    const everywhere = await modelsAfterResume(['--model', 'claude-e2e-global']);
    expect(Object.values(everywhere).flat()).toEqual(Array(6).fill('claude-e2e-global'));
  });
});
