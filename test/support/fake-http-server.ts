/**
 * The loopback plumbing shared by the fake provider servers (`fake-anthropic-server.ts`,
 * `fake-openai-server.ts`): an HTTP server on 127.0.0.1 with an ephemeral port that records every
 * request (parsed JSON body), answers from a FIFO of scripted replies, then from a fallback.
 *
 * Only the wire format differs between providers, so each fake supplies a `respond` function that
 * writes one reply for one request; everything else (queueing, recording, shutdown) lives here.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request the fake received, in arrival order. */
export interface RecordedRequest {
  method: string;
  /** The path without the query string, e.g. `/v1/messages` (also for `/v1/messages?beta=true`). */
  path: string;
  /** The query string including `?`, or `''`. */
  search: string;
  /** Lower-cased header names, as Node reports them. */
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; `undefined` for an empty body, the raw text when it is not JSON. */
  body: unknown;
}

/** Replies shared by every fake: connection-level failures and arbitrary raw answers. */
export type CommonReply =
  /** Destroys the socket without answering: clients see ECONNRESET / "socket hang up". */
  | { kind: 'disconnect' }
  /**
   * Never answers: the request stays open until the client gives up (aborts) or the server
   * closes. A model call that is still running when the user stops or quits.
   */
  | { kind: 'hang' }
  /** Writes exactly this response (for shapes the typed replies do not cover). */
  | { kind: 'raw'; status: number; headers?: Record<string, string>; body: string }
  /**
   * Starts this response (status, headers, `body` as the first part of the body), then destroys
   * the socket: a connection reset after the answer began (clients see `terminated`,
   * `UND_ERR_SOCKET`). Give a `content-length` larger than `body` for a non-streamed answer.
   */
  | { kind: 'reset-mid-body'; status: number; headers?: Record<string, string>; body: string };

/** Handle to a running fake server. */
export interface FakeServer<Reply> {
  /** Base URL in the convention of the provider (see each fake). */
  readonly url: string;
  /** `http://127.0.0.1:PORT`, without any path. */
  readonly origin: string;
  /** Every request received so far, oldest first. */
  readonly requests: RecordedRequest[];
  /** Queues replies; each request consumes the oldest queued reply. */
  enqueue(...replies: Reply[]): void;
  /** Answers requests that find the queue empty (default: a plain text "ok"). */
  setFallback(fallback: (request: RecordedRequest) => Reply): void;
  /** Number of replies still queued. */
  pending(): number;
  /** Forgets recorded requests and queued replies and restores the default fallback. */
  reset(): void;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

export interface StartFakeHttpServerOptions<Reply> {
  /** Port to bind on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** Path prefix appended to the origin to form `url` (e.g. `/v1`). */
  urlPath: string;
  defaultReply: (request: RecordedRequest) => Reply | CommonReply;
  /** Writes a provider-specific reply; returns when the response is complete. */
  respond: (reply: Reply, request: RecordedRequest, res: ServerResponse) => Promise<void>;
  /** Answers requests the fake does not serve (wrong method/path, bad auth); undefined = serve. */
  reject?: (request: RecordedRequest) => Reply | CommonReply | undefined;
}

/** Starts a recording loopback server that answers with scripted replies. */
export async function startFakeHttpServer<Reply extends { kind: string }>(
  options: StartFakeHttpServerOptions<Reply>,
): Promise<FakeServer<Reply | CommonReply>> {
  const requests: RecordedRequest[] = [];
  const queue: Array<Reply | CommonReply> = [];
  let fallback: (request: RecordedRequest) => Reply | CommonReply = options.defaultReply;
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`fake server failure: ${String(error)}`);
      } else {
        res.destroy();
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      search: url.search,
      headers: req.headers,
      body: parseJson(text),
    };
    requests.push(request);
    const reply = options.reject?.(request) ?? queue.shift() ?? fallback(request);
    if (isCommonReply(reply)) {
      if (reply.kind === 'disconnect') {
        req.socket.destroy();
        return;
      }
      if (reply.kind === 'hang') return;
      if (reply.kind === 'reset-mid-body') {
        res.writeHead(reply.status, reply.headers ?? { 'content-type': 'application/json' });
        res.write(reply.body);
        // Let the head and the first part reach the client before the connection goes.
        await pause(30);
        req.socket.destroy();
        return;
      }
      res.writeHead(reply.status, reply.headers ?? { 'content-type': 'application/json' });
      res.end(reply.body);
      return;
    }
    await options.respond(reply, request, res);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    url: `${origin}${options.urlPath}`,
    origin,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    setFallback: (next) => void (fallback = next),
    pending: () => queue.length,
    reset: () => {
      requests.length = 0;
      queue.length = 0;
      fallback = options.defaultReply;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const socket of sockets) socket.destroy();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Writes one server-sent event (`event:` line only when a name is given). */
export function writeSse(res: ServerResponse, event: string | undefined, data: string): void {
  res.write(`${event === undefined ? '' : `event: ${event}\n`}data: ${data}\n\n`);
}

/** Splits text into chunks of `size` characters (at least one chunk, possibly empty). */
export function chunkText(text: string, size: number): string[] {
  if (text.length === 0) return [''];
  const chunks: string[] = [];
  for (let index = 0; index < text.length; index += size) chunks.push(text.slice(index, index + size));
  return chunks;
}

/** Resolves after `ms` (0 resolves on the next macrotask, which lets writes flush separately). */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A rough, deterministic token estimate (4 characters per token). */
export function estimateTokens(value: unknown): number {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return Math.max(1, Math.ceil(text.length / 4));
}

function isCommonReply(reply: { kind: string }): reply is CommonReply {
  return (
    reply.kind === 'disconnect' || reply.kind === 'hang' || reply.kind === 'raw' || reply.kind === 'reset-mid-body'
  );
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
