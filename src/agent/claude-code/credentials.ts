/**
 * The Claude Code CLI's credentials as Ratchet finds them, and the one rule by which a `/login`
 * token refresh made in a private configuration directory goes back to the user's.
 *
 * Ratchet never hands these to the CLI it runs for an agent: its API proxy adds them to the
 * requests (see `api-proxy.ts`), and the CLI gets a placeholder that only the proxy accepts.
 */
import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

export const CREDENTIALS_FILE = '.credentials.json';
export const GLOBAL_CONFIG_FILE = '.claude.json';

/** Where the CLI keeps what it reads and writes, for its environment (as the CLI resolves it). */
export interface ClaudeConfigPaths {
  /** `$CLAUDE_CONFIG_DIR`, else `~/.claude`: settings, CLAUDE.md, agents, commands, plugins... */
  configDir: string;
  /** The global config file: `.claude.json` in `$CLAUDE_CONFIG_DIR` when set, else in `$HOME`. */
  globalConfig: string;
  /** Where `/login` keeps its tokens (`.credentials.json`): `$CLAUDE_SECURESTORAGE_CONFIG_DIR`, else the config directory. */
  credentialsDir: string;
}

export function claudeConfigPaths(env: Readonly<Record<string, string | undefined>>): ClaudeConfigPaths {
  const home = env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
  const custom =
    env.CLAUDE_CONFIG_DIR !== undefined && env.CLAUDE_CONFIG_DIR !== '' ? env.CLAUDE_CONFIG_DIR : undefined;
  const configDir = custom ?? join(home, '.claude');
  const secure = env.CLAUDE_SECURESTORAGE_CONFIG_DIR;
  return {
    configDir,
    globalConfig: join(custom ?? home, GLOBAL_CONFIG_FILE),
    credentialsDir: secure === undefined ? configDir : secure === '' ? join(home, '.claude') : secure,
  };
}

/**
 * A `/login` record (`claudeAiOauth` in `.credentials.json`) as Claude Code 2.1 writes it:
 * `accessToken`, `refreshToken`, `expiresAt` (ms), `scopes`, `subscriptionType`, `rateLimitTier`,
 * and, since the 2.1 releases, the stable identifiers `accountUuid`, `organizationUuid` and
 * `clientId`. Unknown fields are kept as they are.
 */
const oauthRecordSchema = z.looseObject({
  accessToken: z.string(),
  refreshToken: z.string().optional(),
  expiresAt: z.number().nullable().optional(),
  scopes: z.array(z.string()).optional(),
  subscriptionType: z.string().nullable().optional(),
  accountUuid: z.string().optional(),
  organizationUuid: z.string().optional(),
  clientId: z.string().optional(),
});
type OauthRecord = z.infer<typeof oauthRecordSchema>;

const credentialsFileSchema = z.looseObject({ claudeAiOauth: oauthRecordSchema.optional() });

/** The identifiers of the account a login belongs to: a refresh never changes them. */
const ACCOUNT_FIELDS = ['accountUuid', 'organizationUuid', 'clientId'] as const;

/** `sk-ant-oat01-...` (access) and `sk-ant-ort01-...` (refresh), as the OAuth server issues them. */
const ACCESS_TOKEN = /^sk-ant-oat\d{2}-[A-Za-z0-9_-]{8,2048}$/;
const REFRESH_TOKEN = /^sk-ant-ort\d{2}-[A-Za-z0-9_-]{8,2048}$/;

/** A login record further away than this is no refresh: access tokens last hours. */
const MAX_LIFETIME_MS = 400 * 24 * 60 * 60 * 1000;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function loginRecord(text: string): { file: Record<string, unknown>; record: OauthRecord } | undefined {
  const parsed = credentialsFileSchema.safeParse(parseJson(text));
  if (!parsed.success || parsed.data.claudeAiOauth === undefined) return undefined;
  return { file: parsed.data, record: parsed.data.claudeAiOauth };
}

/** JSON with sorted keys, so that two values compare by content. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What `refreshToKeep` decided, with the reason when it keeps nothing. */
export type RefreshDecision = { keep: true; text: string } | { keep: false; reason: string };

/**
 * Whether the `.credentials.json` a private configuration directory holds after a CLI call
 * (`written`) is a token refresh of the one the call started from (`seeded`), to be copied back
 * to the user's file; pure. Only when all of these hold:
 * - both are `.credentials.json` files with a `claudeAiOauth` login record;
 * - the access token changed, and the new tokens have the shapes the OAuth server issues;
 * - the same account: every identifier the seeded record holds (`accountUuid`,
 *   `organizationUuid`, `clientId`) is unchanged, and the scopes are not widened;
 * - a newer expiry, in the future and no further than a refresh could make it;
 * - nothing else in the file changed.
 */
export function refreshToKeep(seeded: string, written: string, now: number): RefreshDecision {
  if (written === seeded) return { keep: false, reason: 'unchanged' };
  const before = loginRecord(seeded);
  if (before === undefined) return { keep: false, reason: 'the call started without a login record' };
  const after = loginRecord(written);
  if (after === undefined) return { keep: false, reason: 'no login record in the file the call left' };
  const [old, next] = [before.record, after.record];
  if (next.accessToken === old.accessToken) return { keep: false, reason: 'the access token did not change' };
  if (!ACCESS_TOKEN.test(next.accessToken)) return { keep: false, reason: 'the access token has not the issued shape' };
  if (next.refreshToken === undefined || !REFRESH_TOKEN.test(next.refreshToken))
    return { keep: false, reason: 'the refresh token has not the issued shape' };
  for (const field of ACCOUNT_FIELDS) {
    if (old[field] !== undefined && next[field] !== old[field])
      return { keep: false, reason: `another account (${field} changed)` };
  }
  if (old.scopes !== undefined && (next.scopes ?? []).some((scope) => !old.scopes?.includes(scope)))
    return { keep: false, reason: 'wider scopes' };
  const expiry = next.expiresAt ?? undefined;
  if (expiry === undefined || expiry <= (old.expiresAt ?? 0) || expiry <= now || expiry > now + MAX_LIFETIME_MS)
    return { keep: false, reason: 'not a newer expiry' };
  const rest = (file: Record<string, unknown>): string => canonical({ ...file, claudeAiOauth: undefined });
  if (rest(before.file) !== rest(after.file)) return { keep: false, reason: 'other entries of the file changed' };
  return { keep: true, text: written };
}

/**
 * How Ratchet's API proxy authenticates to the real API on the CLI's behalf, and how the CLI is
 * told it is signed in:
 * - `api-key`: `x-api-key` (`ANTHROPIC_API_KEY`, or the key a Console `/login` saved);
 * - `auth-token`: `Authorization: Bearer` (`ANTHROPIC_AUTH_TOKEN`, for gateways); the CLI runs
 *   with a placeholder API key, as for `api-key`;
 * - `oauth`: `Authorization: Bearer` with a claude.ai token (`CLAUDE_CODE_OAUTH_TOKEN`, or the
 *   `/login` access token in `.credentials.json`, then with where it lives and when it expires);
 *   the CLI runs in its subscription mode with a placeholder token.
 */
export type ClaudeCredential =
  | { kind: 'api-key' | 'auth-token'; value: string; source: string }
  | { kind: 'oauth'; value: string; source: string; login?: { file: string; expiresAt: number | undefined } };

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/** The text of one of the user's own files, undefined when there is none. */
export async function readUserFile(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Larger files are not configuration the CLI wrote. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/** The text of a file a sandbox could write: only a regular file, never through a symbolic link, and small. */
export async function readPlainFile(path: string): Promise<string | undefined> {
  try {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const info = await handle.stat();
      if (!info.isFile() || info.size > MAX_FILE_BYTES) return undefined;
      return await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

const globalConfigSchema = z.looseObject({ primaryApiKey: z.string().optional() });

/**
 * The credential the CLI would use, in this order: `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_API_KEY`,
 * `CLAUDE_CODE_OAUTH_TOKEN`, the `/login` tokens (`.credentials.json`), the API key a Console
 * `/login` saved (`primaryApiKey` in `.claude.json`). Undefined when there is none (an
 * `apiKeyHelper`, Bedrock or Vertex, which Ratchet cannot pass through its proxy).
 */
export async function findClaudeCredential(
  env: Readonly<Record<string, string | undefined>>,
  paths: ClaudeConfigPaths,
): Promise<ClaudeCredential | undefined> {
  const authToken = nonEmpty(env.ANTHROPIC_AUTH_TOKEN);
  if (authToken !== undefined) return { kind: 'auth-token', value: authToken, source: 'ANTHROPIC_AUTH_TOKEN' };
  const apiKey = nonEmpty(env.ANTHROPIC_API_KEY);
  if (apiKey !== undefined) return { kind: 'api-key', value: apiKey, source: 'ANTHROPIC_API_KEY' };
  const oauthToken = nonEmpty(env.CLAUDE_CODE_OAUTH_TOKEN);
  if (oauthToken !== undefined) return { kind: 'oauth', value: oauthToken, source: 'CLAUDE_CODE_OAUTH_TOKEN' };
  const file = join(paths.credentialsDir, CREDENTIALS_FILE);
  const text = await readUserFile(file);
  const login = text === undefined ? undefined : loginRecord(text)?.record;
  if (login !== undefined && nonEmpty(login.accessToken) !== undefined) {
    return {
      kind: 'oauth',
      value: login.accessToken.trim(),
      source: '/login',
      login: { file, expiresAt: login.expiresAt ?? undefined },
    };
  }
  const global = globalConfigSchema.safeParse(parseJson((await readUserFile(paths.globalConfig)) ?? ''));
  const saved = global.success ? nonEmpty(global.data.primaryApiKey) : undefined;
  if (saved !== undefined) return { kind: 'api-key', value: saved, source: '/login (Console API key)' };
  return undefined;
}

/** Keys of `.claude.json` that hold credentials or parts of them: never in a call's copy. */
const GLOBAL_CONFIG_SECRETS = ['primaryApiKey', 'customApiKeyResponses'];

/** `.claude.json` without its credentials, for a call's private copy (undefined: not a JSON object). */
export function withoutGlobalConfigSecrets(text: string): string | undefined {
  const value = parseJson(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key of GLOBAL_CONFIG_SECRETS) delete copy[key];
  return `${JSON.stringify(copy, null, 2)}\n`;
}
