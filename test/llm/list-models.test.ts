/**
 * `listModels` (what `ratchet doctor` asks to check endpoint and key) against the loopback fakes:
 * the request each provider's API expects, and every kind of answer, with the key kept out.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listModels } from '../../src/llm/list-models.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../support/fake-openai-server.js';

const ANTHROPIC_KEY = 'sk-ant-api03-right-key-0123456789abcdef';
const OPENAI_KEY = 'sk-proj-right-key-0123456789abcdef';
const WRONG_KEY = 'sk-wrong-key-for-this-endpoint-0123456789';

let anthropic: FakeAnthropicServer;
let openai: FakeOpenAiServer;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  anthropic = await startFakeAnthropicServer({ apiKey: ANTHROPIC_KEY, models: ['claude-sonnet-4-5-20250929'] });
  openai = await startFakeOpenAiServer({ apiKey: OPENAI_KEY, models: ['gpt-4o', 'gpt-4o-mini'] });
});
afterAll(async () => {
  await anthropic.close();
  await openai.close();
  for (const close of closers) await close();
});

const base = { fetch, timeoutMs: 5_000 };

describe('listModels', () => {
  it('Anthropic: GET /v1/models with x-api-key and anthropic-version: 2023-06-01', async () => {
    const listing = await listModels({ ...base, provider: 'anthropic', baseUrl: anthropic.url, apiKey: ANTHROPIC_KEY });
    expect(listing).toEqual({
      kind: 'listed',
      url: `${anthropic.url}/v1/models`,
      status: 200,
      ids: ['claude-sonnet-4-5-20250929'],
      hasMore: false,
    });
    const request = anthropic.requests.at(-1);
    expect(request).toMatchObject({ method: 'GET', path: '/v1/models', search: '?limit=1000' });
    expect(request?.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(request?.headers['anthropic-version']).toBe('2023-06-01');
    expect(request?.headers.authorization).toBeUndefined();
  });

  it('OpenAI style (openai, openai-compatible, ollama): GET <base>/models with Bearer, or no credentials', async () => {
    for (const provider of ['openai', 'openai-compatible', 'ollama'] as const) {
      const listing = await listModels({ ...base, provider, baseUrl: openai.url, apiKey: OPENAI_KEY });
      expect(listing).toMatchObject({ kind: 'listed', url: `${openai.url}/models`, ids: ['gpt-4o', 'gpt-4o-mini'] });
      expect(openai.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/models', search: '' });
      expect(openai.requests.at(-1)?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    }
    const keyless = await startFakeOpenAiServer();
    closers.push(() => keyless.close());
    expect(await listModels({ ...base, provider: 'ollama', baseUrl: keyless.url, apiKey: undefined })).toMatchObject({
      kind: 'listed',
      status: 200,
    });
    expect(keyless.requests.at(-1)?.headers.authorization).toBeUndefined();
  });

  it("reports a rejected key with the server's error, the key itself left out (even masked)", async () => {
    const refusedByAnthropic = await listModels({
      ...base,
      provider: 'anthropic',
      baseUrl: anthropic.url,
      apiKey: WRONG_KEY,
    });
    expect(refusedByAnthropic).toEqual({
      kind: 'status',
      url: `${anthropic.url}/v1/models`,
      status: 401,
      errorType: 'authentication_error',
      message: 'invalid x-api-key',
    });
    const refusedByOpenAi = await listModels({ ...base, provider: 'openai', baseUrl: openai.url, apiKey: WRONG_KEY });
    expect(refusedByOpenAi).toMatchObject({ kind: 'status', status: 401, errorType: 'invalid_request_error' });
    // OpenAI quotes the key as sk-********6789; neither it nor its last characters come back.
    const message = refusedByOpenAi.kind === 'status' ? (refusedByOpenAi.message ?? '') : '';
    expect(message).toMatch(/^Incorrect API key provided: \[REDACTED\]\./);
    expect(JSON.stringify(refusedByOpenAi)).not.toContain(WRONG_KEY.slice(-4));
  });

  it('reports a missing route, a server error and an answer that is no model list by status', async () => {
    const absent = await startFakeAnthropicServer({ models: 'absent' });
    const failing = await startFakeOpenAiServer({ models: { status: 500 } });
    closers.push(
      () => absent.close(),
      () => failing.close(),
    );
    expect(
      await listModels({ ...base, provider: 'anthropic', baseUrl: absent.url, apiKey: ANTHROPIC_KEY }),
    ).toMatchObject({ kind: 'status', status: 404, errorType: 'not_found_error' });
    expect(
      await listModels({ ...base, provider: 'openai-compatible', baseUrl: failing.url, apiKey: undefined }),
    ).toMatchObject({
      kind: 'status',
      status: 500,
      errorType: 'server_error',
      message: 'The server had an error while processing your request.',
    });
    // A web page where the API should be (fetch is the injected dependency here).
    const page: typeof fetch = () =>
      Promise.resolve(new Response('<html>hello</html>', { status: 200, headers: { 'content-type': 'text/html' } }));
    expect(
      await listModels({
        ...base,
        fetch: page,
        provider: 'openai',
        baseUrl: 'http://example.invalid/v1',
        apiKey: OPENAI_KEY,
      }),
    ).toEqual({
      kind: 'not-a-list',
      url: 'http://example.invalid/v1/models',
      status: 200,
    });
  });

  it('reports an endpoint that refuses the connection or stays silent as unreachable', async () => {
    const refused = await listModels({
      ...base,
      provider: 'openai-compatible',
      baseUrl: `http://127.0.0.1:${await closedPort()}/v1`,
      apiKey: undefined,
    });
    expect(refused).toMatchObject({ kind: 'unreachable', reason: expect.stringContaining('ECONNREFUSED') as unknown });
    const silent = await silentServer();
    const timedOut = await listModels({
      ...base,
      timeoutMs: 300,
      provider: 'anthropic',
      baseUrl: silent,
      apiKey: ANTHROPIC_KEY,
    });
    expect(timedOut).toEqual({ kind: 'unreachable', url: `${silent}/v1/models`, reason: 'no answer within 0.3 s' });
  });
});

/** A port nobody listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A server that accepts connections and never answers. */
async function silentServer(): Promise<string> {
  const server = createServer(() => {});
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
