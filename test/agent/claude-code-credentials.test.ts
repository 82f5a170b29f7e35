/**
 * The Claude Code CLI's credentials as Ratchet finds them (`findClaudeCredential`), what a call's
 * copy of `.claude.json` keeps, and the decision that lets a `/login` token refresh go back to
 * the user's `.credentials.json` (`refreshToKeep`): only a refresh of the same login.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  claudeConfigPaths,
  findClaudeCredential,
  refreshToKeep,
  withoutGlobalConfigSecrets,
} from '../../src/agent/claude-code/credentials.js';
import { claudeEnvironment } from '../../src/agent/claude-code/claude-environment.js';

const NOW = Date.UTC(2026, 10, 25, 12);
const HOUR = 60 * 60 * 1000;

interface Login {
  accessToken: string;
  refreshToken: string;
  expiresAt: number;
  scopes: string[];
  subscriptionType: string;
  accountUuid?: string;
  organizationUuid?: string;
  clientId?: string;
}

const LOGIN: Login = {
  accessToken: 'sk-ant-oat01-original-access-token',
  refreshToken: 'sk-ant-ort01-original-refresh-token',
  expiresAt: NOW + 60_000,
  scopes: ['user:inference', 'user:profile'],
  subscriptionType: 'max',
  accountUuid: '6f1c2a4e-0000-4000-8000-000000000001',
  organizationUuid: '6f1c2a4e-0000-4000-8000-0000000000aa',
  clientId: '9d1c250a-e61b-44d9-88ed-5944d1962f5e',
};

function file(login: Partial<Login> | undefined, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ ...(login === undefined ? {} : { claudeAiOauth: { ...LOGIN, ...login } }), ...extra }, null, 2)}\n`;
}

/** What the CLI writes after refreshing: new tokens, a later expiry, the rest as it was. */
const REFRESH: Partial<Login> = {
  accessToken: 'sk-ant-oat01-refreshed-access-token',
  refreshToken: 'sk-ant-ort01-refreshed-refresh-token',
  expiresAt: NOW + 8 * HOUR,
};

describe('refreshToKeep', () => {
  it('keeps a refresh of the same login: new tokens of the issued shapes, a newer expiry, nothing else changed', () => {
    const seeded = file({}, { mcpOAuth: { server: { accessToken: 'x' } } });
    const written = file(REFRESH, { mcpOAuth: { server: { accessToken: 'x' } } });
    expect(refreshToKeep(seeded, written, NOW)).toEqual({ keep: true, text: written });
    // The refresh token may stay as it was (not every refresh rotates it).
    const sameRefresh = file({ ...REFRESH, refreshToken: LOGIN.refreshToken });
    expect(refreshToKeep(file({}), sameRefresh, NOW).keep).toBe(true);
    // A login record older than the account identifiers: the refresh may add them.
    const bare = { accountUuid: undefined, organizationUuid: undefined, clientId: undefined };
    expect(refreshToKeep(file(bare), file(REFRESH), NOW).keep).toBe(true);
  });

  it.each([
    ['the tokens an agent planted for another account', { ...REFRESH, accountUuid: 'attacker-account' }, /accountUuid/],
    ['another organization', { ...REFRESH, organizationUuid: 'attacker-org' }, /organizationUuid/],
    ['another OAuth client', { ...REFRESH, clientId: 'attacker-client' }, /clientId/],
    ['an identifier removed', { ...REFRESH, accountUuid: undefined }, /accountUuid/],
    ['an expiry no later than before', { ...REFRESH, expiresAt: LOGIN.expiresAt }, /newer expiry/],
    ['an expiry in the past', { ...REFRESH, expiresAt: NOW - 1 }, /newer expiry/],
    ['an expiry years away', { ...REFRESH, expiresAt: NOW + 1000 * 24 * HOUR }, /newer expiry/],
    [
      'an access token not of the issued shape',
      { ...REFRESH, accessToken: 'sk-ant-api03-a-console-key' },
      /access token/,
    ],
    ['a token carrying a newline', { ...REFRESH, accessToken: 'sk-ant-oat01-abcdefgh\nrm -rf' }, /access token/],
    ['a refresh token not of the issued shape', { ...REFRESH, refreshToken: 'attacker' }, /refresh token/],
    ['wider scopes', { ...REFRESH, scopes: [...LOGIN.scopes, 'org:create_api_key'] }, /scopes/],
    ['the same access token', { expiresAt: NOW + HOUR }, /did not change/],
  ])('keeps nothing for %s', (_name, login, reason) => {
    const decision = refreshToKeep(file({}), file(login), NOW);
    expect(decision.keep).toBe(false);
    if (!decision.keep) expect(decision.reason).toMatch(reason);
  });

  it('keeps nothing when the rest of the file changed, or when either side is no login file', () => {
    expect(refreshToKeep(file({}), file(REFRESH, { planted: true }), NOW)).toMatchObject({ keep: false });
    expect(refreshToKeep(file({}, { mcpOAuth: 1 }), file(REFRESH, { mcpOAuth: 2 }), NOW)).toMatchObject({
      keep: false,
      reason: 'other entries of the file changed',
    });
    expect(refreshToKeep(file({}), 'garbage', NOW)).toMatchObject({ keep: false });
    expect(refreshToKeep(file({}), '{}', NOW)).toMatchObject({ keep: false });
    expect(refreshToKeep(file({}), '[1]', NOW)).toMatchObject({ keep: false });
    expect(refreshToKeep('{}', file(REFRESH), NOW)).toMatchObject({ keep: false });
    expect(refreshToKeep(file({}), file({}), NOW)).toEqual({ keep: false, reason: 'unchanged' });
  });
});

describe('findClaudeCredential', () => {
  async function home(onFinished: (hook: () => Promise<void>) => void): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'ratchet-claude-credentials-'));
    onFinished(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, '.claude'));
    return dir;
  }

  it('takes, in order: ANTHROPIC_AUTH_TOKEN, ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, the /login tokens, a saved Console key', async ({
    onTestFinished,
  }) => {
    const dir = await home(onTestFinished);
    await writeFile(join(dir, '.claude', '.credentials.json'), file({}));
    await writeFile(join(dir, '.claude.json'), JSON.stringify({ primaryApiKey: 'sk-ant-api03-saved' }));
    const env = {
      HOME: dir,
      ANTHROPIC_AUTH_TOKEN: 'gateway-token',
      ANTHROPIC_API_KEY: 'sk-ant-api03-env',
      CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-env',
    };
    const find = (overrides: Record<string, string | undefined>) =>
      findClaudeCredential({ ...env, ...overrides }, claudeConfigPaths({ ...env, ...overrides }));

    expect(await find({})).toEqual({ kind: 'auth-token', value: 'gateway-token', source: 'ANTHROPIC_AUTH_TOKEN' });
    expect(await find({ ANTHROPIC_AUTH_TOKEN: ' ' })).toMatchObject({ kind: 'api-key', value: 'sk-ant-api03-env' });
    expect(await find({ ANTHROPIC_AUTH_TOKEN: undefined, ANTHROPIC_API_KEY: undefined })).toMatchObject({
      kind: 'oauth',
      value: 'sk-ant-oat01-env',
      source: 'CLAUDE_CODE_OAUTH_TOKEN',
    });
    const none = { ANTHROPIC_AUTH_TOKEN: undefined, ANTHROPIC_API_KEY: undefined, CLAUDE_CODE_OAUTH_TOKEN: undefined };
    expect(await find(none)).toEqual({
      kind: 'oauth',
      value: LOGIN.accessToken,
      source: '/login',
      login: { file: join(dir, '.claude', '.credentials.json'), expiresAt: LOGIN.expiresAt },
    });
    await writeFile(join(dir, '.claude', '.credentials.json'), '{}');
    expect(await find(none)).toEqual({
      kind: 'api-key',
      value: 'sk-ant-api03-saved',
      source: '/login (Console API key)',
    });
    await writeFile(join(dir, '.claude.json'), '{}');
    expect(await find(none)).toBeUndefined();
  });

  it('finds the /login tokens where CLAUDE_CONFIG_DIR and CLAUDE_SECURESTORAGE_CONFIG_DIR put them', async ({
    onTestFinished,
  }) => {
    const dir = await home(onTestFinished);
    await mkdir(join(dir, 'config'));
    await mkdir(join(dir, 'secure'));
    await writeFile(join(dir, 'config', '.credentials.json'), file({ accessToken: 'sk-ant-oat01-in-config' }));
    await writeFile(join(dir, 'secure', '.credentials.json'), file({ accessToken: 'sk-ant-oat01-in-secure' }));
    const inConfig = { HOME: dir, CLAUDE_CONFIG_DIR: join(dir, 'config') };
    expect((await findClaudeCredential(inConfig, claudeConfigPaths(inConfig)))?.value).toBe('sk-ant-oat01-in-config');
    const inSecure = { ...inConfig, CLAUDE_SECURESTORAGE_CONFIG_DIR: join(dir, 'secure') };
    expect((await findClaudeCredential(inSecure, claudeConfigPaths(inSecure)))?.value).toBe('sk-ant-oat01-in-secure');
  });
});

describe("a call's copy of the configuration and environment", () => {
  it('drops the credentials .claude.json may hold, and keeps the rest', () => {
    const text = JSON.stringify({
      hasCompletedOnboarding: true,
      primaryApiKey: 'sk-ant-api03-saved',
      customApiKeyResponses: { approved: ['last-20-characters-x'] },
      oauthAccount: { emailAddress: 'me@example.com' },
    });
    expect(JSON.parse(withoutGlobalConfigSecrets(text) ?? '')).toEqual({
      hasCompletedOnboarding: true,
      oauthAccount: { emailAddress: 'me@example.com' },
    });
    expect(withoutGlobalConfigSecrets('not json')).toBeUndefined();
  });

  it('passes the CLI an allowlisted environment: no token, key, socket or proxy, [bash] env names added', () => {
    const source = {
      PATH: '/usr/bin',
      HOME: '/home/me',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TERM: 'xterm',
      TMPDIR: '/tmp',
      ANTHROPIC_MODEL: 'claude-opus-4-5',
      CLAUDE_CODE_MAX_RETRIES: '0',
      ANTHROPIC_API_KEY: 'sk-ant-api03-secret',
      ANTHROPIC_AUTH_TOKEN: 'secret',
      ANTHROPIC_BASE_URL: 'https://api.anthropic.com',
      CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-secret',
      GITHUB_TOKEN: 'ghp_secret',
      AWS_SECRET_ACCESS_KEY: 'secret',
      SSH_AUTH_SOCK: '/tmp/ssh-agent.sock',
      HTTPS_PROXY: 'http://user:pass@proxy:8080',
      NODE_OPTIONS: '--require /tmp/x.js',
      DATABASE_URL: 'postgres://localhost/test',
    };
    expect(claudeEnvironment(source)).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/me',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TERM: 'xterm',
      TMPDIR: '/tmp',
      ANTHROPIC_MODEL: 'claude-opus-4-5',
      CLAUDE_CODE_MAX_RETRIES: '0',
      // Every command Ratchet runs gets it (no bytecode caches to commit), Claude Code's too.
      PYTHONDONTWRITEBYTECODE: '1',
    });
    expect(claudeEnvironment(source, ['DATABASE_URL'])).toMatchObject({ DATABASE_URL: 'postgres://localhost/test' });
  });
});
