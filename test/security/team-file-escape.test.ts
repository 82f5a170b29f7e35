/**
 * Issue 16: the team's agents are untrusted models with file tools. A scripted agent, driving the
 * built CLI through the loopback fake Anthropic server, tries what an attacker would: write into
 * the user's checkout by absolute path, climb out of its workspace with `..`, plant a git hook,
 * rewrite the team's own configuration, and read a secret from the checkout. Every attempt is
 * refused (not turned into an approval a tired user might click through), the secret never
 * reaches the model, and nothing outside the iteration's workspace changed.
 */
import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { describeResult, runCli } from '../support/run-cli.js';
import { createTeamBrain, type TeamBrain } from '../support/team-brain.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

const SECRET = 'sk-live-team-escape-0123456789';

describe('team agents cannot write or read outside their workspace', () => {
  let server: FakeAnthropicServer;
  let repo: TempRepo;
  let brain: TeamBrain;
  let env: Record<string, string>;

  beforeEach(async () => {
    server = await startFakeAnthropicServer();
    brain = createTeamBrain();
    server.setFallback((request) => brain.reply(request));
    repo = await createTempRepo({ files: { 'README.md': '# app\n', 'src/app.js': 'run();\n' } });
    await writeFile(join(repo.dir, '.env'), `API_KEY=${SECRET}\n`);
    env = {
      ...repo.env,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-team-escape-0000000',
      RATCHET_HOME: repo.path('ratchet-home'),
    };
  });
  afterEach(async () => {
    await server.close();
    await repo.cleanup();
  });

  it('refuses every escape, turns none into an approval, and leaves the checkout and the team as they were', async () => {
    const init = await runCli(['team', 'init', '--agents', '2'], { cwd: repo.dir, env });
    expect(init.exitCode, describeResult(init)).toBe(0);
    const teamBefore = await readFile(join(repo.dir, '.team', 'team.json'), 'utf8');
    const write = (file_path: string) => ({ name: 'Write', input: { file_path, content: 'pwned\n' } });
    brain.script(
      'agent-1',
      {
        tools: [
          write(join(repo.dir, 'src', 'app.js')),
          write('../../../escape.txt'),
          write(join(repo.dir, '.git', 'hooks', 'post-checkout')),
          write('.git/hooks/post-checkout'),
          write('.team/team.json'),
          write(join(repo.dir, '.team', 'team.json')),
          { name: 'Read', input: { file_path: join(repo.dir, '.env') } },
          { name: 'Read', input: { file_path: '../../../repo/.env' } },
        ],
      },
      { say: 'Done.' },
    );
    const result = await runCli(
      ['team', 'run', 'harmless work', '--max-turns', '1', '--provider', 'anthropic', '--model', 'claude-escape'],
      { cwd: repo.dir, env },
    );
    expect(result.exitCode, describeResult(result)).toBe(0);
    expect(result.stdout).not.toContain('Paused');

    const approvals = await runCli(['team', 'approvals', '--json'], { cwd: repo.dir, env });
    expect(JSON.parse(approvals.stdout)).toEqual({ approvals: [] });

    const secondCall = brain.seen.get('agent-1')?.[1] ?? '';
    expect(secondCall).toContain('Access denied');
    expect(secondCall).not.toContain(SECRET);
    expect(brain.unexpected).toEqual([]);

    // Nothing outside the workspace changed.
    expect(await readFile(join(repo.dir, 'src', 'app.js'), 'utf8')).toBe('run();\n');
    expect(await readFile(join(repo.dir, '.team', 'team.json'), 'utf8')).toBe(teamBefore);
    expect(existsSync(join(repo.dir, '.git', 'hooks', 'post-checkout'))).toBe(false);
    expect(repo.run('status', '--porcelain')).toBe('?? .env');
    expect(await readFile(join(repo.dir, '.env'), 'utf8')).toBe(`API_KEY=${SECRET}\n`);
    for (const dir of [repo.path(), repo.path('ratchet-home'), repo.path('ratchet-home', 'worktrees')])
      expect(await readdir(dir)).not.toContain('escape.txt');
    const workspace = String(
      (
        JSON.parse(await readFile(join(repo.dir, '.team', 'iterations', 'iter-1', 'iteration.json'), 'utf8')) as {
          workspace: string;
        }
      ).workspace,
    );
    expect(repo.run('-C', workspace, 'status', '--porcelain')).toBe('');
  });

  it("keeps the environment's secrets out of the team's logs, whoever repeats them", async () => {
    const token = 'ghp_teamLogSecret0123456789abcdefABCDEF';
    const withToken = { ...env, GITHUB_TOKEN: token };
    expect((await runCli(['team', 'init', '--agents', '2'], { cwd: repo.dir, env: withToken })).exitCode).toBe(0);
    brain.script('agent-1', { say: `The token is ${token}.` });
    const result = await runCli(
      [
        'team',
        'run',
        `use ${token} for the API`,
        '--max-turns',
        '1',
        '--provider',
        'anthropic',
        '--model',
        'claude-secret',
      ],
      { cwd: repo.dir, env: withToken },
    );
    expect(result.exitCode, describeResult(result)).toBe(0);
    const dir = join(repo.dir, '.team', 'iterations', 'iter-1');
    for (const log of ['conversation.jsonl', 'debug.jsonl', 'iteration.json']) {
      const text = await readFile(join(dir, log), 'utf8');
      expect(text, log).toContain('[REDACTED]');
      expect(text, log).not.toContain(token);
    }
    expect(JSON.stringify(server.requests.map((request) => request.body))).not.toContain(token);
  });
});
