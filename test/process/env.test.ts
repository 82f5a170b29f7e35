import { describe, expect, it } from 'vitest';
import { commandEnvironment, withEnvironment } from '../../src/process/env.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { runCheck } from '../../src/verify/checks.js';

const RATCHET_ENV = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: '/home/me',
  LANG: 'en_US.UTF-8',
  LC_ALL: 'en_US.UTF-8',
  GOPATH: '/home/me/go',
  VIRTUAL_ENV: '/home/me/project/.venv',
  GITHUB_TOKEN: 'ghp_secret',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  GH_PAT: 'pat',
  NPM_CONFIG__AUTH: 'auth',
  PGPASSWORD: 'pg',
  ANTHROPIC_API_KEY: 'sk-ant-x',
  SSH_AUTH_SOCK: '/tmp/ssh-agent.sock',
  HTTPS_PROXY: 'http://user:pw@proxy:3128',
  NODE_OPTIONS: '--require /tmp/evil.js',
  DATABASE_URL: 'postgres://app:pw@db/app',
  UNSET: undefined,
};

describe('commandEnvironment', () => {
  it('keeps the allowlisted variables and nothing else', () => {
    expect(commandEnvironment(RATCHET_ENV)).toEqual({
      PATH: RATCHET_ENV.PATH,
      HOME: RATCHET_ENV.HOME,
      LANG: RATCHET_ENV.LANG,
      LC_ALL: RATCHET_ENV.LC_ALL,
      GOPATH: RATCHET_ENV.GOPATH,
      VIRTUAL_ENV: RATCHET_ENV.VIRTUAL_ENV,
      // Not Ratchet's: no command writes Python bytecode caches into a worktree.
      PYTHONDONTWRITEBYTECODE: '1',
    });
  });

  it('adds the names [bash] env passes, when Ratchet has them', () => {
    expect(commandEnvironment(RATCHET_ENV, ['DATABASE_URL', 'MISSING'])).toMatchObject({
      DATABASE_URL: RATCHET_ENV.DATABASE_URL,
    });
    expect(commandEnvironment(RATCHET_ENV, ['DATABASE_URL'])).not.toHaveProperty('MISSING');
  });

  it('lays additions over it, an undefined one removing a variable', () => {
    expect(withEnvironment({ A: '1', B: '2' }, { B: undefined, C: '3' })).toEqual({ A: '1', C: '3' });
  });

  it('is what a check command sees: the variable is absent, not empty', async () => {
    const result = await runCheck({
      name: 'env',
      command: 'env',
      cwd: process.cwd(),
      runner: createProcessRunner(),
      timeoutMs: 10_000,
      environment: commandEnvironment({ ...RATCHET_ENV, PATH: process.env.PATH }),
    });
    const names = result.output.split('\n').map((line) => line.split('=')[0]);
    expect(names).toContain('PATH');
    expect(
      names.filter((name) => /TOKEN|SECRET|PAT$|AUTH|PASSWORD|API_KEY|SOCK|PROXY|NODE_OPTIONS/.test(name ?? '')),
    ).toEqual([]);
  });
});
