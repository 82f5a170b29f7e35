import type { Kysely } from 'kysely';
import type { LedgerDatabase } from '../schema.js';

/** Hashes looked up per query (SQLite limits the parameters of one statement). */
const LOOKUP_CHUNK = 500;

/** The hashes listed in a call's `message_hashes_json` (none for calls that keep their messages inline). */
export function messageHashes(hashesJson: string | null): string[] {
  if (hashesJson === null) return [];
  const parsed: unknown = JSON.parse(hashesJson);
  return Array.isArray(parsed) ? parsed.filter((hash): hash is string => typeof hash === 'string') : [];
}

/**
 * The stored messages with the given hashes, each parsed once: the calls of a conversation that
 * share a message share the parsed value too.
 */
export async function loadMessages(
  db: Kysely<LedgerDatabase>,
  hashes: Iterable<string>,
): Promise<Map<string, unknown>> {
  const wanted = [...new Set(hashes)];
  const messages = new Map<string, unknown>();
  for (let index = 0; index < wanted.length; index += LOOKUP_CHUNK) {
    const rows = await db
      .selectFrom('model_messages')
      .select(['hash', 'message_json'])
      .where('hash', 'in', wanted.slice(index, index + LOOKUP_CHUNK))
      .execute();
    for (const row of rows) messages.set(row.hash, JSON.parse(row.message_json) as unknown);
  }
  return messages;
}

/**
 * A call's request as it was recorded: `request_json` with its messages put back from their
 * hashes, or as stored when the call predates content-addressed messages.
 */
export function storedRequest(
  requestJson: string | null,
  hashesJson: string | null,
  messages: ReadonlyMap<string, unknown>,
): unknown {
  if (requestJson === null) return null;
  const request: unknown = JSON.parse(requestJson);
  if (hashesJson === null || typeof request !== 'object' || request === null) return request;
  return { ...request, messages: messageHashes(hashesJson).map((hash) => messages.get(hash) ?? null) };
}
