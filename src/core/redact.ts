/**
 * Secret redaction for everything Ratchet stores, shows or sends. The ledger runs every string it
 * writes (event payloads, model requests and responses, tool input and output, command output,
 * errors) through a `Redactor` before it reaches SQLite, so a secret never lands in the database
 * file; so do the kept logs, reports, commit messages, handoff notes and the terminal. Prompts
 * sent to the provider lose the configured secrets (the values of secret-looking environment
 * variables, see `secretsFromEnv`) and nothing else (`shapes: 'none'`).
 *
 * Two kinds of secret are removed:
 * - configured secrets (see `secretsFromEnv`), matched literally, together with their
 *   JSON-escaped and URL-encoded spellings, and a prefix of one (8 characters or more) that ends
 *   where text was cut with an ellipsis (`…`): a commit subject cut at 72 characters keeps no
 *   half of a key either;
 * - well-known key shapes, even when nobody configured them: Anthropic and OpenAI keys
 *   (`sk-ant-...`, `sk-proj-...`, `sk-...`), GitHub, GitLab, npm, Slack, Stripe, Google and AWS
 *   access keys, JSON Web Tokens, `Bearer <token>`, and values labelled as secrets
 *   (`x-api-key: ...`, `"apiKey":"..."`, `api_key=...`, `password: ...`, `...token=...`).
 *
 * Redaction errs on the side of removing too much: prose such as `Bearer authentication` loses
 * its second word in the stored copy. The engine always sees the original text.
 */

import { escapeRegExp } from './regexp.js';

/** Replaces secrets in a string. */
export type Redactor = (text: string) => string;

/** What every secret is replaced with. */
export const REDACTED = '[REDACTED]';

/** Configured secrets shorter than this are ignored: they would match ordinary text. */
const MIN_SECRET_LENGTH = 8;

/**
 * Keys recognised by their shape alone: `sk-` keys (Anthropic `sk-ant-api03-...`, OpenAI
 * `sk-proj-...` / legacy `sk-...`), GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`,
 * `github_pat_`), GitLab (`glpat-`), npm (`npm_`), Slack (`xox?-`), Stripe secret and restricted
 * keys, Google API keys (`AIza`), AWS access key ids (`AKIA`, `ASIA`) and JSON Web Tokens.
 */
const KNOWN_KEYS = [
  String.raw`\bsk-[A-Za-z0-9_-]{16,}`,
  String.raw`\bgh[pousr]_[A-Za-z0-9]{30,}`,
  String.raw`\bgithub_pat_[A-Za-z0-9_]{30,}`,
  String.raw`\bglpat-[A-Za-z0-9_-]{20,}`,
  String.raw`\bnpm_[A-Za-z0-9]{36,}`,
  String.raw`\bxox[abposr]-[A-Za-z0-9-]{10,}`,
  String.raw`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`,
  String.raw`\bAIza[A-Za-z0-9_-]{35}`,
  String.raw`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`,
  String.raw`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`,
].join('|');

/**
 * Key shapes, as one case-insensitive regex with four alternatives:
 * 1. the known keys above;
 * 2. `Bearer <token>` (the scheme word is kept);
 * 3. a secret-looking label (`api_key`, `apiKey`, `x-api-key`, `secret`, `password`, `token`,
 *    `authorization`, with any prefix such as `ANTHROPIC_` or `access`) followed by `:` or `=`
 *    and a value, possibly quoted, JSON-escaped or after an auth scheme (`Basic ...`); the
 *    label is kept, the value replaced;
 * 4. the password of a URL (`https://user:password@host`); scheme and user name are kept.
 */
const KEY_SHAPES = new RegExp(
  [
    `(?:${KNOWN_KEYS})`,
    String.raw`\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}`,
    String.raw`((?:api[_-]?key|secret|password|passwd|token|authorization)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?:(?:Bearer|Basic|Token)\s+)?)(?!\[REDACTED\])[^\s"'\\,;&})\]]+`,
    String.raw`(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@"']*:)(?!\[REDACTED\])[^\s/@"']+(?=@)`,
  ].join('|'),
  'gi',
);

/** Only the keys themselves, for `createRedactor(..., { shapes: 'keys' })`. */
const KEYS_ONLY = new RegExp(KNOWN_KEYS, 'g');

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
 * A pattern for the start of `secret` (at least `MIN_SECRET_LENGTH` characters of it, and less
 * than all of it) right before an ellipsis: `abcdefgh(?:i(?:j)?)?(?=…)`.
 */
function cutPrefix(secret: string): string | undefined {
  if (secret.length <= MIN_SECRET_LENGTH) return undefined;
  const rest = [...secret.slice(MIN_SECRET_LENGTH, -1)].map(escapeRegExp);
  const optional = rest.reduceRight((inner, char) => `(?:${char}${inner})?`, '');
  return `${escapeRegExp(secret.slice(0, MIN_SECRET_LENGTH))}${optional}(?=…)`;
}

/** Which shapes a redactor recognises besides the configured secrets. */
export type RedactorShapes = 'all' | 'keys' | 'none';

/**
 * Builds a redactor for the given secrets (plus the built-in key shapes). Secrets shorter than
 * `MIN_SECRET_LENGTH` characters are ignored. Longer secrets win over shorter ones they contain.
 * `shapes: 'keys'` recognises only the known keys (`sk-...`, `ghp_...`, ...) among the shapes,
 * not the words after labels such as `Bearer` or `token:` (for text shown to the user as
 * written, test names included); `shapes: 'none'` only the configured secrets (for prompts: the
 * model must see the code it works on as it is, key-shaped test fixtures included).
 */
export function createRedactor(secrets: readonly string[], options: { shapes?: RedactorShapes } = {}): Redactor {
  const shapes = options.shapes === 'none' ? undefined : options.shapes === 'keys' ? KEYS_ONLY : KEY_SHAPES;
  const long = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH))];
  const literals = [...new Set(long.flatMap(spellings))].sort((a, b) => b.length - a.length);
  const prefixes = long.flatMap((secret) => cutPrefix(secret) ?? []);
  const alternatives = [...literals.map(escapeRegExp), ...prefixes];
  const literal = alternatives.length === 0 ? undefined : new RegExp(alternatives.join('|'), 'g');
  return (text: string): string => {
    const withoutLiterals = literal === undefined ? text : text.replace(literal, REDACTED);
    if (shapes === undefined) return withoutLiterals;
    // The keys alone have no groups to keep (a replacer would get the match's offset as its first).
    return shapes === KEYS_ONLY
      ? withoutLiterals.replace(shapes, REDACTED)
      : withoutLiterals.replace(shapes, replaceKeyShape);
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

/**
 * Words of a variable's name (split at `_`, `-`, `.`) that say it holds a secret: `GH_PAT`,
 * `NPM_CONFIG__AUTH`, `DB_PASS`, `SSH_KEY`, `SENTRY_DSN`, `AWS_ACCESS_KEY_ID`.
 */
const SECRET_NAME_WORDS = new Set([
  'KEY',
  'KEYS',
  'APIKEY',
  'PASS',
  'PAT',
  'AUTH',
  'OAUTH',
  'SESSION',
  'DSN',
  'CREDS',
  'JWT',
  'PRIVATE',
  'SIGNATURE',
]);

/** Parts that say so wherever they appear in the name: `PGPASSWORD`, `GITHUB_TOKEN`, `MYSECRET`. */
const SECRET_NAME_PART = /TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|COOKIE|WEBHOOK/i;

/**
 * Whether an environment variable's name says it holds a secret: it contains `TOKEN`, `SECRET`,
 * `PASSWORD`, `PASSWD`, `PASSPHRASE`, `CREDENTIAL`, `COOKIE` or `WEBHOOK`, or one of its words
 * is `KEY`, `PASS`, `PAT`, `AUTH`, `SESSION`, `DSN`, `PRIVATE`, ... (`GH_PAT`, `NPM_CONFIG__AUTH`).
 */
export function isSecretVariable(name: string): boolean {
  if (SECRET_NAME_PART.test(name)) return true;
  return name
    .toUpperCase()
    .split(/[_.-]+/)
    .some((word) => SECRET_NAME_WORDS.has(word));
}

/** A whole value that is a known key (see `KNOWN_KEYS`), or a PEM private key. */
const KNOWN_KEY_VALUE = new RegExp(`^(?:${KNOWN_KEYS})$|-----BEGIN [A-Z ]*PRIVATE KEY-----`);

/** The password of a URL with credentials (`postgres://user:password@host/db`). */
const URL_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:([^\s/@]+)@/i;

/** Bits of Shannon entropy per character. */
function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/**
 * Whether a value looks like a secret whatever its variable is called: a known key shape, a PEM
 * private key, or a long random-looking token (20+ characters of a base64/URL-safe alphabet with
 * upper case, lower case and digits, 3.5+ bits of entropy per character). Paths, URLs, lists
 * (`:`), hexadecimal ids (commit hashes, UUIDs) and words do not.
 */
export function looksLikeSecret(value: string): boolean {
  if (KNOWN_KEY_VALUE.test(value)) return true;
  if (value.length < 20 || !/^[A-Za-z0-9+/=_.~-]+$/.test(value) || /^[/.~]/.test(value)) return false;
  if (!/[a-z]/.test(value) || !/[A-Z]/.test(value) || !/[0-9]/.test(value)) return false;
  return entropy(value) >= 3.5;
}

/**
 * The secrets of an environment, to redact (ledger, logs, reports, commits, notes, prompts,
 * terminal): the value of every variable whose name says it is a secret (`isSecretVariable`) or
 * whose value looks like one (`looksLikeSecret`), and the password of every URL with credentials
 * (`DATABASE_URL=postgres://u:password@db/app`) with the whole URL. Values shorter than 8
 * characters are left out: they would match ordinary text.
 */
export function secretsFromEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  const secrets = new Set<string>();
  const add = (value: string): void => {
    if (value.length >= MIN_SECRET_LENGTH) secrets.add(value);
  };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const trimmed = value.trim();
    if (isSecretVariable(name) || looksLikeSecret(trimmed)) add(trimmed);
    const password = URL_PASSWORD.exec(trimmed)?.[1];
    if (password !== undefined) {
      add(trimmed);
      add(password);
      try {
        add(decodeURIComponent(password));
      } catch {
        // Not percent-encoded after all: the raw spelling is enough.
      }
    }
  }
  return [...secrets];
}
