/**
 * The loopback API proxy between a sandboxed Claude Code CLI and the real Messages API.
 *
 * The CLI runs with no network of its own (a network namespace with only loopback) and with a
 * placeholder credential. It reaches the API through this proxy, which runs in Ratchet's own
 * process, outside the sandbox, and listens on a Unix socket in a directory bound read-only into
 * the sandbox (the CLI's `ANTHROPIC_UNIX_SOCKET`). The proxy:
 * - accepts only requests that present the placeholder (`x-api-key` or `Authorization: Bearer`),
 *   compared in constant time, and only the Messages API (`POST /v1/messages`,
 *   `POST /v1/messages/count_tokens`, any query): anything else is answered 401 or 404 in the
 *   API's error shape;
 * - forwards them to the real base URL with the real credential in place of the placeholder
 *   (the real key never enters the sandbox);
 * - passes the answer back as it comes: status, headers (`retry-after` included) and body piped
 *   chunk by chunk, so a stream is not buffered and 429, 500 and 529 reach the CLI unchanged;
 * - drops the CLI's connection when the upstream cannot be reached, so the CLI sees the
 *   connection failure it would have seen itself.
 */
import { timingSafeEqual } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { RatchetError } from '../../core/errors.js';

export interface ClaudeApiProxyOptions {
  /** Where to listen: a Unix socket path (its directory must exist and be private). */
  socketPath: string;
  /** The real API's base URL, without `/v1` (as `ANTHROPIC_BASE_URL`); may carry a path prefix. */
  upstream: string;
  /** How to authenticate upstream: `x-api-key`, or `Authorization: Bearer`. */
  credential: { header: 'x-api-key' | 'bearer'; value: string };
  /** The placeholder the CLI presents; nothing else is accepted. */
  token: string;
}

export interface ClaudeApiProxy {
  /** Stops listening and drops open connections (the CLI's and the upstream ones). */
  close(): Promise<void>;
}

/** Paths of the Messages API, relative to the base URL. */
const MESSAGES_PATHS = new Set(['/v1/messages', '/v1/messages/count_tokens']);

/** Never forwarded: they describe one hop, or carry the placeholder. */
const DROPPED_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'x-api-key',
  'authorization',
]);
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'trailer', 'upgrade']);

/** The upstream base URL, checked: http or https, no credentials, no query. */
export function upstreamUrl(base: string): URL {
  let url: URL;
  try {
    url = new URL(base.trim());
  } catch {
    throw new RatchetError('config', `The Claude Code API endpoint '${base}' is not a URL.`, {
      hint: 'Set --base-url (or ANTHROPIC_BASE_URL) to the API base URL, without /v1, e.g. https://api.anthropic.com.',
    });
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') {
    throw new RatchetError(
      'config',
      `The Claude Code API endpoint '${base}' must be an http(s) URL without credentials.`,
      {
        hint: 'Set --base-url (or ANTHROPIC_BASE_URL) to the API base URL, without /v1, e.g. https://api.anthropic.com.',
      },
    );
  }
  url.pathname = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  url.search = '';
  url.hash = '';
  return url;
}

function sameSecret(given: string, expected: string): boolean {
  const [a, b] = [Buffer.from(given), Buffer.from(expected)];
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What the request presents as its credential: `x-api-key` (API key mode), or the Bearer token (OAuth mode). */
function presented(headers: IncomingHttpHeaders): string[] {
  const key = headers['x-api-key'];
  const authorization = headers.authorization;
  return [
    ...(typeof key === 'string' ? [key] : []),
    ...(authorization?.startsWith('Bearer ') ? [authorization.slice('Bearer '.length)] : []),
  ];
}

function apiError(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

/** Starts the proxy on `options.socketPath`. */
export async function startClaudeApiProxy(options: ClaudeApiProxyOptions): Promise<ClaudeApiProxy> {
  const upstream = upstreamUrl(options.upstream);
  const send = upstream.protocol === 'https:' ? httpsRequest : httpRequest;
  /** The base URL's path (a gateway's prefix), without a trailing slash: '' for the API itself. */
  const prefix = upstream.pathname.replace(/\/+$/, '');
  const sockets = new Set<Socket>();
  const outgoing = new Set<ReturnType<typeof httpRequest>>();

  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!presented(req.headers).some((given) => sameSecret(given, options.token))) {
      req.resume();
      apiError(res, 401, 'authentication_error', 'Ratchet API proxy: invalid credentials');
      return;
    }
    if (req.method !== 'POST' || !MESSAGES_PATHS.has(url.pathname)) {
      req.resume();
      apiError(
        res,
        404,
        'not_found_error',
        `Ratchet API proxy: only the Messages API is forwarded, not ${req.method ?? '?'} ${url.pathname}`,
      );
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !DROPPED_REQUEST_HEADERS.has(name)) headers[name] = value;
    }
    if (options.credential.header === 'x-api-key') headers['x-api-key'] = options.credential.value;
    else headers.authorization = `Bearer ${options.credential.value}`;
    const target = new URL(`${upstream.origin}${prefix}${url.pathname}${url.search}`);
    const up = send(target, { method: 'POST', headers }, (answer) => {
      const answerHeaders: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !DROPPED_RESPONSE_HEADERS.has(name)) answerHeaders[name] = value;
      }
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answerHeaders);
      res.flushHeaders();
      answer.on('data', (chunk: Buffer) => {
        if (!res.write(chunk)) {
          answer.pause();
          res.once('drain', () => answer.resume());
        }
      });
      answer.on('end', () => res.end());
      answer.on('error', () => res.destroy());
    });
    outgoing.add(up);
    up.on('close', () => outgoing.delete(up));
    // No answer from upstream: the CLI sees its connection fail, as it would have without the proxy.
    up.on('error', () => {
      if (res.headersSent) res.destroy();
      else req.socket.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  };

  const server = createServer(forward);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const up of outgoing) up.destroy();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
