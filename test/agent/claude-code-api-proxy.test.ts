/**
 * The API proxy between a sandboxed Claude Code CLI and the real Messages API (real HTTP over a
 * real Unix socket, the fake Anthropic server or a plain loopback server upstream): it forwards
 * only the Messages API, only for the placeholder of its call, with the real credential in its
 * place, and passes answers through as they come (streams unbuffered, errors unchanged).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startClaudeApiProxy, type ClaudeApiProxyOptions } from '../../src/agent/claude-code/api-proxy.js';
import { startFakeAnthropicServer } from '../support/fake-anthropic-server.js';

const TOKEN = 'ratchet-proxy-placeholder-of-this-call';
const REAL_KEY = 'sk-ant-api03-the-real-key';
const BODY = JSON.stringify({ model: 'claude-test', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

type Finished = (hook: () => Promise<void>) => void;

async function proxy(
  onFinished: Finished,
  options: Omit<ClaudeApiProxyOptions, 'socketPath' | 'token'>,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ratchet-proxy-test-'));
  const socketPath = join(dir, 'api.sock');
  const running = await startClaudeApiProxy({ ...options, socketPath, token: TOKEN });
  onFinished(async () => {
    await running.close();
    await rm(dir, { recursive: true, force: true });
  });
  return socketPath;
}

/** One request through the proxy's socket, as the CLI sends it. */
function send(
  socketPath: string,
  options: {
    path?: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    onChunk?: (text: string) => void;
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = options.body ?? BODY;
    const req = request(
      {
        socketPath,
        path: options.path ?? '/v1/messages?beta=true',
        method: options.method ?? 'POST',
        headers: {
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
          'x-api-key': TOKEN,
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          options.onChunk?.(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe.concurrent('the Claude Code API proxy', () => {
  it('forwards a Messages request with the real key in place of the placeholder, streamed or not', async ({
    onTestFinished,
  }) => {
    const server = await startFakeAnthropicServer({ apiKey: REAL_KEY });
    onTestFinished(() => server.close());
    const socket = await proxy(onTestFinished, {
      upstream: server.url,
      credential: { header: 'x-api-key', value: REAL_KEY },
    });

    const plain = await send(socket);
    const streamed = await send(socket, { body: JSON.stringify({ ...JSON.parse(BODY), stream: true }) });

    expect(plain.status).toBe(200);
    expect(JSON.parse(plain.body)).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'ok' }] });
    expect(streamed.headers['content-type']).toMatch(/text\/event-stream/);
    expect(streamed.body).toContain('event: message_stop');
    expect(server.requests.map((entry) => `${entry.method} ${entry.path}${entry.search}`)).toEqual([
      'POST /v1/messages?beta=true',
      'POST /v1/messages?beta=true',
    ]);
    for (const entry of server.requests) {
      expect(entry.headers['x-api-key']).toBe(REAL_KEY);
      expect(entry.headers['anthropic-version']).toBe('2023-06-01');
      expect(JSON.stringify(entry.headers)).not.toContain(TOKEN);
    }
  });

  it('sends a bearer credential as Authorization, under the base URL path of a gateway', async ({ onTestFinished }) => {
    const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
    const upstream = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      req.resume();
      req.on('end', () => res.end('{}'));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise((resolve) => upstream.close(() => resolve())));
    const { port } = upstream.address() as AddressInfo;
    const socket = await proxy(onTestFinished, {
      upstream: `http://127.0.0.1:${port}/gateway/anthropic/v1/`,
      credential: { header: 'bearer', value: 'sk-ant-oat01-the-real-token' },
    });

    const answer = await send(socket, {
      path: '/v1/messages/count_tokens?beta=true',
      headers: { 'x-api-key': '', authorization: `Bearer ${TOKEN}` },
    });

    expect(answer.status).toBe(200);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.url).toBe('/gateway/anthropic/v1/messages/count_tokens?beta=true');
    expect(seen[0]?.headers.authorization).toBe('Bearer sk-ant-oat01-the-real-token');
    expect(seen[0]?.headers['x-api-key']).toBeUndefined();
  });

  it('answers 401 to any other credential and 404 to anything but the Messages API, forwarding nothing', async ({
    onTestFinished,
  }) => {
    const server = await startFakeAnthropicServer({ apiKey: REAL_KEY });
    onTestFinished(() => server.close());
    const socket = await proxy(onTestFinished, {
      upstream: server.url,
      credential: { header: 'x-api-key', value: REAL_KEY },
    });

    const refused = [
      await send(socket, { headers: { 'x-api-key': REAL_KEY } }),
      await send(socket, { headers: { 'x-api-key': `${TOKEN}x` } }),
      await send(socket, { headers: { 'x-api-key': '' } }),
    ];
    const elsewhere = [
      await send(socket, { path: '/v1/models', method: 'GET', body: '' }),
      await send(socket, { path: '/v1/files' }),
      await send(socket, { path: '/api/oauth/token' }),
      await send(socket, { path: '/v1/messages/../files' }),
    ];

    for (const answer of refused) {
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body)).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    }
    for (const answer of elsewhere) {
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.body)).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    }
    expect(server.requests).toEqual([]);
  });

  it('passes 429 (with retry-after), 500 and 529 through unchanged', async ({ onTestFinished }) => {
    const server = await startFakeAnthropicServer({ apiKey: REAL_KEY });
    onTestFinished(() => server.close());
    const socket = await proxy(onTestFinished, {
      upstream: server.url,
      credential: { header: 'x-api-key', value: REAL_KEY },
    });
    server.enqueue(
      { kind: 'error', status: 429, headers: { 'retry-after': '7', 'retry-after-ms': '7000' } },
      { kind: 'error', status: 500 },
      { kind: 'error', status: 529, message: 'Overloaded right now' },
    );

    const [rateLimited, failed, overloaded] = [await send(socket), await send(socket), await send(socket)];

    expect(rateLimited.status).toBe(429);
    expect(rateLimited.headers['retry-after']).toBe('7');
    expect(rateLimited.headers['retry-after-ms']).toBe('7000');
    expect(rateLimited.headers['request-id']).toBe('req_fake_1');
    expect(JSON.parse(rateLimited.body)).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' },
      request_id: 'req_fake_1',
    });
    expect(failed.status).toBe(500);
    expect(JSON.parse(failed.body)).toMatchObject({ error: { type: 'api_error' } });
    expect(overloaded.status).toBe(529);
    expect(JSON.parse(overloaded.body)).toMatchObject({
      error: { type: 'overloaded_error', message: 'Overloaded right now' },
    });
  });

  it('streams without buffering: the first event arrives before the upstream has sent the rest', async ({
    onTestFinished,
  }) => {
    let release: () => void = () => undefined;
    const rest = new Promise<void>((resolve) => (release = resolve));
    const upstream = createServer((req, res: ServerResponse) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message_start\ndata: {"type":"message_start"}\n\n');
      // The rest only once the client has seen the first event: a buffering proxy never gets it.
      void rest.then(() => res.end('event: message_stop\ndata: {"type":"message_stop"}\n\n'));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise((resolve) => upstream.close(() => resolve())));
    const { port } = upstream.address() as AddressInfo;
    const socket = await proxy(onTestFinished, {
      upstream: `http://127.0.0.1:${port}`,
      credential: { header: 'x-api-key', value: REAL_KEY },
    });
    const chunks: string[] = [];

    const answer = await send(socket, {
      onChunk: (text) => {
        chunks.push(text);
        if (text.includes('message_start')) release();
      },
    });

    expect(chunks[0]).toContain('message_start');
    expect(chunks[0]).not.toContain('message_stop');
    expect(answer.body).toContain('message_stop');
  }, 10_000);

  it('drops the connection when the upstream cannot be reached, as the CLI would have seen it', async ({
    onTestFinished,
  }) => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const socket = await proxy(onTestFinished, {
      upstream: `http://127.0.0.1:${port}`,
      credential: { header: 'x-api-key', value: REAL_KEY },
    });

    await expect(send(socket)).rejects.toThrow(/socket hang up|ECONNRESET/);
  });

  it('refuses an endpoint that is no http(s) URL, or carries credentials', async () => {
    for (const upstream of ['not a url', 'file:///etc/passwd', 'https://user:secret@api.example.com']) {
      await expect(
        startClaudeApiProxy({
          socketPath: join(tmpdir(), 'never.sock'),
          upstream,
          credential: { header: 'x-api-key', value: REAL_KEY },
          token: TOKEN,
        }),
      ).rejects.toMatchObject({ code: 'config' });
    }
  });
});
