/**
 * `endpointChecks` (what `ratchet doctor` shows, and what refuses a run before it exists) against
 * the loopback fakes: when a model missing from the list fails and when it only warns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointChecks, type EndpointCheckOptions } from '../../src/llm/endpoint-checks.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../support/fake-openai-server.js';

const OPENAI_KEY = 'sk-proj-endpoint-checks-0123456789abcdef';
const ANTHROPIC_KEY = 'sk-ant-api03-endpoint-checks-0123456789';

let openai: FakeOpenAiServer;
let anthropic: FakeAnthropicServer;

beforeAll(async () => {
  openai = await startFakeOpenAiServer({ models: ['gpt-4o', 'llama3.2:latest'] });
  anthropic = await startFakeAnthropicServer({ apiKey: ANTHROPIC_KEY, models: ['claude-sonnet-4-5-20250929'] });
});
afterAll(async () => {
  await openai.close();
  await anthropic.close();
});

const modelCheck = async (options: Omit<EndpointCheckOptions, 'timeoutMs'>) =>
  (await endpointChecks({ ...options, timeoutMs: 5_000 })).filter((check) => check.name === 'model');

describe('endpointChecks: a model the endpoint does not list', () => {
  it('fails on Ollama, whose list is every model it can run, once per missing model', async () => {
    const checks = await modelCheck({
      provider: 'ollama',
      models: ['llama3.2', 'qwen2.5-coder'],
      baseUrl: openai.url,
      env: {},
      fetch,
    });
    expect(checks).toEqual([
      { name: 'model', status: 'ok', detail: 'llama3.2 is listed (as llama3.2:latest)' },
      {
        name: 'model',
        status: 'fail',
        detail: 'qwen2.5-coder is not among the 2 models the endpoint lists (gpt-4o, llama3.2:latest)',
        hint: 'ollama pull qwen2.5-coder, or pick a listed model with --model.',
      },
    ]);
  });

  it("fails on OpenAI's own API, warns at a gateway speaking its protocol", async () => {
    // OpenAI's API, reached through a fetch that delivers its requests to the fake.
    const official: typeof fetch = (input, init) =>
      fetch(
        String(input instanceof Request ? input.url : input).replace('https://api.openai.com/v1', openai.url),
        init,
      );
    const env = { OPENAI_API_KEY: OPENAI_KEY };
    const [own] = await modelCheck({
      provider: 'openai',
      models: ['gpt-5-typo'],
      baseUrl: undefined,
      env,
      fetch: official,
    });
    expect(own).toMatchObject({
      status: 'fail',
      hint: expect.stringContaining('Pick a listed model with --model') as unknown,
    });
    for (const provider of ['openai', 'openai-compatible'] as const) {
      const [gateway] = await modelCheck({ provider, models: ['gpt-5-typo'], baseUrl: openai.url, env, fetch });
      expect(gateway, provider).toMatchObject({ status: 'warn' });
    }
  });

  it("warns on Anthropic's API, whose list leaves out the aliases it takes", async () => {
    const [check] = await modelCheck({
      provider: 'anthropic',
      models: ['claude-3-5-haiku-latest'],
      baseUrl: anthropic.url,
      env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY },
      fetch,
    });
    expect(check).toMatchObject({ status: 'warn' });
  });
});
