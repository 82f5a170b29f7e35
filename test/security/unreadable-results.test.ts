/**
 * Issue 11, finding 9: a run whose per-test results cannot be read went on to spend tokens on
 * "0 passed, 0 failed". The built CLI, a scripted model behind the loopback fake: the run stops
 * before the first model call, with a hint naming the cause; when that is known from the test
 * script alone, before any branch or worktree exists.
 */
import { existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ANTHROPIC_FLAGS,
  checkoutState,
  createProjectRepo,
  ratchetEnv,
  startScriptedModel,
  type ProjectRepo,
  type ScriptedModel,
  modelCallRequests,
} from '../support/e2e-run.js';
import { jsRunnersNodeModules } from '../support/js-runners.js';
import { assertFreshBuild, describeResult, parseNdjson, runCli } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

const MOCHA_TEST =
  "const assert = require('node:assert');\ndescribe('x', () => { it('works', () => { assert.ok(true); }); });\n";

/** The run stops before any command of the model: where bubblewrap is missing it opts out, to get that far. */
const sandbox = sandboxForThisMachine();

describe(`a run whose test results cannot be read stops before the first model call${sandbox.note}`, () => {
  let repo: ProjectRepo | undefined;
  let model: ScriptedModel | undefined;

  beforeAll(() => {
    assertFreshBuild();
  });

  afterEach(async () => {
    await model?.server.close();
    await repo?.cleanup();
  });

  async function tdd(files: Record<string, string>, prepare?: (dir: string) => void) {
    repo = await createProjectRepo(files);
    prepare?.(repo.dir);
    model = await startScriptedModel({ items: [], steps: [] });
    const before = checkoutState(repo);
    const result = await runCli(['tdd', 'Anything', ...ANTHROPIC_FLAGS, '--json', ...sandbox.flags], {
      cwd: repo.dir,
      env: ratchetEnv(repo, model.server),
    });
    expect(checkoutState(repo)).toEqual(before);
    expect(modelCallRequests(model.server), 'a model call was made').toEqual([]);
    return { result, events: parseNdjson(result.stdout), repo };
  }

  it('before any branch or worktree, when the test script surely cannot be read', async () => {
    const modules = jsRunnersNodeModules();
    const { result, repo: project } = await tdd(
      {
        'package.json': JSON.stringify({ name: 'x', scripts: { test: 'mocha --reporter spec test/ && echo done' } }),
        'test/a.js': MOCHA_TEST,
        '.gitignore': 'node_modules\n',
      },
      (dir) => symlinkSync(modules, join(dir, 'node_modules'), 'dir'),
    );
    expect(result.exitCode, describeResult(result)).toBe(2);
    const output = `${result.stdout}\n${result.stderr}`;
    expect(output).toContain('cannot read per-test results from `npm test`');
    expect(output).toContain('runs mocha inside a shell command line');
    expect(output).toContain('npx mocha');
    expect(project.run('branch', '--list', 'ratchet/*')).toBe('');
    expect(existsSync(join(project.home, 'worktrees'))).toBe(false);
  }, 120_000);

  it("at PLAN's baseline, when only running the command shows it prints no per-test result", async () => {
    const { result, events } = await tdd({
      'run-tests.js': "console.log('all 273 tests fine');\n",
      '.ratchet/config.toml': '[test]\ncommand = "node run-tests.js"\n',
    });
    expect(result.exitCode, describeResult(result)).toBe(2);
    const end = events.find((event) => event.type === 'run-end');
    expect(String(end?.message)).toContain('no per-test result could be read');
    expect(`${result.stdout}\n${result.stderr}`).toContain('[test] command');
    expect(events.some((event) => event.type === 'model-call')).toBe(false);
  }, 120_000);
});
