/**
 * The endpoint checks of the HTTP providers: one list-models request (no tokens spent) tells
 * whether the endpoint answers, whether it takes the key, and whether it names the configured
 * models. `ratchet doctor` shows them; a run refuses to start on a failing one (see `checkModels`
 * in `agent/models/`), so the two never disagree. The key is sent as the model client would send
 * it and never reported.
 */
import { isRatchetError, toRatchetError } from '../core/errors.js';
import { listModels, type ModelListing } from './list-models.js';
import { endpointOf, resolveEndpoint } from './providers.js';

/** One check: a line of `ratchet doctor` (and one entry of its `--json` `checks`). */
export interface EndpointCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  hint?: string;
}

export interface EndpointCheckOptions {
  provider: 'anthropic' | 'openai' | 'openai-compatible' | 'ollama';
  /** The models the run would call (the configured one and the stages' own): each gets a `model` check. */
  models: readonly string[];
  /** `--base-url` or the configured one; the environment fills in the rest. */
  baseUrl: string | undefined;
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  /** How long the endpoint has to answer. */
  timeoutMs: number;
}

const BASE_URL_HINT =
  "Is the server running and reachable? Check --base-url and the provider's *_BASE_URL / OLLAMA_HOST.";

/** The `endpoint` check, then `key` and `model` when the answer tells about them. */
export async function endpointChecks(options: EndpointCheckOptions): Promise<EndpointCheck[]> {
  const { provider, env } = options;
  let baseUrl: string;
  let apiKey: string | undefined;
  let keyVar: string | undefined;
  try {
    const endpoint = resolveEndpoint({ provider, baseUrl: options.baseUrl, env });
    baseUrl = endpoint.baseUrl;
    // A placeholder (`ollama`, `none`) is still sent, as the model client sends it; only a real
    // key is "accepted" or "rejected".
    apiKey = endpoint.apiKey;
    keyVar = endpoint.secret ? endpoint.keyVar : undefined;
  } catch (error) {
    // Without its key (the `provider` check says so) the endpoint is still worth reaching.
    const url = isRatchetError(error, 'auth') ? endpointOf(provider, options.baseUrl, env) : null;
    if (url === null) {
      const failure = toRatchetError(error);
      return [
        { name: 'endpoint', status: 'fail', detail: failure.message, ...(failure.hint ? { hint: failure.hint } : {}) },
      ];
    }
    baseUrl = url;
  }
  const listing = await listModels({ provider, baseUrl, apiKey, fetch: options.fetch, timeoutMs: options.timeoutMs });
  return judge(listing, { ...options, where: baseUrl, keyVar, keyMissing: apiKey === undefined });
}

interface Judged extends EndpointCheckOptions {
  /** The base URL that was reached, as the user configures it. */
  where: string;
  /** The variable of a real key that was sent; undefined when none was (or a placeholder). */
  keyVar: string | undefined;
  /** The provider needs a key and none is set (the `provider` check fails already). */
  keyMissing: boolean;
}

function judge(listing: ModelListing, context: Judged): EndpointCheck[] {
  const request = `GET ${new URL(listing.url).pathname}`;
  const { where } = context;
  const unverified = context.keyVar === undefined ? '' : `; ${context.keyVar} is not verified`;
  switch (listing.kind) {
    case 'unreachable':
      return [
        {
          name: 'endpoint',
          status: 'fail',
          detail: `${where} does not answer: ${listing.reason}`,
          hint: BASE_URL_HINT,
        },
      ];
    case 'not-a-list':
      return [
        {
          name: 'endpoint',
          status: 'warn',
          detail: `${where} answers ${request} (HTTP ${listing.status}) with something that is not a model list${unverified}`,
          hint: `Check --base-url: ${baseUrlShape(context.provider)}.`,
        },
      ];
    case 'listed':
      return [
        { name: 'endpoint', status: 'ok', detail: `${where} answers ${request} (HTTP ${listing.status})` },
        ...(context.keyVar === undefined
          ? []
          : [{ name: 'key', status: 'ok' as const, detail: `${context.keyVar} accepted` }]),
        ...context.models.map((model) =>
          modelCheck(listing, model, { provider: context.provider, authoritative: authoritative(context) }),
        ),
      ];
    case 'status':
      return statusChecks(listing, context, { where, request, unverified });
  }
}

function statusChecks(
  listing: Extract<ModelListing, { kind: 'status' }>,
  context: Judged,
  words: { where: string; request: string; unverified: string },
): EndpointCheck[] {
  const { status } = listing;
  const { where, request, unverified } = words;
  const said = `HTTP ${status}${listing.errorType === undefined ? '' : ` ${listing.errorType}`}${listing.message === undefined || listing.message === '' ? '' : `: ${listing.message}`}`;
  const answers: EndpointCheck = {
    name: 'endpoint',
    status: 'ok',
    detail: `${where} answers ${request} (HTTP ${status})`,
  };
  if (status === 401 || status === 403) {
    if (context.keyMissing) return [{ ...answers, detail: `${answers.detail}; no key sent` }];
    if (context.keyVar === undefined) {
      const hint =
        context.provider === 'ollama'
          ? 'Ollama itself needs no key: check that --base-url / OLLAMA_HOST points at Ollama; for a server that wants a key use --provider openai-compatible with OPENAI_API_KEY.'
          : 'The server wants a key: export OPENAI_API_KEY=... (the key it expects).';
      return [
        answers,
        { name: 'key', status: 'fail', detail: `the endpoint wants a key and none is set (${said})`, hint },
      ];
    }
    const verdict = status === 401 ? 'rejected' : 'not allowed to list models';
    return [
      answers,
      {
        name: 'key',
        status: 'fail',
        detail: `${context.keyVar} ${verdict} (${said})`,
        hint: `Set ${context.keyVar} to a key this endpoint accepts (export ${context.keyVar}=...); a gateway or proxy may want its own key.`,
      },
    ];
  }
  if (status === 404 || status === 405) {
    return [
      {
        name: 'endpoint',
        status: 'warn',
        detail: `${where} answers, but has no model list (${request}: HTTP ${status})${unverified}`,
        hint: `Usual for gateways: the first model call checks the key. Otherwise check --base-url: ${baseUrlShape(context.provider)}.`,
      },
    ];
  }
  if (status === 429 || status === 529) {
    const meaning = status === 429 ? 'is rate-limiting requests' : 'is overloaded';
    return [
      {
        name: 'endpoint',
        status: 'warn',
        detail: `${where} ${meaning} (${request}: ${said})${unverified}`,
        hint: "Runs wait and retry (1 s, 2 s, 4 s, or the server's retry-after); if it lasts, check the account's rate limits or try later.",
      },
    ];
  }
  if (status >= 500) {
    return [
      {
        name: 'endpoint',
        status: 'fail',
        detail: `${where} answered ${request} with a server error (${said})${unverified}`,
        hint: "The server, or a proxy in front of it, is failing: check --base-url and the server's logs, or try again later.",
      },
    ];
  }
  if (status >= 300 && status < 400) {
    return [
      {
        name: 'endpoint',
        status: 'warn',
        detail: `${where} redirects ${request} (HTTP ${status}${listing.location === undefined ? '' : ` to ${listing.location}`})${unverified}`,
        hint: 'Use the address it redirects to as --base-url.',
      },
    ];
  }
  return [
    {
      name: 'endpoint',
      status: 'warn',
      detail: `${where} answered ${request} with ${said}${unverified}`,
      hint: `Check --base-url (${baseUrlShape(context.provider)}) and the key.`,
    },
  ];
}

/**
 * Whether the list names the model. Ollama's list is every model it can run, and so is the list
 * of OpenAI's own API: a model missing from a complete one fails (the first call would answer
 * 404). Elsewhere (gateways, local servers, Anthropic's aliases) a list may not name every model
 * the endpoint takes: a missing model is a warning, never a reason to fail.
 */
function modelCheck(
  listing: Extract<ModelListing, { kind: 'listed' }>,
  model: string,
  context: { provider: string; authoritative: boolean },
): EndpointCheck {
  const { ids, hasMore } = listing;
  const found = ids.find((id) => namesModel(id, model));
  if (found !== undefined) {
    return {
      name: 'model',
      status: 'ok',
      detail: found === model ? `${model} is listed` : `${model} is listed (as ${found})`,
    };
  }
  const status = context.authoritative && !hasMore ? 'fail' : 'warn';
  const hint =
    context.provider === 'ollama'
      ? `ollama pull ${model}, or pick a listed model with --model.`
      : status === 'fail'
        ? 'Pick a listed model with --model (or [provider] model / [stages.*] model in .ratchet/config.toml).'
        : 'Gateways and local servers may name models their own way; if the first call says the model does not exist, pick a listed one with --model.';
  if (ids.length === 0)
    return {
      name: 'model',
      status,
      detail: `the endpoint lists no models, so ${model} is not among them`,
      hint,
    };
  const shown = ids.slice(0, 5).join(', ') + (ids.length > 5 ? ', ...' : '');
  return {
    name: 'model',
    status,
    detail: `${model} is not among the ${ids.length}${hasMore ? '+' : ''} models the endpoint lists (${shown})`,
    hint,
  };
}

/**
 * Ollama anywhere, or OpenAI's own API (not a gateway in front of it): its list names every model
 * id it takes. Anthropic's does not: it lists snapshots, not the aliases it also takes
 * (`claude-3-5-haiku-latest`, `claude-sonnet-4-0`).
 */
function authoritative(context: Judged): boolean {
  return (
    context.provider === 'ollama' ||
    (context.provider === 'openai' && context.where === endpointOf('openai', undefined, {}))
  );
}

/**
 * `claude-sonnet-4-5` is served as the snapshot `claude-sonnet-4-5-20250929`, and Ollama's
 * `llama3.2` as `llama3.2:latest`: both count as listed.
 */
function namesModel(id: string, model: string): boolean {
  return (
    id === model ||
    id === `${model}:latest` ||
    (id.startsWith(`${model}-`) && /^\d{8}$/.test(id.slice(model.length + 1)))
  );
}

function baseUrlShape(provider: string): string {
  return provider === 'anthropic'
    ? 'Anthropic style, without /v1 (requests go to <base>/v1/models and <base>/v1/messages)'
    : 'OpenAI style, ending in /v1 (requests go to <base>/models and <base>/chat/completions)';
}
