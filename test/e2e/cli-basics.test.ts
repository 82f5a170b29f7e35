/**
 * End to end: the built CLI's everyday commands and its failure paths, each as a subprocess on
 * a temporary repository: help, demo, init, doctor, the dirty-tree guard, a rejected API key,
 * a project without a test command, and `status --json`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { startFakeOpenAiServer } from '../support/fake-openai-server.js';
import {
  ANTHROPIC_FLAGS,
  checkoutState,
  checkpointsOf,
  createProjectRepo,
  E2E_API_KEY,
  E2E_MODEL,
  readLedger,
  ratchetEnv,
  startScriptedModel,
  type ProjectRepo,
} from '../support/e2e-run.js';
import { assertFreshBuild, describeResult, parseNdjson, runCli } from '../support/run-cli.js';
import { say } from '../support/scripted-brain.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { toolchain } from '../support/toolchains.js';

/** A node:test project with one passing test. */
const NODE_PROJECT: Record<string, string> = {
  'README.md': '# tiny\n',
  'package.json': `${JSON.stringify({ name: 'tiny', private: true, type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  'test/one.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n\ntest('one is one', () => assert.equal(1, 1));\n",
};

/** The same project with a finished test list: PLAN has nothing left to pick. */
const FINISHED_PROJECT: Record<string, string> = {
  ...NODE_PROJECT,
  'test-list.md': '# Test list\n\n- [x] one is one\n',
};

const DoctorSchema = z.object({
  ok: z.boolean(),
  checks: z.array(
    z.object({
      name: z.string(),
      status: z.enum(['ok', 'warn', 'fail']),
      detail: z.string(),
      hint: z.string().optional(),
    }),
  ),
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function project(files: Record<string, string>): Promise<ProjectRepo> {
  const repo = await createProjectRepo(files);
  cleanups.push(() => repo.cleanup());
  return repo;
}

async function fakeServer(apiKey: string): Promise<FakeAnthropicServer> {
  const server = await startFakeAnthropicServer({ apiKey });
  cleanups.push(() => server.close());
  return server;
}

beforeAll(() => {
  assertFreshBuild();
});

/** The doctor test that checks what the sandbox enforces needs it; the runs here opt out where it is missing. */
const bwrap = toolchain('bwrap');
const sandbox = sandboxForThisMachine();

describe(`ratchet CLI basics (built CLI, subprocess)${sandbox.note}`, () => {
  it('prints help for the program and for tdd', async () => {
    const repo = await project(NODE_PROJECT);
    const help = await runCli(['--help'], { cwd: repo.dir, env: ratchetEnv(repo, null, null) });
    expect(help.exitCode, describeResult(help)).toBe(0);
    for (const command of [
      'init',
      'doctor',
      'demo',
      'tdd',
      'resume',
      'status',
      'history',
      'report',
      'rollback',
      'accept',
      'reject',
    ]) {
      expect(help.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
    }
    expect(help.stdout).toContain('Exit codes: 0 done, 1 gates failed, 2 usage/config, 3 provider/auth');

    const tddHelp = await runCli(['tdd', '--help'], { cwd: repo.dir, env: ratchetEnv(repo, null, null) });
    expect(tddHelp.exitCode, describeResult(tddHelp)).toBe(0);
    expect(tddHelp.stdout).toContain('Usage: ratchet tdd [options] <feature...>');
    for (const option of [
      '--provider <name>',
      '--model <id>',
      '--base-url <url>',
      '--allow-dirty',
      '--refactor <mode>',
      '--max-attempts <n>',
    ]) {
      expect(tddHelp.stdout).toContain(option);
    }
    // Help says what a command does, never which design seed it came from (issue 13).
    for (const args of [['--help'], ['refactor', '--help'], ['refactor', 'run', '--help'], ['demo', '--help']]) {
      const text = await runCli(args, { cwd: repo.dir, env: ratchetEnv(repo, null, null) });
      expect(text.stdout, args.join(' ')).not.toMatch(/seed/i);
    }

    const version = await runCli(['--json', '--version'], { cwd: repo.dir, env: ratchetEnv(repo, null, null) });
    expect(version.exitCode, describeResult(version)).toBe(0);
    expect(JSON.parse(version.stdout)).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) as unknown });

    const unknown = await runCli(['no-such-command'], { cwd: repo.dir, env: ratchetEnv(repo, null, null) });
    expect(unknown.exitCode, describeResult(unknown)).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'no-such-command'");
    // A script that asked for --json gets the usage error as JSON too.
    const unknownJson = await runCli(['status', '--no-such-flag', '--json'], {
      cwd: repo.dir,
      env: ratchetEnv(repo, null, null),
    });
    expect(unknownJson.exitCode, describeResult(unknownJson)).toBe(2);
    expect(JSON.parse(unknownJson.stdout.trim())).toMatchObject({
      type: 'error',
      code: 'usage',
      message: "unknown option '--no-such-flag'",
    });
  });

  it('runs the demo with its scripted model, no key needed', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-e2e-demo-')));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const home = join(dir, 'home');
    const demo = await runCli(['demo', '--dir', join(dir, 'demo')], {
      cwd: dir,
      env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1' },
    });
    expect(demo.exitCode, describeResult(demo)).toBe(0);
    expect(demo.stdout).toContain('Ratchet demo: the model is SCRIPTED.');
    expect(demo.stdout).toContain('The model was scripted (replay cassette); the gates, tests and commits were real.');
    expect(demo.stdout).toContain('Run ');
    expect(demo.stdout).toMatch(/17 commits on ratchet\/\S+/);
    expect(existsSync(join(dir, 'demo', 'stack-kata', '.ratchet', 'ledger.db'))).toBe(true);

    // A second demo into the same directory is refused (exit 2), and the first one is left as it was.
    const again = await runCli(['demo', '--dir', join(dir, 'demo')], {
      cwd: dir,
      env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1' },
    });
    expect(again.exitCode, describeResult(again)).toBe(2);
    expect(again.stderr).toContain(`${join(dir, 'demo', 'stack-kata')} already exists`);
    expect(existsSync(join(dir, 'demo', 'stack-kata', '.ratchet', 'ledger.db'))).toBe(true);
  }, 90_000);

  it('index prints a readable summary, --json the same numbers, and reuses its cache the second time', async () => {
    const repo = await project({
      ...NODE_PROJECT,
      'src/math.js': 'export function add(a, b) {\n  return a + b;\n}\n',
      'src/app.js': "import { add } from './math.js';\nexport const total = (xs) => xs.reduce(add, 0);\n",
    });
    const env = ratchetEnv(repo, null, null);
    const plain = await runCli(['index'], { cwd: repo.dir, env });
    expect(plain.exitCode, describeResult(plain)).toBe(0);
    expect(plain.stdout).toContain(`Indexed ${repo.dir}`);
    expect(plain.stdout).toMatch(/files +5 \(3 in a supported language: javascript 3; 1 of them tests\)/);
    expect(plain.stdout).toMatch(/graphs +1 import edges/);
    expect(plain.stdout).toMatch(/this run +3 parsed, 0 reused/);
    expect(plain.stdout).toMatch(/riskiest +src\/math\.js/);

    const json = await runCli(['index', '--json'], { cwd: repo.dir, env });
    expect(json.exitCode, describeResult(json)).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      root: repo.dir,
      files: 5,
      sourceFiles: 3,
      testFiles: 1,
      importEdges: 1,
      reused: 3,
      git: true,
      riskiest: [expect.objectContaining({ path: 'src/math.js' }), expect.objectContaining({ path: 'src/app.js' })],
    });
    // A file is not a project: said so, without blaming permissions.
    const file = await runCli(['index', join(repo.dir, 'src', 'math.js')], { cwd: repo.dir, env });
    expect(file.exitCode, describeResult(file)).toBe(2);
    expect(file.stderr).toContain(`${join(repo.dir, 'src', 'math.js')} is a file, not a directory.`);
    // The cache lives in the git-excluded .ratchet/ folder.
    expect(repo.run('status', '--porcelain', '--untracked-files=all')).toBe('');
  });

  it('init writes .ratchet/config.toml with the detected test command, and refuses to overwrite it', async () => {
    const repo = await project(NODE_PROJECT);
    const env = ratchetEnv(repo, null, null);
    const init = await runCli(['init', '--json'], { cwd: repo.dir, env });
    expect(init.exitCode, describeResult(init)).toBe(0);
    const file = join(repo.dir, '.ratchet', 'config.toml');
    expect(JSON.parse(init.stdout)).toEqual({
      config: file,
      testCommand: 'npm test',
      lintCommand: null,
      typecheckCommand: null,
      prompts: null,
    });
    expect(readFileSync(file, 'utf8')).toMatch(/^command = "npm test"$/m);
    // .ratchet/ stays out of git.
    expect(repo.run('status', '--porcelain', '--untracked-files=all')).toBe('');

    writeFileSync(file, `${readFileSync(file, 'utf8')}\n# edited by hand\n`);
    const again = await runCli(['init'], { cwd: repo.dir, env });
    expect(again.exitCode, describeResult(again)).toBe(2);
    expect(again.stderr).toContain('already exists; pass --force to overwrite it');
    const againJson = await runCli(['init', '--json'], { cwd: repo.dir, env });
    expect(againJson.exitCode, describeResult(againJson)).toBe(2);
    expect(JSON.parse(againJson.stdout.trim())).toMatchObject({
      type: 'error',
      code: 'usage',
      message: expect.stringContaining('already exists') as unknown,
    });
    expect(readFileSync(file, 'utf8')).toContain('# edited by hand');
    // --prompts on a configured repository adds the prompts and keeps the config.
    const prompts = await runCli(['init', '--prompts'], { cwd: repo.dir, env });
    expect(prompts.exitCode, describeResult(prompts)).toBe(0);
    expect(readFileSync(join(repo.dir, '.ratchet', 'prompts.toml'), 'utf8')).toContain('Stage: RED');
    expect(readFileSync(file, 'utf8')).toContain('# edited by hand');
    // A second time, it names the prompts file (not the config) and keeps both.
    const promptsAgain = await runCli(['init', '--prompts'], { cwd: repo.dir, env });
    expect(promptsAgain.exitCode, describeResult(promptsAgain)).toBe(2);
    expect(promptsAgain.stderr).toContain(
      `${join(repo.dir, '.ratchet', 'prompts.toml')} already exists (your prompts); init --prompts does not overwrite it.`,
    );
    expect(readFileSync(file, 'utf8')).toContain('# edited by hand');
    const forced = await runCli(['init', '--force'], { cwd: repo.dir, env });
    expect(forced.exitCode, describeResult(forced)).toBe(0);
    expect(readFileSync(file, 'utf8')).not.toContain('# edited by hand');
  });

  it.skipIf(bwrap.missing)(
    `doctor --json reports a missing API key with a fix, and passes with one${bwrap.note}`,
    async () => {
      const repo = await project(NODE_PROJECT);
      const server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
      cleanups.push(() => server.close());
      const without = await runCli(['doctor', '--json'], { cwd: repo.dir, env: ratchetEnv(repo, server, null) });
      expect(without.exitCode, describeResult(without)).toBe(2);
      const failing = DoctorSchema.parse(JSON.parse(without.stdout));
      expect(failing.ok).toBe(false);
      expect(failing.checks.filter((check) => check.status === 'fail')).toEqual([
        {
          name: 'provider',
          status: 'fail',
          detail: 'anthropic: ANTHROPIC_API_KEY is not set',
          hint: expect.stringContaining('export ANTHROPIC_API_KEY=') as unknown,
        },
      ]);
      expect(failing.checks.find((check) => check.name === 'test command')).toMatchObject({
        status: 'ok',
        detail: expect.stringContaining('npm test') as unknown,
      });
      expect(failing.checks.find((check) => check.name === 'baseline')).toMatchObject({
        status: 'ok',
        detail: expect.stringMatching(/^1 passed/) as unknown,
      });

      const withKey = await runCli(['doctor', '--json'], { cwd: repo.dir, env: ratchetEnv(repo, server, E2E_API_KEY) });
      expect(withKey.exitCode, describeResult(withKey)).toBe(0);
      const passing = DoctorSchema.parse(JSON.parse(withKey.stdout));
      expect(passing.ok).toBe(true);
      expect(passing.checks.find((check) => check.name === 'provider')).toMatchObject({
        status: 'ok',
        detail: expect.stringContaining('ANTHROPIC_API_KEY is set') as unknown,
      });
      expect(passing.checks.find((check) => check.name === 'endpoint')).toMatchObject({
        status: 'ok',
        detail: expect.stringContaining(`${server.url} answers`) as unknown,
      });
      // What the sandbox enforces, each found by trying it.
      const sandbox = passing.checks.filter((check) => check.name === 'sandbox');
      expect(sandbox.map((check) => `${check.status} ${check.detail.split(':')[0] ?? ''}`)).toEqual(
        ['writes', 'reads', 'dependencies', 'network', 'processes', 'privileges', 'limits'].map((kind) => `ok ${kind}`),
      );
      expect(withKey.stdout).not.toContain(E2E_API_KEY);

      // An endpoint nobody listens on, and a provider name that does not exist, each named as such.
      const closed = await runCli(['doctor', '--json', '--no-baseline', '--base-url', 'http://127.0.0.1:9'], {
        cwd: repo.dir,
        env: ratchetEnv(repo, server, E2E_API_KEY),
      });
      expect(closed.exitCode, describeResult(closed)).toBe(2);
      expect(DoctorSchema.parse(JSON.parse(closed.stdout)).checks.filter((check) => check.status === 'fail')).toEqual([
        {
          name: 'endpoint',
          status: 'fail',
          detail: expect.stringContaining('http://127.0.0.1:9 does not answer') as unknown,
          hint: expect.stringContaining('--base-url') as unknown,
        },
      ]);
      const bogus = await runCli(['doctor', '--json', '--no-baseline', '--provider', 'bogus'], {
        cwd: repo.dir,
        env: ratchetEnv(repo, server, E2E_API_KEY),
      });
      expect(
        DoctorSchema.parse(JSON.parse(bogus.stdout)).checks.find((check) => check.status === 'fail'),
      ).toMatchObject({
        name: 'config',
        detail: expect.stringContaining('bogus') as unknown,
      });
    },
  );

  it('doctor checks the key and the endpoint by listing the models (no tokens spent), never showing the key', async () => {
    const repo = await project(sandbox.files(NODE_PROJECT));
    const server = await startFakeAnthropicServer({
      apiKey: E2E_API_KEY,
      models: [E2E_MODEL, 'claude-other-20250101'],
    });
    cleanups.push(() => server.close());
    const doctor = (env: Record<string, string>, ...flags: string[]) =>
      runCli(['doctor', '--no-baseline', '--provider', 'anthropic', '--model', E2E_MODEL, ...flags], {
        cwd: repo.dir,
        env,
      });
    const endpointLines = (checks: z.infer<typeof DoctorSchema>['checks']) =>
      checks.filter((check) => ['endpoint', 'key', 'model'].includes(check.name));

    // The right key: accepted, the model listed; one GET of the Models API and no message sent.
    const right = await doctor(ratchetEnv(repo, server, E2E_API_KEY), '--json');
    expect(right.exitCode, describeResult(right)).toBe(0);
    expect(endpointLines(DoctorSchema.parse(JSON.parse(right.stdout)).checks)).toEqual([
      { name: 'endpoint', status: 'ok', detail: `${server.url} answers GET /v1/models (HTTP 200)` },
      { name: 'key', status: 'ok', detail: 'ANTHROPIC_API_KEY accepted' },
      { name: 'model', status: 'ok', detail: `${E2E_MODEL} is listed` },
    ]);
    expect(server.requests.map((request) => `${request.method} ${request.path}${request.search}`)).toEqual([
      'GET /v1/models?limit=1000',
    ]);
    expect(server.requests[0]?.headers).toMatchObject({ 'x-api-key': E2E_API_KEY, 'anthropic-version': '2023-06-01' });

    // A model the endpoint does not list is a warning only (gateways name models their own way).
    const unlisted = await runCli(
      ['doctor', '--no-baseline', '--json', '--provider', 'anthropic', '--model', 'claude-from-a-gateway'],
      { cwd: repo.dir, env: ratchetEnv(repo, server, E2E_API_KEY) },
    );
    expect(unlisted.exitCode, describeResult(unlisted)).toBe(0);
    expect(
      DoctorSchema.parse(JSON.parse(unlisted.stdout)).checks.find((check) => check.name === 'model'),
    ).toMatchObject({
      status: 'warn',
      detail: `claude-from-a-gateway is not among the 2 models the endpoint lists (${E2E_MODEL}, claude-other-20250101)`,
    });

    // A wrong key: rejected with a fix naming the variable, exit 2, the key nowhere in the output.
    const wrongKey = `sk-ant-WRONG-${E2E_API_KEY.slice(-24)}`;
    const wrongJson = await doctor(ratchetEnv(repo, server, wrongKey), '--json');
    expect(wrongJson.exitCode, describeResult(wrongJson)).toBe(2);
    const rejected = DoctorSchema.parse(JSON.parse(wrongJson.stdout));
    expect(rejected.ok).toBe(false);
    expect(rejected.checks.filter((check) => check.status === 'fail')).toEqual([
      {
        name: 'key',
        status: 'fail',
        detail: 'ANTHROPIC_API_KEY rejected (HTTP 401 authentication_error: invalid x-api-key)',
        hint: expect.stringContaining('export ANTHROPIC_API_KEY=...') as unknown,
      },
    ]);
    const wrongText = await doctor(ratchetEnv(repo, server, wrongKey));
    expect(wrongText.exitCode, describeResult(wrongText)).toBe(2);
    expect(wrongText.stdout).toMatch(/^✗ key +ANTHROPIC_API_KEY rejected \(HTTP 401/m);
    for (const output of [wrongJson.stdout, wrongJson.stderr, wrongText.stdout, wrongText.stderr]) {
      expect(output).not.toContain(wrongKey);
      expect(output).not.toContain(E2E_API_KEY);
    }

    // A server error on the models route is a failure, never "answers".
    const failing = await startFakeAnthropicServer({ apiKey: E2E_API_KEY, models: { status: 500 } });
    cleanups.push(() => failing.close());
    const broken = await doctor(ratchetEnv(repo, failing, E2E_API_KEY), '--json');
    expect(broken.exitCode, describeResult(broken)).toBe(2);
    expect(endpointLines(DoctorSchema.parse(JSON.parse(broken.stdout)).checks)).toEqual([
      {
        name: 'endpoint',
        status: 'fail',
        detail: `${failing.url} answered GET /v1/models with a server error (HTTP 500 api_error: Internal server error); ANTHROPIC_API_KEY is not verified`,
        hint: expect.stringContaining('--base-url') as unknown,
      },
    ]);

    // A gateway without the models route: reachable, key not verified, a warning (exit 0).
    const gateway = await startFakeAnthropicServer({ apiKey: E2E_API_KEY, models: 'absent' });
    cleanups.push(() => gateway.close());
    const unverified = await doctor(ratchetEnv(repo, gateway, E2E_API_KEY), '--json');
    expect(unverified.exitCode, describeResult(unverified)).toBe(0);
    expect(endpointLines(DoctorSchema.parse(JSON.parse(unverified.stdout)).checks)).toEqual([
      {
        name: 'endpoint',
        status: 'warn',
        detail: `${gateway.url} answers, but has no model list (GET /v1/models: HTTP 404); ANTHROPIC_API_KEY is not verified`,
        hint: expect.stringContaining('gateways') as unknown,
      },
    ]);
  });

  it('doctor lists the models of OpenAI-style endpoints with Bearer auth: openai, and ollama without a key', async () => {
    const repo = await project(sandbox.files(NODE_PROJECT));
    const openAiKey = `sk-proj-e2e-${E2E_API_KEY.slice(-20)}`;
    const server = await startFakeOpenAiServer({ apiKey: openAiKey, models: ['gpt-4o', 'llama3.2:latest'] });
    cleanups.push(() => server.close());
    const env = { ...ratchetEnv(repo, null, null) };
    const accepted = await runCli(
      ['doctor', '--no-baseline', '--json', '--provider', 'openai', '--model', 'gpt-4o', '--base-url', server.url],
      { cwd: repo.dir, env: { ...env, OPENAI_API_KEY: openAiKey } },
    );
    expect(accepted.exitCode, describeResult(accepted)).toBe(0);
    expect(
      DoctorSchema.parse(JSON.parse(accepted.stdout)).checks.filter((check) => ['key', 'model'].includes(check.name)),
    ).toEqual([
      { name: 'key', status: 'ok', detail: 'OPENAI_API_KEY accepted' },
      { name: 'model', status: 'ok', detail: 'gpt-4o is listed' },
    ]);
    expect(server.requests.at(-1)).toMatchObject({
      method: 'GET',
      path: '/v1/models',
      headers: { authorization: `Bearer ${openAiKey}` },
    });

    // OpenAI quotes a wrong key masked (sk-****...1234): not even that reaches the output.
    const wrongKey = `sk-proj-WRONG-${E2E_API_KEY.slice(-20)}`;
    const refused = await runCli(
      ['doctor', '--no-baseline', '--provider', 'openai', '--model', 'gpt-4o', '--base-url', server.url],
      { cwd: repo.dir, env: { ...env, OPENAI_API_KEY: wrongKey } },
    );
    expect(refused.exitCode, describeResult(refused)).toBe(2);
    expect(refused.stdout).toMatch(
      /^✗ key +OPENAI_API_KEY rejected \(HTTP 401 invalid_request_error: Incorrect API key provided: \[REDACTED\]\./m,
    );
    expect(refused.stdout).toContain('fix: Set OPENAI_API_KEY to a key this endpoint accepts');
    expect(refused.stdout + refused.stderr).not.toContain(wrongKey.slice(-4));

    // Ollama: OLLAMA_HOST, no key needed, `llama3.2` is served as `llama3.2:latest`.
    const ollama = await runCli(['doctor', '--no-baseline', '--json', '--provider', 'ollama', '--model', 'llama3.2'], {
      cwd: repo.dir,
      env: { ...env, OLLAMA_HOST: server.origin.replace('http://', '') },
    });
    expect(ollama.exitCode, describeResult(ollama)).toBe(2); // the fake wants a key: Ollama's own wants none
    expect(DoctorSchema.parse(JSON.parse(ollama.stdout)).checks.find((check) => check.name === 'key')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('the endpoint wants a key and none is set (HTTP 401') as unknown,
      hint: expect.stringContaining('Ollama itself needs no key') as unknown,
    });
    const keyless = await startFakeOpenAiServer({ models: ['llama3.2:latest'] });
    cleanups.push(() => keyless.close());
    const local = await runCli(['doctor', '--no-baseline', '--json', '--provider', 'ollama', '--model', 'llama3.2'], {
      cwd: repo.dir,
      env: { ...env, OLLAMA_HOST: keyless.origin.replace('http://', '') },
    });
    expect(local.exitCode, describeResult(local)).toBe(0);
    expect(
      DoctorSchema.parse(JSON.parse(local.stdout)).checks.filter((check) =>
        ['endpoint', 'key', 'model'].includes(check.name),
      ),
    ).toEqual([
      { name: 'endpoint', status: 'ok', detail: `${keyless.url} answers GET /v1/models (HTTP 200)` },
      { name: 'model', status: 'ok', detail: 'llama3.2 is listed (as llama3.2:latest)' },
    ]);
  });

  it('refuses a dirty working tree (exit 2, with a hint) unless --allow-dirty', async () => {
    const repo = await project(FINISHED_PROJECT);
    const model = await startScriptedModel({
      items: ['one is one'],
      steps: [
        {
          stage: 'PLAN',
          test: null,
          turns: [say('Every item is checked.', { name: 'StructuredOutput', input: { currentTest: null } })],
        },
      ],
    });
    cleanups.push(() => model.server.close());
    writeFileSync(join(repo.dir, 'README.md'), '# work in progress\n');
    const env = ratchetEnv(repo, model.server);

    const refused = await runCli(['tdd', 'More of it', ...ANTHROPIC_FLAGS, ...sandbox.flags], { cwd: repo.dir, env });
    expect(refused.exitCode, describeResult(refused)).toBe(2);
    expect(refused.stderr).toContain('The working tree has 1 uncommitted change.');
    expect(refused.stderr).toContain('hint: Commit or stash them (README.md), or pass --allow-dirty');
    expect(model.server.requests).toHaveLength(0);
    expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');

    const before = checkoutState(repo);
    const allowed = await runCli(
      ['tdd', 'More of it', ...ANTHROPIC_FLAGS, ...sandbox.flags, '--allow-dirty', '--json'],
      {
        cwd: repo.dir,
        env,
      },
    );
    expect(model.brain.unexpected).toEqual([]);
    expect(allowed.exitCode, describeResult(allowed)).toBe(0);
    const events = parseNdjson(allowed.stdout);
    expect(events.find((event) => event.type === 'warning')?.message).toMatch(
      /^--allow-dirty: the run starts from HEAD/,
    );
    const runId = String(events.find((event) => event.type === 'run-start')?.runId);
    // The run started from HEAD without the change, and the change is still in the checkout.
    const commits = checkpointsOf(repo, before.head, `ratchet/${runId}`);
    expect(commits.map((commit) => commit.subject)).toEqual(['plan: all tests done']);
    expect(repo.run('show', `ratchet/${runId}:README.md`)).toBe('# tiny');
    expect(checkoutState(repo)).toEqual(before);
    expect(readFileSync(join(repo.dir, 'README.md'), 'utf8')).toBe('# work in progress\n');

    // status --json reads the run back.
    const status = await runCli(['status', '--json'], { cwd: repo.dir, env });
    expect(status.exitCode, describeResult(status)).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      run: {
        id: runId,
        status: 'completed',
        workflow: 'tdd',
        feature: 'More of it',
        branch: `ratchet/${runId}`,
        baseCommit: before.head,
      },
      handoff: { phase: 'PLAN', nextPhase: 'COMPLETE', completedTests: ['one is one'], pendingTests: [] },
      checkpoint: commits[0]?.sha,
      summary: { runId, modelCalls: { total: 1, failed: 0 }, checkpoints: 1 },
    });
  });

  it('refuses a prompts.toml that renames a stage, and a repository without commits, before any run exists (exit 2)', async () => {
    const repo = await project(NODE_PROJECT);
    const server = await fakeServer('sk-ant-test-key-prompts-000000000');
    const env = ratchetEnv(repo, server);
    mkdirSync(join(repo.dir, '.ratchet'), { recursive: true });
    writeFileSync(join(repo.dir, '.ratchet', 'prompts.toml'), '[stages.red]\nsystem = "You are RED."\n');
    const refused = await runCli(['tdd', 'Anything', ...ANTHROPIC_FLAGS], { cwd: repo.dir, env });
    expect(refused.exitCode, describeResult(refused)).toBe(2);
    expect(refused.stderr).toContain('The stages.red.system prompt must start with the line "Stage: RED"');
    expect(server.requests).toHaveLength(0);
    expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');
    expect(repo.run('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    const status = await runCli(['status'], { cwd: repo.dir, env });
    expect(status.stderr).toContain('No runs in this repository yet.');

    const fresh = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-no-commits-')));
    cleanups.push(() => rm(fresh, { recursive: true, force: true }));
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: fresh, env: { ...process.env, ...repo.env } });
    writeFileSync(join(fresh, 'package.json'), '{ "scripts": { "test": "node --test" } }\n');
    const empty = await runCli(['tdd', 'Anything', ...ANTHROPIC_FLAGS, '--allow-dirty'], { cwd: fresh, env });
    expect(empty.exitCode, describeResult(empty)).toBe(2);
    expect(empty.stderr).toMatch(
      /has no commits yet: a run starts from a commit\.[\s\S]*hint: Commit your project first/,
    );
    const doctor = await runCli(['doctor', '--json', '--no-baseline'], { cwd: fresh, env });
    expect(doctor.exitCode, describeResult(doctor)).toBe(2);
    expect(JSON.parse(doctor.stdout)).toMatchObject({
      checks: expect.arrayContaining([
        {
          name: 'repository',
          status: 'fail',
          detail: `${fresh} has no commits yet`,
          hint: expect.stringContaining('Commit your project first') as unknown,
        },
      ]) as unknown,
    });
  });

  it('stops at once with exit 3 and a clear message when a model call is refused as unauthorised (401)', async () => {
    const repo = await project(NODE_PROJECT);
    // The key passes the provider check before the run (a model list); the model call is then
    // refused (a key revoked meanwhile, or one a gateway allows to list but not to call). A key
    // rejected from the start refuses the run before it exists: test/e2e/provider-preflight.test.ts.
    const server = await fakeServer(E2E_API_KEY);
    server.enqueue({
      kind: 'raw',
      status: 401,
      body: JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }),
    });
    const run = await runCli(['tdd', 'Anything', ...ANTHROPIC_FLAGS, ...sandbox.flags], {
      cwd: repo.dir,
      env: ratchetEnv(repo, server, E2E_API_KEY),
    });
    expect(run.exitCode, describeResult(run)).toBe(3);
    expect(`${run.stdout}\n${run.stderr}`).toContain('anthropic rejected the credentials (HTTP 401)');
    expect(run.stderr).toContain('hint: Check that ANTHROPIC_API_KEY holds a valid API key for anthropic.');
    // Authentication errors are not retried: one model call after the model list.
    expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'GET /v1/models',
      'POST /v1/messages',
    ]);
    expect(`${run.stdout}\n${run.stderr}`).not.toContain(E2E_API_KEY);
    const runId = /ratchet resume (\S+)/.exec(run.stderr)?.[1] ?? '';
    const ledger = await readLedger(repo.dir, runId);
    expect(ledger.run).toMatchObject({ status: 'failed', error: expect.stringMatching(/^auth: /) as unknown });
    expect(ledger.modelCalls.map((call) => call.errorCode)).toEqual(['auth']);
    // Its one model call failed and the model has no known price: status and report say the
    // cost is unknown (not $0.0000), and count the attempt that ended in an error.
    const status = await runCli(['status'], { cwd: repo.dir, env: ratchetEnv(repo, server, E2E_API_KEY) });
    expect(status.exitCode, describeResult(status)).toBe(0);
    const unknownCost = `unknown (the only call failed; no price known for ${E2E_MODEL})`;
    expect(status.stdout).toContain('  stages    1 attempt (0 accepted, 0 rejected, 1 error)\n');
    expect(status.stdout).toContain(`  model     1 call (1 failed), 0 in / 0 out tokens, cost ${unknownCost}\n`);
    // --json says the same: an unknown cost is null, not 0 (issue 13).
    const statusJson = await runCli(['status', '--json'], {
      cwd: repo.dir,
      env: ratchetEnv(repo, server, E2E_API_KEY),
    });
    expect(
      z
        .object({ summary: z.object({ modelCalls: z.object({ costUsd: z.number().nullable() }) }) })
        .parse(JSON.parse(statusJson.stdout)).summary.modelCalls.costUsd,
    ).toBeNull();
    const report = await runCli(['report'], { cwd: repo.dir, env: ratchetEnv(repo, server, E2E_API_KEY) });
    expect(report.stdout).toContain(`| Cost | ${unknownCost} |`);
    expect(report.stdout).toContain('| Stage attempts | 1: 0 accepted, 0 rejected, 1 error |');
  });

  it('refuses to --record into the cassette it replays (exit 2), before any run exists', async () => {
    const repo = await project(NODE_PROJECT);
    const cassette = join(repo.dir, '..', 'session.ndjson');
    writeFileSync(cassette, '');
    const run = await runCli(
      ['tdd', 'anything', '--provider', 'replay', '--cassette', cassette, '--record', cassette],
      { cwd: repo.dir, env: ratchetEnv(repo, null) },
    );
    expect(run.exitCode, describeResult(run)).toBe(2);
    expect(run.stderr).toContain('is the cassette being replayed');
    expect(readFileSync(cassette, 'utf8')).toBe('');
    expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');
  });

  it('refuses an unusable RATCHET_HOME (exit 2) before any branch exists, for tdd and refactor run', async () => {
    const repo = await project(NODE_PROJECT);
    const server = await fakeServer(E2E_API_KEY);
    // A home below a regular file can never be a directory.
    writeFileSync(repo.path('a-file'), 'not a directory\n');
    const env = { ...ratchetEnv(repo, server), RATCHET_HOME: repo.path('a-file', 'home') };
    for (const args of [
      ['tdd', 'Anything', ...ANTHROPIC_FLAGS],
      ['refactor', 'run', '--yes', ...ANTHROPIC_FLAGS],
    ]) {
      const run = await runCli(args, { cwd: repo.dir, env });
      expect(run.exitCode, describeResult(run)).toBe(2);
      expect(run.stderr).toContain(`error: Ratchet's home ${repo.path('a-file', 'home')} is not a writable directory`);
      expect(run.stderr).toContain('hint: Set RATCHET_HOME to a writable directory');
      expect(run.stderr).not.toContain('git worktree add');
      expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');
      expect(repo.run('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    }
    expect(server.requests).toHaveLength(0);
    const status = await runCli(['status'], { cwd: repo.dir, env });
    expect(status.stderr).toContain('No runs in this repository yet.');
  });

  it('leaves no branch behind when the run`s worktree cannot be created', async () => {
    const repo = await project(NODE_PROJECT);
    const server = await fakeServer(E2E_API_KEY);
    const env = ratchetEnv(repo, server);
    // The home is a writable directory, but the worktrees cannot go where git is told to put them.
    mkdirSync(repo.home, { recursive: true });
    writeFileSync(join(repo.home, 'worktrees'), 'not a directory\n');
    for (const args of [
      ['tdd', 'Anything', ...ANTHROPIC_FLAGS, ...sandbox.flags],
      ['refactor', 'run', '--yes', ...ANTHROPIC_FLAGS, ...sandbox.flags],
    ]) {
      const run = await runCli(args, { cwd: repo.dir, env });
      expect(run.exitCode, describeResult(run)).toBe(1);
      expect(run.stderr).toContain('git worktree add');
      // git made the branch before it failed to make the directory: it is gone again.
      expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');
      expect(repo.run('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    }
    // The provider was checked (its model list), no model was called.
    expect(server.requests.filter((request) => request.path !== '/v1/models')).toEqual([]);
    // No run was recorded for them either, so there is nothing `reject` would have to find.
    const status = await runCli(['status'], { cwd: repo.dir, env });
    expect(status.stderr).toContain('No runs in this repository yet.');
  });

  it('resume in a repository without runs says so (exit 2) and creates nothing', async () => {
    const repo = await project(NODE_PROJECT);
    const env = ratchetEnv(repo, null);
    const resume = await runCli(['resume'], { cwd: repo.dir, env });
    expect(resume.exitCode, describeResult(resume)).toBe(2);
    expect(resume.stderr).toContain('error: No runs in this repository yet.');
    const named = await runCli(['resume', '20260101-000000-abcd', '--json'], { cwd: repo.dir, env });
    expect(named.exitCode, describeResult(named)).toBe(2);
    expect(parseNdjson(named.stdout)).toEqual([
      expect.objectContaining({
        type: 'error',
        code: 'not-found',
        message: 'No run 20260101-000000-abcd in this repository.',
      }),
    ]);
    expect(existsSync(join(repo.dir, '.ratchet'))).toBe(false);
    expect(repo.run('status', '--porcelain', '--untracked-files=all')).toBe('');
  });

  it('exits 2 with the config hint when the project has no test command', async () => {
    const repo = await project({ 'README.md': '# no tests here\n' });
    const server = await fakeServer(E2E_API_KEY);
    const run = await runCli(['tdd', 'Anything', ...ANTHROPIC_FLAGS], { cwd: repo.dir, env: ratchetEnv(repo, server) });
    expect(run.exitCode, describeResult(run)).toBe(2);
    expect(run.stderr).toContain('error: No test command found in');
    expect(run.stderr).toContain('hint: Set [test] command = "..." in .ratchet/config.toml');
    expect(server.requests).toHaveLength(0);
    expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');

    const json = await runCli(['tdd', 'Anything', ...ANTHROPIC_FLAGS, '--json'], {
      cwd: repo.dir,
      env: ratchetEnv(repo, server),
    });
    expect(json.exitCode, describeResult(json)).toBe(2);
    expect(parseNdjson(json.stdout)).toEqual([
      {
        type: 'error',
        code: 'config',
        message: expect.stringContaining('No test command found') as unknown,
        hint: 'Set [test] command = "..." in .ratchet/config.toml',
      },
    ]);
  });
});
