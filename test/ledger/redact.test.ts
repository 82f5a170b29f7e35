import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTED, redactValue, secretsFromEnv } from '../../src/ledger/index.js';

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
