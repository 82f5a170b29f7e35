/**
 * What the provider fakes (`fake-anthropic-server.ts`, `fake-openai-server.ts`) share on top of
 * `fake-http-server.ts`: their options, the failure replies both speak (each in its own wire
 * format), a start that numbers the replies, and the pacing of a streamed answer.
 */
import type { ServerResponse } from 'node:http';
import {
  pause,
  startFakeHttpServer,
  writeSse,
  type CommonReply,
  type FakeServer,
  type RecordedRequest,
} from './fake-http-server.js';

export interface FakeProviderServerOptions {
  /** Port on 127.0.0.1; default 0 (a free one). */
  port?: number;
  /** When set, requests must carry exactly this key (how: see each fake). */
  apiKey?: string;
  /** Characters per streamed text or JSON fragment; default 8. */
  chunkSize?: number;
  /**
   * The models route (`GET /v1/models`, which checks the key like the message route): the ids it
   * lists (default: a few of the provider's own), `'absent'` for a server without the route (404
   * whatever the key, as many gateways answer), or `{ status }` to answer that error (in the
   * provider's error shape) once the key has passed.
   */
  models?: readonly string[] | 'absent' | { status: number };
}

/** An HTTP error in the provider's error shape; `errorType` and `message` default from the status. */
export interface FakeErrorReply {
  kind: 'error';
  status: number;
  errorType?: string;
  message?: string;
  /** Extra response headers, e.g. `{ 'retry-after': '2' }`. */
  headers?: Record<string, string>;
}

/** Failure replies every provider fake speaks besides its `error` reply. */
export type FakeFailureReply =
  /** HTTP 200 whose body is not valid JSON (for streams: an event with invalid JSON data). */
  | { kind: 'malformed' }
  /** Starts a stream (or a 200 SSE answer), then sends the provider's error event. */
  | { kind: 'stream-error'; errorType?: string; message?: string };

/** What `respond` learns besides the reply: the chunk size and the reply's number (1, 2, ...). */
export interface RespondContext {
  chunkSize: number;
  id: number;
}

/** The provider-specific parts of a fake (see `StartFakeHttpServerOptions`). */
export interface ProviderFake<Reply> {
  urlPath: string;
  defaultReply: () => Reply;
  /**
   * Answers requests the fake does not serve (wrong route, bad key, bad body) and the routes that
   * take no scripted reply (the model list); undefined = serve.
   */
  reject: (request: RecordedRequest, options: FakeProviderServerOptions) => Reply | CommonReply | undefined;
  respond: (reply: Reply, request: RecordedRequest, res: ServerResponse, context: RespondContext) => Promise<void>;
}

/** Starts a provider fake on 127.0.0.1 that numbers its replies. */
export async function startProviderFake<Reply extends { kind: string }>(
  options: FakeProviderServerOptions,
  fake: ProviderFake<Reply>,
): Promise<FakeServer<Reply | CommonReply>> {
  const chunkSize = options.chunkSize ?? 8;
  let counter = 0;
  return startFakeHttpServer<Reply>({
    port: options.port,
    urlPath: fake.urlPath,
    defaultReply: fake.defaultReply,
    reject: (request) => fake.reject(request, options),
    respond: async (reply, request, res) => {
      counter += 1;
      await fake.respond(reply, request, res, { chunkSize, id: counter });
    },
  });
}

/** Writes one JSON server-sent event (named unless `event` is undefined), then waits `delayMs`. */
export function sseSender(
  res: ServerResponse,
  delayMs: number,
): (event: string | undefined, data: object) => Promise<void> {
  return async (event, data) => {
    writeSse(res, event, JSON.stringify(data));
    if (delayMs > 0) await pause(delayMs);
  };
}
