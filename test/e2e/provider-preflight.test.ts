/**
 * End to end: a run whose provider cannot work is refused before anything exists (issue 13,
 * point 6). `ratchet tdd` on a project shaped like more-itertools used to run its baseline, make
 * a branch and a worktree, then fail at the first model call and leave a run to reject. Now the
 * provider is asked for its model list first (the probe `ratchet doctor` shows): an endpoint with
 * nothing listening, a key it rejects and a model it does not have each stop the run with exit 3
 * and leave no branch, worktree, backup, ledger or run directory, and the project's tests never
 * ran (its conftest.py writes a marker when they do; the control run shows that it does).
 */
import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { startFakeOpenAiServer } from '../support/fake-openai-server.js';
import { MORE_ITERTOOLS } from '../support/real-repo-fixtures.js';
import { assertFreshBuild, describeResult, runCli, type CliResult } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { toolchain } from '../support/toolchains.js';

// The control run's baseline runs the project's pytest tests (the refusals never get that far).
const pytest = toolchain('python3-pytest');

const KEY = 'sk-ant-test-provider-preflight-0123456789';

const repos: TempRepo[] = [];
afterAll(async () => {
  for (const repo of repos) await repo.cleanup();
});

interface Project {
  repo: TempRepo;
  home: string;
  /** Written by the project's conftest.py whenever its tests run. */
  marker: string;
}

/**
 * more-itertools, with a root conftest.py that leaves a marker when pytest runs and a
 * configuration that runs the tests without a sandbox (so the marker can be written outside the
 * run's worktree, where it would be seen even if the worktree were removed).
 */
async function project(): Promise<Project> {
  const repo = await createTempRepo({ files: MORE_ITERTOOLS });
  repos.push(repo);
  const marker = repo.path('tests-ran');
  await repo.write({ 'conftest.py': `open(${JSON.stringify(marker)}, 'a').close()\n` });
  repo.run('add', 'conftest.py');
  repo.run('commit', '-q', '-m', 'conftest');
  // `.ratchet/` is Ratchet's own: its untracked config does not make the tree dirty.
  await repo.write({
    '.ratchet/config.toml': '[test]\ncommand = "python3 -m pytest -q"\n\n[bash]\nsandbox = "off"\n',
  });
  return { repo, home: repo.path('ratchet-home'), marker };
}

/** Nothing of a run exists: no branch, worktree, backup, ledger, run directory, and the tests never ran. */
function expectNothingCreated({ repo, home, marker }: Project): void {
  expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');
  expect(repo.run('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
  for (const folder of ['worktrees', 'backups']) {
    const path = join(home, folder);
    expect(existsSync(path) ? readdirSync(path) : []).toEqual([]);
  }
  expect(existsSync(join(repo.dir, '.ratchet', 'ledger.db'))).toBe(false);
  expect(existsSync(join(repo.dir, '.ratchet', 'runs'))).toBe(false);
  expect(existsSync(marker)).toBe(false);
}

function expectProviderRefusal(result: CliResult, message: RegExp): void {
  expect(result.exitCode, describeResult(result)).toBe(3);
  expect(result.stderr).toMatch(message);
  expect(result.stderr).toContain('Nothing was started');
  expect(`${result.stdout}\n${result.stderr}`).not.toContain(KEY);
}

describe('a run whose provider cannot work (issue 13, point 6)', () => {
  beforeAll(() => assertFreshBuild());

  it.skipIf(pytest.missing)(
    `control: with a provider that answers, the run gets as far as the baseline, which writes the marker${pytest.note}`,
    async () => {
      const control = await project();
      const cassette = control.repo.path('empty.ndjson');
      await writeFile(cassette, `${JSON.stringify({ cassette: 1, description: 'no calls', model: 'scripted' })}\n`);
      const result = await runCli(['tdd', 'Add a windowed() recipe', '--provider', 'replay', '--cassette', cassette], {
        cwd: control.repo.dir,
        env: { ...control.repo.env, RATCHET_HOME: control.home },
      });
      // The empty cassette has no answer for PLAN: the run fails after its baseline ran.
      expect(result.exitCode, describeResult(result)).not.toBe(0);
      expect(existsSync(control.marker), describeResult(result)).toBe(true);
      expect(control.repo.run('branch', '--list', 'ratchet/*')).not.toBe('');
    },
  );

  it('tdd refuses a key the endpoint rejects (401)', async () => {
    const target = await project();
    const server = await startFakeAnthropicServer({ apiKey: 'sk-ant-test-the-only-accepted-key-000000' });
    try {
      const result = await runCli(
        ['tdd', 'Add a windowed() recipe', '--provider', 'anthropic', '--model', 'claude-sonnet-4-5'],
        {
          cwd: target.repo.dir,
          env: {
            ...target.repo.env,
            RATCHET_HOME: target.home,
            ANTHROPIC_BASE_URL: server.url,
            ANTHROPIC_API_KEY: KEY,
          },
        },
      );
      expectProviderRefusal(result, /ANTHROPIC_API_KEY rejected \(HTTP 401/);
      expect(result.stderr).toContain('hint: Set ANTHROPIC_API_KEY to a key this endpoint accepts');
      // One model list, no model call.
      expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /v1/models']);
      expectNothingCreated(target);
    } finally {
      await server.close();
    }
  });

  it('refactor run refuses an endpoint with nothing listening, before its backup and baseline', async () => {
    const target = await project();
    const closed = await startFakeAnthropicServer({ apiKey: KEY });
    const url = closed.url;
    await closed.close();
    const result = await runCli(
      ['refactor', 'run', '--provider', 'anthropic', '--model', 'claude-sonnet-4-5', '--yes'],
      {
        cwd: target.repo.dir,
        env: { ...target.repo.env, RATCHET_HOME: target.home, ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: KEY },
      },
    );
    expectProviderRefusal(result, new RegExp(`${url.replaceAll('.', '\\.')} does not answer: .*ECONNREFUSED`));
    expectNothingCreated(target);
  });

  it('tdd refuses a model the Ollama server does not have, naming the fix', async () => {
    const target = await project();
    const ollama = await startFakeOpenAiServer({ models: ['llama3.2:latest', 'qwen2.5-coder:7b'] });
    try {
      const result = await runCli(
        ['tdd', 'Add a windowed() recipe', '--provider', 'ollama', '--model', 'qwen2.5-coder'],
        {
          cwd: target.repo.dir,
          env: { ...target.repo.env, RATCHET_HOME: target.home, OLLAMA_HOST: ollama.url },
        },
      );
      expectProviderRefusal(
        result,
        /qwen2\.5-coder is not among the 2 models the endpoint lists \(llama3\.2:latest, qwen2\.5-coder:7b\)/,
      );
      expect(result.stderr).toContain('hint: ollama pull qwen2.5-coder, or pick a listed model with --model.');
      expect(ollama.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /v1/models']);
      expectNothingCreated(target);
    } finally {
      await ollama.close();
    }
  });
});
