/**
 * Secret redaction for everything the ledger stores. The ledger runs every string it writes
 * (event payloads, model requests and responses, tool input and output, command output, errors)
 * through a `Redactor` before it reaches SQLite, so a secret never lands in the database file.
 *
 * Two kinds of secret are removed:
 * - configured secrets (e.g. the values of `*_API_KEY` variables, see `secretsFromEnv`), matched
 *   literally, together with their JSON-escaped and URL-encoded spellings;
 * - well-known key shapes, even when nobody configured them: Anthropic and OpenAI keys
 *   (`sk-ant-...`, `sk-proj-...`, `sk-...`), `Bearer <token>`, and values labelled as secrets
 *   (`x-api-key: ...`, `"apiKey":"..."`, `api_key=...`, `password: ...`, `...token=...`).
 *
 * Redaction errs on the side of removing too much: prose such as `Bearer authentication` loses
 * its second word in the stored copy. The engine and the model always see the original text.
 */

import { escapeRegExp } from './regexp.js';

/** Replaces secrets in a string. */
export type Redactor = (text: string) => string;

/** What every secret is replaced with. */
export const REDACTED = '[REDACTED]';

/** Configured secrets shorter than this are ignored: they would match ordinary text. */
const MIN_SECRET_LENGTH = 8;

/**
 * Key shapes, as one case-insensitive regex with three alternatives:
 * 1. `sk-` keys (Anthropic `sk-ant-api03-...`, OpenAI `sk-proj-...` / legacy `sk-...`);
 * 2. `Bearer <token>` (the scheme word is kept);
 * 3. a secret-looking label (`api_key`, `apiKey`, `x-api-key`, `secret`, `password`, `token`,
 *    `authorization`, with any prefix such as `ANTHROPIC_` or `access`) followed by `:` or `=`
 *    and a value, possibly quoted, JSON-escaped or after an auth scheme (`Basic ...`); the
 *    label is kept, the value replaced;
 * 4. the password of a URL (`https://user:password@host`); scheme and user name are kept.
 */
const SK_KEY = String.raw`\bsk-[A-Za-z0-9_-]{16,}`;

const KEY_SHAPES = new RegExp(
  [
    SK_KEY,
    String.raw`\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}`,
    String.raw`((?:api[_-]?key|secret|password|passwd|token|authorization)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?:(?:Bearer|Basic|Token)\s+)?)(?!\[REDACTED\])[^\s"'\\,;&})\]]+`,
    String.raw`(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@"']*:)(?!\[REDACTED\])[^\s/@"']+(?=@)`,
  ].join('|'),
  'gi',
);

/** Only the keys themselves (`sk-...`), for `createRedactor(..., { shapes: 'keys' })`. */
const KEYS_ONLY = new RegExp(SK_KEY, 'g');

/** Object keys whose string values are secrets whatever they look like (e.g. `apiKey`). */
const SECRET_KEY_NAME = /(?:api[_-]?key|secret|password|passwd|token|authorization)$/i;

function replaceKeyShape(
  _match: string,
  bearer: string | undefined,
  label: string | undefined,
  userinfo: string | undefined,
): string {
  if (bearer !== undefined) return `${bearer}${REDACTED}`;
  if (label !== undefined) return `${label}${REDACTED}`;
  if (userinfo !== undefined) return `${userinfo}${REDACTED}`;
  return REDACTED;
}

/** Spellings of a secret as it may appear inside stored text. */
function spellings(secret: string): string[] {
  const variants = new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]);
  return [...variants];
}

/**
 * Builds a redactor for the given secrets (plus the built-in key shapes). Secrets shorter than
 * `MIN_SECRET_LENGTH` characters are ignored. Longer secrets win over shorter ones they contain.
 * `shapes: 'keys'` recognises only `sk-...` keys among the shapes, not the words after labels
 * such as `Bearer` or `token:` (for text shown to the user as written, test names included).
 */
export function createRedactor(secrets: readonly string[], options: { shapes?: 'all' | 'keys' } = {}): Redactor {
  const shapes = options.shapes === 'keys' ? KEYS_ONLY : KEY_SHAPES;
  const literals = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH).flatMap(spellings))].sort(
    (a, b) => b.length - a.length,
  );
  const literal = literals.length === 0 ? undefined : new RegExp(literals.map(escapeRegExp).join('|'), 'g');
  return (text: string): string => {
    const withoutLiterals = literal === undefined ? text : text.replace(literal, REDACTED);
    return withoutLiterals.replace(shapes, replaceKeyShape);
  };
}

function hasToJson(value: object): value is { toJSON: () => unknown } {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

/**
 * Redacts a JSON-like value deeply: every string (object keys included) goes through `redact`,
 * and string values under secret-looking keys (`apiKey`, `accessToken`, `password`, ...) are
 * replaced outright. Values with `toJSON` (dates) are converted first, as `JSON.stringify` would.
 * Returns a new value of the same shape; the input is not modified.
 */
export function redactValue<T>(value: T, redact: Redactor): T {
  return redactUnknown(value, redact) as T;
}

function redactUnknown(value: unknown, redact: Redactor): unknown {
  if (typeof value === 'string') return redact(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactUnknown(item, redact));
  if (hasToJson(value)) return redactUnknown(value.toJSON(), redact);
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    result[redact(key)] =
      typeof item === 'string' && SECRET_KEY_NAME.test(key) ? REDACTED : redactUnknown(item, redact);
  }
  return result;
}

/** Environment variable names whose values are treated as secrets. */
const SECRET_ENV_NAME = /_(?:KEY|TOKEN|SECRET|PASSWORD)$/i;

/** Whether an environment variable's name says it holds a secret (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`). */
export function isSecretVariable(name: string): boolean {
  return SECRET_ENV_NAME.test(name);
}

/**
 * Collects the values of environment variables whose names end in `_KEY`, `_TOKEN`, `_SECRET`
 * or `_PASSWORD` (e.g. `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GITHUB_TOKEN`), to pass to
 * `openLedger(..., { secrets })`. Values shorter than `MIN_SECRET_LENGTH` are left out.
 */
export function secretsFromEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  const secrets = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !isSecretVariable(name)) continue;
    const trimmed = value.trim();
    if (trimmed.length >= MIN_SECRET_LENGTH) secrets.add(trimmed);
  }
  return [...secrets];
}
