import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * `0003_model_messages`: each message of a model conversation is stored once. Every model call
 * sends the whole conversation so far, so storing each request whole grew the ledger with the
 * square of a stage's length (13 turns that each read a 4 MB file made 362 MB). From here on a
 * call's `request_json` holds the request with `messages: null` and `message_hashes_json` the
 * sha256 of each message, in order, whose text lives once in `model_messages`. Calls recorded
 * before keep their messages inline (`message_hashes_json` null). Released: never changes.
 */
export const modelMessagesMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('model_messages')
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('message_json', 'text', (c) => c.notNull())
      .execute();
    await db.schema.alterTable('model_calls').addColumn('message_hashes_json', 'text').execute();
  },
};
