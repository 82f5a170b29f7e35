import { describe, expect, it } from 'vitest';
import { createModelClient, ollamaBaseUrl, resolveEndpoint } from '../../src/llm/providers.js';

describe('resolveEndpoint', () => {
  it('anthropic: defaults to the official API and gives the SDK a /v1 prefix', () => {
    expect(resolveEndpoint({ provider: 'anthropic', env: { ANTHROPIC_API_KEY: 'k' } })).toEqual({
      baseUrl: 'https://api.anthropic.com',
      apiBaseUrl: 'https://api.anthropic.com/v1',
      apiKey: 'k',
      keyVar: 'ANTHROPIC_API_KEY',
      secret: true,
    });
  });

  it.each(['http://gw.local:8080', 'http://gw.local:8080/', 'http://gw.local:8080/v1', 'http://gw.local:8080/v1/'])(
    'anthropic: normalises ANTHROPIC_BASE_URL=%s',
    (value) => {
      const endpoint = resolveEndpoint({
        provider: 'anthropic',
        env: { ANTHROPIC_BASE_URL: value, ANTHROPIC_API_KEY: 'k' },
      });
      expect(endpoint.baseUrl).toBe('http://gw.local:8080');
      expect(endpoint.apiBaseUrl).toBe('http://gw.local:8080/v1');
    },
  );

  it('anthropic: keeps a path prefix of a proxy', () => {
    const endpoint = resolveEndpoint({
      provider: 'anthropic',
      baseUrl: 'https://proxy.example/anthropic/',
      env: { ANTHROPIC_API_KEY: 'k' },
    });
    expect(endpoint.apiBaseUrl).toBe('https://proxy.example/anthropic/v1');
  });

  it('flags win over the environment; empty variables count as unset', () => {
    const endpoint = resolveEndpoint({
      provider: 'openai',
      baseUrl: 'http://flag.local/v1',
      apiKey: 'flag-key',
      env: { OPENAI_BASE_URL: 'http://env.local/v1', OPENAI_API_KEY: 'env-key' },
    });
    expect(endpoint).toMatchObject({ baseUrl: 'http://flag.local/v1', apiKey: 'flag-key' });
    expect(resolveEndpoint({ provider: 'openai', env: { OPENAI_BASE_URL: '', OPENAI_API_KEY: 'k' } }).baseUrl).toBe(
      'https://api.openai.com/v1',
    );
  });

  it('requires keys for anthropic and openai with a hint', () => {
    expect(() => resolveEndpoint({ provider: 'anthropic', env: { ANTHROPIC_API_KEY: '' } })).toThrow(
      expect.objectContaining({
        code: 'auth',
        message: 'ANTHROPIC_API_KEY is not set',
        hint: 'Set it in the environment (export ANTHROPIC_API_KEY=sk-ant-...); for a local gateway any non-empty value works.',
      }),
    );
    expect(() => resolveEndpoint({ provider: 'openai', env: {} })).toThrow(expect.objectContaining({ code: 'auth' }));
  });

  it('openai-compatible: needs a base URL, key optional', () => {
    expect(() => resolveEndpoint({ provider: 'openai-compatible', env: {} })).toThrow(
      expect.objectContaining({ code: 'config' }),
    );
    expect(
      resolveEndpoint({ provider: 'openai-compatible', env: { OPENAI_BASE_URL: 'http://vllm:8000/v1/' } }),
    ).toEqual({
      baseUrl: 'http://vllm:8000/v1',
      apiBaseUrl: 'http://vllm:8000/v1',
      apiKey: 'none',
      keyVar: 'OPENAI_API_KEY',
      secret: false,
    });
  });

  it('rejects a base URL that is not http(s)', () => {
    expect(() => resolveEndpoint({ provider: 'openai', baseUrl: 'not a url', env: { OPENAI_API_KEY: 'k' } })).toThrow(
      expect.objectContaining({ code: 'config' }),
    );
    expect(() => resolveEndpoint({ provider: 'openai', baseUrl: 'ftp://x', env: { OPENAI_API_KEY: 'k' } })).toThrow(
      expect.objectContaining({ code: 'config' }),
    );
  });

  it('rejects credentials in a base URL without repeating the password', () => {
    const attempt = (): unknown =>
      resolveEndpoint({
        provider: 'anthropic',
        baseUrl: 'http://qauser:SuperSecretPw9876@127.0.0.1:1',
        env: { ANTHROPIC_API_KEY: 'k' },
      });
    expect(attempt).toThrow(
      expect.objectContaining({
        code: 'config',
        message: 'The base URL for anthropic contains a user name or password (http://127.0.0.1:1 without them).',
      }),
    );
    expect(() =>
      resolveEndpoint({
        provider: 'openai',
        env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'https://u:p@gw.example/v1' },
      }),
    ).toThrow(expect.objectContaining({ code: 'config' }));
  });

  it('ollama: key defaults to "ollama", --base-url overrides OLLAMA_HOST', () => {
    expect(resolveEndpoint({ provider: 'ollama', env: {} })).toMatchObject({
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: 'ollama',
      keyVar: undefined,
    });
    expect(
      resolveEndpoint({ provider: 'ollama', baseUrl: 'http://box:1234/v1', env: { OLLAMA_HOST: 'other:1' } }).baseUrl,
    ).toBe('http://box:1234/v1');
  });
});

describe('ollamaBaseUrl', () => {
  it.each([
    [undefined, 'http://127.0.0.1:11434/v1'],
    ['', 'http://127.0.0.1:11434/v1'],
    ['127.0.0.1:5000', 'http://127.0.0.1:5000/v1'],
    ['gpu-box', 'http://gpu-box:11434/v1'],
    ['0.0.0.0:11434', 'http://0.0.0.0:11434/v1'],
    ['http://gpu-box:5000', 'http://gpu-box:5000/v1'],
    ['http://gpu-box:5000/', 'http://gpu-box:5000/v1'],
    ['https://ollama.example', 'https://ollama.example:443/v1'],
    ['http://gpu-box', 'http://gpu-box:80/v1'],
    ['http://gpu-box:5000/ollama/', 'http://gpu-box:5000/ollama/v1'],
    ['http://gpu-box:5000/v1', 'http://gpu-box:5000/v1'],
    ['[::1]:5000', 'http://[::1]:5000/v1'],
  ])('OLLAMA_HOST=%s -> %s', (host, expected) => {
    expect(ollamaBaseUrl(host)).toBe(expected);
  });
});

describe('createModelClient', () => {
  it('rejects an empty model and a replay without cassette', () => {
    expect(() => createModelClient({ provider: 'openai', model: ' ', env: { OPENAI_API_KEY: 'k' } })).toThrow(
      expect.objectContaining({ code: 'config' }),
    );
    expect(() => createModelClient({ provider: 'replay', model: 'm', env: {} })).toThrow(
      expect.objectContaining({ code: 'config' }),
    );
  });
});
