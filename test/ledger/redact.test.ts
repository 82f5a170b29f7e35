import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTED, redactValue, secretsFromEnv } from '../../src/ledger/index.js';
import { isSecretVariable, looksLikeSecret } from '../../src/core/redact.js';

const ANTHROPIC_KEY = 'sk-ant-api03-THIS-IS-SECRET-abcdefghijklmnopqrstuvwxyz0123456789_AA';
const OPENAI_KEY = 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';

describe('createRedactor', () => {
  const redact = createRedactor(['custom-secret-value-42', 'short']);

  it('replaces every occurrence of configured secrets and ignores short ones', () => {
    expect(redact('a custom-secret-value-42 b custom-secret-value-42')).toBe(`a ${REDACTED} b ${REDACTED}`);
    expect(redact('a short word')).toBe('a short word');
  });

  it('replaces JSON-escaped and URL-encoded spellings of a configured secret', () => {
    const tricky = createRedactor(['pa"ss/word\\123']);
    expect(tricky(JSON.stringify({ p: 'pa"ss/word\\123' }))).not.toContain('word');
    expect(tricky(`https://x.test/?p=${encodeURIComponent('pa"ss/word\\123')}`)).toBe(`https://x.test/?p=${REDACTED}`);
  });

  it('replaces Anthropic and OpenAI key shapes without configuration', () => {
    const none = createRedactor([]);
    expect(none(`key ${ANTHROPIC_KEY} end`)).toBe(`key ${REDACTED} end`);
    expect(none(`OPENAI=${OPENAI_KEY}`)).toBe(`OPENAI=${REDACTED}`);
    expect(none('sk-abcdefghijklmnopqrstuvwx1234')).toBe(REDACTED);
    expect(none('task-abcdefghijklmnopqrstuvwx and risk-assessment-of-the-project')).toBe(
      'task-abcdefghijklmnopqrstuvwx and risk-assessment-of-the-project',
    );
  });

  it('replaces bearer tokens and labelled values, keeping the label', () => {
    const none = createRedactor([]);
    expect(none('Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig')).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(none('Authorization: Basic dXNlcjpwYXNz')).toBe(`Authorization: Basic ${REDACTED}`);
    expect(none('curl -H "x-api-key: abc123def456" https://api')).toBe(`curl -H "x-api-key: ${REDACTED}" https://api`);
    expect(none('{"apiKey":"hunter2hunter2","model":"m"}')).toBe(`{"apiKey":"${REDACTED}","model":"m"}`);
    expect(none('{\\"api_key\\": \\"zzz999\\"}')).toBe(`{\\"api_key\\": \\"${REDACTED}\\"}`);
    expect(none('api_key=abc123&x=1')).toBe(`api_key=${REDACTED}&x=1`);
    expect(none('export ANTHROPIC_API_KEY=whatever-it-is')).toBe(`export ANTHROPIC_API_KEY=${REDACTED}`);
    expect(none("password: 'p4ss'")).toBe(`password: '${REDACTED}'`);
    expect(none('GITHUB_TOKEN=ghp_123456789')).toBe(`GITHUB_TOKEN=${REDACTED}`);
    // Closing brackets after a value are prose, not part of the secret.
    expect(none('(Debug: TOKEN=abc123def456)')).toBe(`(Debug: TOKEN=${REDACTED})`);
    expect(none('[password=hunter2hunter2]')).toBe(`[password=${REDACTED}]`);
  });

  it('replaces the password of a URL, keeping scheme, user and host', () => {
    const none = createRedactor([]);
    expect(none('GET http://qauser:SuperSecretPw9876@127.0.0.1:1/v1')).toBe(
      `GET http://qauser:${REDACTED}@127.0.0.1:1/v1`,
    );
    expect(none('{"base_url":"https://me:p%40ss@proxy.example/v1"}')).toBe(
      `{"base_url":"https://me:${REDACTED}@proxy.example/v1"}`,
    );
    // A port is not a password, and an address without credentials is left alone.
    expect(none('http://127.0.0.1:8080/v1 and git@github.com:org/repo.git')).toBe(
      'http://127.0.0.1:8080/v1 and git@github.com:org/repo.git',
    );
  });

  it('leaves ordinary text alone and is idempotent', () => {
    const none = createRedactor([]);
    const text = 'max_tokens: 4096, inputTokens 12, "Stage: GREEN" -- the api key is configured in env';
    expect(none(text)).toBe(text);
    const once = redact(`Bearer abcdefgh12345 ${ANTHROPIC_KEY} api_key=x1`);
    expect(redact(once)).toBe(once);
  });
});

describe('redactValue', () => {
  it('redacts strings and keys deeply, and string values under secret-looking keys', () => {
    const redact = createRedactor(['custom-secret-value-42']);
    const input = {
      headers: { 'x-api-key': 'anything', Authorization: 'Basic dXNlcjpwYXNz' },
      apiKey: 'plainvalue',
      accessToken: 'tok',
      maxOutputTokens: 4096,
      nested: [{ text: `use ${ANTHROPIC_KEY}` }, 'custom-secret-value-42', 7, null, true],
      'custom-secret-value-42': 'as a key',
      when: new Date('2026-01-01T00:00:00.000Z'),
    };
    const output = redactValue(input, redact);
    expect(output).toEqual({
      headers: { 'x-api-key': REDACTED, Authorization: REDACTED },
      apiKey: REDACTED,
      accessToken: REDACTED,
      maxOutputTokens: 4096,
      nested: [{ text: `use ${REDACTED}` }, REDACTED, 7, null, true],
      [REDACTED]: 'as a key',
      when: '2026-01-01T00:00:00.000Z',
    });
    expect(input.apiKey).toBe('plainvalue');
  });
});

describe('secretsFromEnv', () => {
  it('collects values of *_KEY, *_TOKEN, *_SECRET and *_PASSWORD variables', () => {
    expect(
      secretsFromEnv({
        ANTHROPIC_API_KEY: ANTHROPIC_KEY,
        OPENAI_API_KEY: OPENAI_KEY,
        GITHUB_TOKEN: 'ghp_abcdefghijkl',
        AWS_SECRET: '  aws-secret-value  ',
        DB_PASSWORD: 'correct horse battery',
        SHORT_KEY: 'abc',
        EMPTY_TOKEN: undefined,
        PATH: '/usr/bin:/bin',
        KEYBOARD: 'us-international',
        DUPLICATE_KEY: ANTHROPIC_KEY,
      }),
    ).toEqual([ANTHROPIC_KEY, OPENAI_KEY, 'ghp_abcdefghijkl', 'aws-secret-value', 'correct horse battery']);
  });
});

describe('secret names and values (issue 11, finding 6)', () => {
  it('recognises the names of the finding and their kin, not ordinary names', () => {
    const secret = [
      'GITHUB_TOKEN',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_ACCESS_KEY_ID',
      'GH_PAT',
      'NPM_CONFIG__AUTH',
      'npm_config__auth',
      'PGPASSWORD',
      'MYSQL_PWD_PASSWD',
      'SENTRY_DSN',
      'SSH_PRIVATE_KEY',
      'SESSION_COOKIE',
      'GOOGLE_APPLICATION_CREDENTIALS',
      'SLACK_WEBHOOK_URL',
      'DB_PASS',
    ];
    const ordinary = ['PATH', 'HOME', 'GIT_AUTHOR_NAME', 'KEYBOARD', 'GOPRIVATE', 'COMPASS_DIR', 'PWD', 'PATCH_LEVEL'];
    expect(secret.filter((name) => !isSecretVariable(name))).toEqual([]);
    expect(ordinary.filter((name) => isSecretVariable(name))).toEqual([]);
  });

  it('recognises key-shaped and random-looking values, not paths, hashes or words', () => {
    const secret = [
      `ghp_${'a1B2'.repeat(9)}`,
      'AKIAIOSFODNN7EXAMPLE',
      'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      'Zx9Qw8Er7Ty6Ui5Op4As3Df2',
      '-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----',
    ];
    const ordinary = [
      '/home/user/.cache/Something2Long',
      '0123456789abcdef0123456789abcdef01234567',
      '123e4567-e89b-12d3-a456-426614174000',
      'correct-horse-battery-staple',
      'C.UTF-8',
      'rs=0:di=01;34:ln=01;36',
    ];
    expect(secret.filter((value) => !looksLikeSecret(value))).toEqual([]);
    expect(ordinary.filter((value) => looksLikeSecret(value))).toEqual([]);
  });

  it('collects the values of the finding, the password of a URL, and random values whatever their names', () => {
    const env = {
      GITHUB_TOKEN: `ghp_${'a1B2'.repeat(9)}`,
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      GH_PAT: 'github_pat_11AAAAAAA0123456789_abcdefghijklmnopqrstuvwxyz',
      NPM_CONFIG__AUTH: 'dXNlcjpzM2NyM3QtbnBt',
      PGPASSWORD: 'pg-s3cr3t-value',
      DATABASE_URL: 'postgres://app:Hunter2Hunter2@db.internal:5432/app',
      SOMETHING: 'Zx9Qw8Er7Ty6Ui5Op4As3Df2',
      HOME: '/home/user',
      PATH: '/usr/bin:/bin',
      LANG: 'C.UTF-8',
      GIT_COMMIT: '0123456789abcdef0123456789abcdef01234567',
    };
    expect(secretsFromEnv(env)).toEqual([
      env.GITHUB_TOKEN,
      env.AWS_SECRET_ACCESS_KEY,
      env.GH_PAT,
      env.NPM_CONFIG__AUTH,
      env.PGPASSWORD,
      env.DATABASE_URL,
      'Hunter2Hunter2',
      env.SOMETHING,
    ]);
  });

  it('removes the start of a secret where text was cut with an ellipsis, not a shorter start', () => {
    const redact = createRedactor(['pg-s3cr3t-value-1234']);
    expect(redact('feat: uses pg-s3cr3t-va…')).toBe(`feat: uses ${REDACTED}…`);
    expect(redact('feat: uses pg-s3cr…')).toBe('feat: uses pg-s3cr…');
    expect(redact('pg-s3cr3t-value without a cut')).toBe('pg-s3cr3t-value without a cut');
  });

  it("removes only the configured secrets with shapes: 'none' (prompts keep the project's fixtures)", () => {
    const redact = createRedactor(['pg-s3cr3t-value-1234'], { shapes: 'none' });
    expect(redact(`password=hunter2 AKIAIOSFODNN7EXAMPLE pg-s3cr3t-value-1234`)).toBe(
      `password=hunter2 AKIAIOSFODNN7EXAMPLE ${REDACTED}`,
    );
  });

  it("removes GitHub, AWS and npm keys by shape with shapes: 'keys'", () => {
    const redact = createRedactor([], { shapes: 'keys' });
    const github = `ghp_${'a1B2'.repeat(9)}`;
    expect(redact(`token ${github} and AKIAIOSFODNN7EXAMPLE, npm_${'x'.repeat(36)}`)).toBe(
      `token ${REDACTED} and ${REDACTED}, ${REDACTED}`,
    );
  });
});
