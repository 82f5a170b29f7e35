/**
 * Builds a `ModelClient` from `--provider` / `--model` / `--base-url` and the environment.
 * The base-URL and key rules of every provider live here, in `resolveEndpoint`, and nowhere else:
 *
 * | provider | base URL (first set wins) | key |
 * | --- | --- | --- |
 * | anthropic | `--base-url`, `ANTHROPIC_BASE_URL`, `https://api.anthropic.com` — without `/v1` as the official clients use it (a trailing `/v1` or `/` is tolerated); the SDK gets `<base>/v1` | `ANTHROPIC_API_KEY` (required) |
 * | openai | `--base-url`, `OPENAI_BASE_URL`, `https://api.openai.com/v1` | `OPENAI_API_KEY` (required) |
 * | openai-compatible | `--base-url`, `OPENAI_BASE_URL` (required) | `OPENAI_API_KEY`, else `none` |
 * | ollama | `--base-url`, else `OLLAMA_HOST` (`host:port`, `http://host:port`, default `127.0.0.1:11434`) + `/v1` | `ollama` |
 * | replay | — (reads `cassettePath`) | — |
 */
import { extractReasoningMiddleware, wrapLanguageModel } from 'ai';
import { RatchetError } from '../core/errors.js';
import type { ModelClient } from '../core/model.js';
import { createAiSdkModelClient, type AiSdkLanguageModel } from './ai-sdk-client.js';
import { createReplayModelClient } from './replay.js';
import type { HttpProviderName, ModelProviderName } from './provider-kinds.js';

type Environment = Record<string, string | undefined>;

export interface CreateModelClientOptions {
  provider: ModelProviderName;
  /** Sent to the provider exactly as given. */
  model: string;
  /** `--base-url`; overrides the environment. */
  baseUrl?: string;
  /** Overrides the key from the environment. */
  apiKey?: string;
  env: Environment;
  /** Custom fetch (tests, proxies). */
  fetch?: typeof fetch;
  /** Required for `replay`. */
  cassettePath?: string;
  /** Stream responses (default true). */
  stream?: boolean;
  /** Milliseconds clock for latency and `retry-after` dates. */
  now?: () => number;
}

export interface ResolveEndpointOptions {
  provider: HttpProviderName;
  baseUrl?: string;
  apiKey?: string;
  env: Environment;
}

export interface ResolvedEndpoint {
  /**
   * The base URL in the provider's own convention: Anthropic without `/v1` (what
   * `ANTHROPIC_BASE_URL` holds, e.g. for the Claude CLI), OpenAI-style with `/v1`.
   */
  baseUrl: string;
  /** What the AI SDK gets: requests go to `<apiBaseUrl>/messages` or `<apiBaseUrl>/chat/completions`. */
  apiBaseUrl: string;
  apiKey: string;
  /** The environment variable the key is read from; undefined when none applies (ollama). */
  keyVar: string | undefined;
  /** True when `apiKey` is a real credential (not a placeholder), so it must be kept out of logs. */
  secret: boolean;
}

const ANTHROPIC_DEFAULT = 'https://api.anthropic.com';
const OPENAI_DEFAULT = 'https://api.openai.com/v1';
const OLLAMA_DEFAULT_PORT = '11434';

/** Resolves base URL and key for an HTTP provider; throws `auth` / `config` RatchetErrors. */
export function resolveEndpoint(options: ResolveEndpointOptions): ResolvedEndpoint {
  const { env } = options;
  const flagUrl = nonEmpty(options.baseUrl);
  const flagKey = nonEmpty(options.apiKey);
  switch (options.provider) {
    case 'anthropic': {
      const source = flagUrl ?? nonEmpty(env.ANTHROPIC_BASE_URL) ?? ANTHROPIC_DEFAULT;
      const baseUrl = stripSuffix(checkUrl(source, 'anthropic'), '/v1');
      const apiKey = requireKey(flagKey ?? nonEmpty(env.ANTHROPIC_API_KEY), 'ANTHROPIC_API_KEY', 'sk-ant-...');
      return { baseUrl, apiBaseUrl: `${baseUrl}/v1`, apiKey, keyVar: 'ANTHROPIC_API_KEY', secret: true };
    }
    case 'openai': {
      const baseUrl = checkUrl(flagUrl ?? nonEmpty(env.OPENAI_BASE_URL) ?? OPENAI_DEFAULT, 'openai');
      const apiKey = requireKey(flagKey ?? nonEmpty(env.OPENAI_API_KEY), 'OPENAI_API_KEY', 'sk-...');
      return { baseUrl, apiBaseUrl: baseUrl, apiKey, keyVar: 'OPENAI_API_KEY', secret: true };
    }
    case 'openai-compatible': {
      const source = flagUrl ?? nonEmpty(env.OPENAI_BASE_URL);
      if (source === undefined) {
        throw new RatchetError('config', 'The openai-compatible provider needs a base URL', {
          hint: 'Pass --base-url http://HOST:PORT/v1 or set OPENAI_BASE_URL (e.g. http://localhost:8000/v1 for vLLM).',
        });
      }
      const baseUrl = checkUrl(source, 'openai-compatible');
      const key = flagKey ?? nonEmpty(env.OPENAI_API_KEY);
      return {
        baseUrl,
        apiBaseUrl: baseUrl,
        apiKey: key ?? 'none',
        keyVar: 'OPENAI_API_KEY',
        secret: key !== undefined,
      };
    }
    case 'ollama': {
      const baseUrl = flagUrl === undefined ? ollamaBaseUrl(env.OLLAMA_HOST) : checkUrl(flagUrl, 'ollama');
      return {
        baseUrl,
        apiBaseUrl: baseUrl,
        apiKey: flagKey ?? 'ollama',
        keyVar: undefined,
        secret: flagKey !== undefined,
      };
    }
  }
}

/**
 * Where an HTTP provider will be reached, as `resolveEndpoint` picks it but without needing a
 * key (for `ratchet doctor`); null when nothing names an endpoint (openai-compatible without one).
 */
export function endpointOf(provider: HttpProviderName, baseUrl: string | undefined, env: Environment): string | null {
  const flagUrl = nonEmpty(baseUrl);
  switch (provider) {
    case 'anthropic':
      return stripSuffix(flagUrl ?? nonEmpty(env.ANTHROPIC_BASE_URL) ?? ANTHROPIC_DEFAULT, '/v1');
    case 'openai':
      return flagUrl ?? nonEmpty(env.OPENAI_BASE_URL) ?? OPENAI_DEFAULT;
    case 'openai-compatible':
      return flagUrl ?? nonEmpty(env.OPENAI_BASE_URL) ?? null;
    case 'ollama':
      return flagUrl ?? ollamaBaseUrl(env.OLLAMA_HOST);
  }
}

/**
 * `OLLAMA_HOST` as Ollama itself reads it: optional scheme (default http), host (default
 * 127.0.0.1), port (default 11434; 80/443 when the scheme is given without a port), optional
 * path; returned as the OpenAI-compatible base `.../v1`.
 */
export function ollamaBaseUrl(host: string | undefined): string {
  let rest = (host ?? '').trim();
  let scheme = 'http';
  let defaultPort = OLLAMA_DEFAULT_PORT;
  const separator = rest.indexOf('://');
  if (separator >= 0) {
    scheme = rest.slice(0, separator).toLowerCase();
    rest = rest.slice(separator + 3);
    if (scheme === 'http') defaultPort = '80';
    if (scheme === 'https') defaultPort = '443';
  }
  const slash = rest.indexOf('/');
  const hostPort = slash >= 0 ? rest.slice(0, slash) : rest;
  const path = stripSuffix(slash >= 0 ? rest.slice(slash) : '', '/v1');
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(hostPort);
  const plain = /^([^:]*)(?::(\d+))?$/.exec(hostPort);
  let hostname = '127.0.0.1';
  let port = defaultPort;
  if (bracketed !== null) {
    hostname = `[${bracketed[1] ?? ''}]`;
    port = bracketed[2] ?? defaultPort;
  } else if (plain !== null) {
    hostname = nonEmpty(plain[1]) ?? hostname;
    port = plain[2] ?? defaultPort;
  } else if (hostPort !== '') {
    hostname = `[${hostPort}]`; // a bare IPv6 address
  }
  return checkUrl(`${scheme}://${hostname}:${port}${path}/v1`, 'ollama');
}

/** Creates the model client for a provider; see the table at the top of this file. */
export function createModelClient(options: CreateModelClientOptions): ModelClient {
  if (options.model.trim() === '') {
    throw new RatchetError('config', 'No model configured', {
      hint: 'Pass --model <id> or set `model` in .ratchet/config.toml.',
    });
  }
  if (options.provider === 'replay') {
    if (options.cassettePath === undefined || options.cassettePath === '') {
      throw new RatchetError('config', 'The replay provider needs a cassette file', {
        hint: 'Pass the path of an NDJSON cassette (see src/llm/cassette.ts for the format).',
      });
    }
    return createReplayModelClient({ cassettePath: options.cassettePath, modelId: options.model, now: options.now });
  }
  const endpoint = resolveEndpoint({ ...options, provider: options.provider });
  const provider = options.provider;
  return createAiSdkModelClient({
    provider,
    modelId: options.model,
    // Made on the first call: a run loads the SDK of its provider only, not all three.
    languageModel: () => createLanguageModel(provider, options.model, endpoint, options.fetch),
    stream: options.stream,
    now: options.now,
    keyVar: endpoint.keyVar,
    // Only openai-compatible names a key variable it may go without (ollama names none).
    keyMissing: endpoint.keyVar !== undefined && !endpoint.secret,
    secrets: endpoint.secret ? [endpoint.apiKey] : [],
    textToolCalls: options.provider === 'openai-compatible' || options.provider === 'ollama',
  });
}

async function createLanguageModel(
  provider: HttpProviderName,
  model: string,
  endpoint: ResolvedEndpoint,
  fetch: typeof globalThis.fetch | undefined,
): Promise<AiSdkLanguageModel> {
  switch (provider) {
    case 'anthropic': {
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      // baseURL is always explicit: @ai-sdk/anthropic would otherwise read ANTHROPIC_BASE_URL itself
      // and expect a `/v1` the official convention leaves out.
      return createAnthropic({ baseURL: endpoint.apiBaseUrl, apiKey: endpoint.apiKey, fetch }).languageModel(model);
    }
    case 'openai': {
      const { createOpenAI } = await import('@ai-sdk/openai');
      // `.chat()`: the default model of @ai-sdk/openai 4 calls the Responses API.
      return createOpenAI({ baseURL: endpoint.apiBaseUrl, apiKey: endpoint.apiKey, fetch }).chat(model);
    }
    case 'openai-compatible':
    case 'ollama': {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      // Reasoning models served without a reasoning parser (DeepSeek-R1 and Qwen3 on Ollama,
      // llama.cpp or vLLM) write their thinking inline as <think>...</think>. It is not the
      // answer: a draft edit block or JSON plan in it must never be parsed as the real one.
      return wrapLanguageModel({
        model: createOpenAICompatible({
          name: provider,
          baseURL: endpoint.apiBaseUrl,
          apiKey: endpoint.apiKey,
          fetch,
          includeUsage: true,
        }).chatModel(model),
        middleware: extractReasoningMiddleware({ tagName: 'think' }),
      });
    }
  }
}

function requireKey(key: string | undefined, keyVar: string, example: string): string {
  if (key !== undefined) return key;
  throw new RatchetError('auth', `${keyVar} is not set`, {
    hint: `Set it in the environment (export ${keyVar}=${example}); for a local gateway any non-empty value works.`,
  });
}

function checkUrl(value: string, provider: string): string {
  const trimmed = stripTrailingSlashes(value.trim());
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch (error) {
    throw new RatchetError('config', `Invalid base URL for ${provider}: "${value}"`, {
      cause: error,
      hint: 'Use an absolute http(s) URL, e.g. http://127.0.0.1:8080/v1.',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RatchetError('config', `Invalid base URL for ${provider}: "${value}" (not http or https)`);
  }
  if (url.username !== '' || url.password !== '') {
    // fetch refuses such URLs, and a password in a URL would be repeated in logs and settings.
    url.username = '';
    url.password = '';
    throw new RatchetError(
      'config',
      `The base URL for ${provider} contains a user name or password (${stripTrailingSlashes(url.href)} without them).`,
      {
        hint: "Take the credentials out of the URL: the key goes in the provider's API key variable (ANTHROPIC_API_KEY, OPENAI_API_KEY), which is sent as a header and never stored.",
      },
    );
  }
  return trimmed;
}

function stripSuffix(value: string, suffix: string): string {
  const trimmed = stripTrailingSlashes(value);
  return trimmed.endsWith(suffix) ? stripTrailingSlashes(trimmed.slice(0, -suffix.length)) : trimmed;
}

function stripTrailingSlashes(value: string): string {
  return value.replace(/\/+$/, '');
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}
