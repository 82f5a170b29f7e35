import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bodySchema, textOf } from '../support/anthropic-request.js';
import {
  startFakeAnthropicServer,
  type AnthropicReply,
  type FakeAnthropicServer,
  type RecordedRequest,
} from '../support/fake-anthropic-server.js';
import { describeResult, runCli } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

const SPEC = `# Shop arithmetic
A price module (cents), a cart summing prices, and a receipt printing the cart.
`;

const task = (key: string, file: string, dependsOn: string[] = []): Record<string, unknown> => ({
  key,
  title: `The ${file} module`,
  goal: `Build src/${file}.js`,
  acceptanceCriteria: [`${file} works`],
  testFile: `test/${file}.test.js`,
  implFile: `src/${file}.js`,
  dependsOn,
  exports: [file],
});

const VALID = {
  tasks: [task('PRICE', 'price'), task('CART', 'cart', ['PRICE']), task('RECEIPT', 'receipt', ['CART'])],
};
/** Two problems a model makes: a dependency cycle and two tasks owning one implementation file. */
const INVALID = {
  tasks: [
    task('PRICE', 'price', ['CART']),
    task('CART', 'cart', ['PRICE']),
    { ...task('RECEIPT', 'receipt'), implFile: 'src/cart.js' },
  ],
};

/** The DECOMPOSE model: answers through the StructuredOutput tool it is offered, from a list of answers. */
function decomposeBrain(answers: unknown[]): (request: RecordedRequest) => AnthropicReply {
  return (request) => {
    const body = bodySchema.parse(request.body);
    const system = textOf(body.system);
    const answer = answers.shift();
    if (!system.startsWith('Stage: DECOMPOSE') || answer === undefined)
      return { kind: 'message', content: [{ type: 'text', text: 'unexpected request' }] };
    return { kind: 'message', content: [{ type: 'tool_use', name: 'StructuredOutput', input: answer }] };
  };
}

describe('ratchet tasks plan through the Anthropic adapter (loopback fake)', () => {
  let server: FakeAnthropicServer;
  let repo: TempRepo;
  let env: Record<string, string>;

  beforeEach(async () => {
    server = await startFakeAnthropicServer();
    repo = await createTempRepo({ files: { 'README.md': '# shop\n', 'spec.md': SPEC } });
    env = {
      ...repo.env,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-tasks-plan-000000000000',
      RATCHET_HOME: repo.path('ratchet-home'),
    };
  });
  afterEach(async () => {
    await server.close();
    await repo.cleanup();
  });

  const plan = (...extra: string[]) =>
    runCli(['tasks', 'plan', 'spec.md', '--provider', 'anthropic', '--model', 'claude-plan-e2e', ...extra], {
      cwd: repo.dir,
      env,
    });

  it('writes the validated tasks file the model answered, with the spec and repository files in the prompt', async () => {
    server.setFallback(decomposeBrain([VALID]));
    const result = await plan('--out', 'tasks.json');
    expect(result.exitCode, describeResult(result)).toBe(0);
    const written: unknown = JSON.parse(await readFile(repo.path('repo', 'tasks.json'), 'utf8'));
    expect(written).toEqual({ spec: 'spec.md', ...VALID });
    expect(server.requests).toHaveLength(1);
    const prompt = JSON.stringify(server.requests[0]?.body);
    expect(prompt).toContain('A price module (cents)');
    expect(prompt).toContain('README.md');
    expect(result.stdout).toContain('CART');
    expect(repo.run('status', '--porcelain')).toBe('?? tasks.json');
  });

  it('asks once more naming every problem of an invalid answer, and writes the corrected one', async () => {
    server.setFallback(decomposeBrain([INVALID, VALID]));
    const result = await plan('--json');
    expect(result.exitCode, describeResult(result)).toBe(0);
    expect(server.requests).toHaveLength(2);
    const retry = bodySchema.parse(server.requests[1]?.body).messages.at(-1);
    const correction = textOf(retry?.content);
    expect(correction).toMatch(/PRICE -> CART -> PRICE|CART -> PRICE -> CART/);
    expect(correction).toContain('src/cart.js');
    const line = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as { calls?: number };
    expect(line.calls).toBe(2);
    expect(JSON.parse(await readFile(repo.path('repo', 'tasks.json'), 'utf8'))).toEqual({ spec: 'spec.md', ...VALID });
  });

  it('fails with exit 1 and the problems when the corrected answer is invalid too, writing nothing', async () => {
    server.setFallback(decomposeBrain([INVALID, INVALID]));
    await writeFile(repo.path('repo', 'tasks.json'), 'kept\n');
    const result = await plan();
    expect(result.exitCode, describeResult(result)).toBe(1);
    expect(server.requests).toHaveLength(2);
    expect(result.stderr).toContain('invalid twice');
    expect(result.stderr).toContain('src/cart.js');
    expect(await readFile(repo.path('repo', 'tasks.json'), 'utf8')).toBe('kept\n');
  });

  it('refuses a missing specification with exit 2 before any model call', async () => {
    const result = await runCli(['tasks', 'plan', 'nope.md', '--provider', 'anthropic', '--model', 'm'], {
      cwd: repo.dir,
      env,
    });
    expect(result.exitCode, describeResult(result)).toBe(2);
    expect(server.requests).toHaveLength(0);
    expect(existsSync(repo.path('repo', 'tasks.json'))).toBe(false);
  });

  it('each tasks subcommand offers only the options it uses', async () => {
    const help = async (command: string): Promise<string> => {
      const result = await runCli(['tasks', command, '--help'], { cwd: repo.dir, env });
      expect(result.exitCode, describeResult(result)).toBe(0);
      return result.stdout.slice(0, result.stdout.indexOf('Global Options:'));
    };
    const optionsOf = (text: string): string[] =>
      [...text.matchAll(/^ {2}(--?[\w-]+)/gm)].map((match) => match[1] ?? '');
    // Planning asks the model and writes a file: no command runs, so nothing to sandbox, no workers.
    const planHelp = await help('plan');
    expect(optionsOf(planHelp)).toEqual([
      '--provider',
      '--model',
      '--base-url',
      '--cassette',
      '--record',
      '--out',
      '-h',
    ]);
    expect(planHelp).not.toContain('claude-code |');
    expect(optionsOf(await help('run'))).toEqual([
      '--provider',
      '--model',
      '--base-url',
      '--cassette',
      '--record',
      '--no-sandbox',
      '--workers',
      '--queue',
      '--publish',
      '--allow-dirty',
      '--refactor',
      '--max-attempts',
      '-h',
    ]);
    expect(optionsOf(await help('status'))).toEqual(['-h']);
    for (const command of ['retry', 'skip']) expect(optionsOf(await help(command))).toEqual(['--run', '-h']);

    const sandboxed = await plan('--no-sandbox');
    expect(sandboxed.exitCode, describeResult(sandboxed)).toBe(2);
    expect(sandboxed.stderr).toContain("unknown option '--no-sandbox'");
    expect(server.requests).toHaveLength(0);
  });

  it('tasks run refuses a replay cassette (exit 2) before any run exists', async () => {
    await writeFile(repo.path('tasks.json'), `${JSON.stringify(VALID)}\n`);
    await writeFile(repo.path('cassette.ndjson'), '');
    const result = await runCli(
      ['tasks', 'run', repo.path('tasks.json'), '--provider', 'replay', '--cassette', repo.path('cassette.ndjson')],
      { cwd: repo.dir, env },
    );
    expect(result.exitCode, describeResult(result)).toBe(2);
    expect(result.stderr).toContain('cannot replay a cassette');
    expect(repo.run('branch', '--list', 'ratchet/*')).toBe('');
  });
});
