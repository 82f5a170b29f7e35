import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql, SqliteDialect, type Selectable, type UpdateObject } from 'kysely';
import type { RatchetEvent } from '../core/events.js';
import { RatchetError, toRatchetError } from '../core/errors.js';
import { EventWriter } from './internal/event-writer.js';
import {
  toCheckpointRow,
  toEvent,
  toModelCallRow,
  toRunRow,
  toStageRow,
  toToolCallRow,
  toVerificationRow,
} from './internal/rows.js';
import { loadMessages, messageHashes } from './internal/model-messages.js';
import { sqliteCode } from './internal/sqlite-code.js';
import { readSolveTrace } from './internal/solve-trace.js';
import { SqliteTaskLedger } from './internal/task-ledger.js';
import { computeSummary } from './internal/summary.js';
import { migrateToLatest } from './migrate.js';
import { createRedactor, redactValue, secretsFromEnv, type Redactor } from '../core/redact.js';
import type { LedgerDatabase, VerificationsTable } from './schema.js';
import type {
  CheckpointRow,
  EventQuery,
  Ledger,
  LedgerOptions,
  ModelCallRow,
  NewRun,
  RunFilter,
  RunPatch,
  RunRow,
  RunStatus,
  RunSummary,
  SolveTrace,
  StageRow,
  ToolCallRow,
  VerificationRow,
} from './types.js';

// The ledger's public API, importable from this module (`./index.js` re-exports it): the
// contract's types and `secretsFromEnv`.
export type * from './types.js';
export type * from './task-types.js';
export { secretsFromEnv } from '../core/redact.js';

const DEFAULT_BUSY_TIMEOUT_MS = 5000;
const DEFAULT_LIST_LIMIT = 20;

/** The tables derived from events: each row carries its event's `seq`. */
type SeqTable = 'model_calls' | 'tool_calls' | 'verifications' | 'checkpoints';

/**
 * Opens (creating it and its directory if needed) the ledger at `file`, usually
 * `.ratchet/ledger.db`, and brings its schema up to date. `:memory:` gives a private in-memory
 * ledger. File ledgers use WAL, so readers (`ratchet status`) never block the run writing it.
 * Throws `internal` when the file cannot be opened or migrated.
 */
export async function openLedger(file: string, options: LedgerOptions = {}): Promise<Ledger> {
  const inMemory = file === ':memory:';
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  let sqlite: BetterSqlite3.Database | undefined;
  try {
    if (!inMemory) await mkdir(dirname(file), { recursive: true });
    sqlite = new BetterSqlite3(file, { timeout: busyTimeoutMs });
    sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    if (!inMemory) sqlite.pragma('journal_mode = WAL');
    // Safe with WAL: a crash of the process loses nothing; a power loss may lose the last
    // transactions but never corrupts the file.
    sqlite.pragma('synchronous = NORMAL');
    const db = new Kysely<LedgerDatabase>({
      dialect: new SqliteDialect({ database: sqlite }),
    });
    await migrateToLatest(db, sqlite);
    const redact = createRedactor(options.secrets ?? secretsFromEnv(process.env));
    return new SqliteLedger(file, db, sqlite, redact, options.now ?? (() => new Date()));
  } catch (error) {
    if (sqlite?.open === true) sqlite.close();
    throw ledgerError(`Could not open the run ledger at ${file}`, error);
  }
}

function ledgerError(message: string, error: unknown): RatchetError {
  if (error instanceof RatchetError) return error;
  const cause = toRatchetError(error);
  const code = sqliteCode(error);
  return new RatchetError('internal', `${message}: ${cause.message}`, {
    cause: error,
    retryable: code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED',
    hint:
      code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT'
        ? 'The ledger file is damaged; move it aside to start a new one.'
        : code === 'SQLITE_FULL'
          ? 'The disk is full; free some space and resume the run.'
          : undefined,
  });
}

class SqliteLedger implements Ledger {
  readonly file: string;
  readonly tasks: SqliteTaskLedger;
  readonly #db: Kysely<LedgerDatabase>;
  readonly #sqlite: BetterSqlite3.Database;
  readonly #redact: Redactor;
  readonly #now: () => Date;
  readonly #writer: EventWriter;
  #closed = false;

  constructor(
    file: string,
    db: Kysely<LedgerDatabase>,
    sqlite: BetterSqlite3.Database,
    redact: Redactor,
    now: () => Date,
  ) {
    this.file = file;
    this.#db = db;
    this.#sqlite = sqlite;
    this.#redact = redact;
    this.#now = now;
    this.#writer = new EventWriter(sqlite, redact);
    this.tasks = new SqliteTaskLedger(db, sqlite, redact, now, () => this.#assertOpen());
  }

  async createRun(run: NewRun): Promise<RunRow> {
    this.#assertOpen();
    const now = this.#now().toISOString();
    const status = run.status ?? 'running';
    try {
      await this.#db
        .insertInto('runs')
        .values({
          id: run.id,
          workflow: run.workflow,
          repo_root: run.repoRoot,
          feature: this.#redact(run.feature),
          status,
          branch: run.branch ?? null,
          base_branch: run.baseBranch ?? null,
          base_commit: run.baseCommit ?? null,
          worktree: run.worktree ?? null,
          provider: run.provider ?? null,
          model: run.model ?? null,
          config_json: this.#configJson(run.config),
          error: null,
          created_at: now,
          updated_at: now,
          finished_at: status === 'running' ? null : now,
          final_commit: run.finalCommit ?? null,
        })
        .execute();
    } catch (error) {
      if (sqliteCode(error) === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new RatchetError('internal', `Run ${run.id} already exists in the ledger`, { cause: error });
      }
      throw ledgerError(`Could not create run ${run.id}`, error);
    }
    return this.#requireRun(run.id);
  }

  async updateRun(id: string, patch: RunPatch): Promise<RunRow> {
    this.#assertOpen();
    const now = this.#now().toISOString();
    const update: UpdateObject<LedgerDatabase, 'runs'> = { updated_at: now };
    if (patch.status !== undefined) {
      update.status = patch.status;
      update.finished_at =
        patch.status === 'running'
          ? null
          : patch.status === 'accepted' || patch.status === 'rejected' || patch.status === 'rolled-back'
            ? sql<string>`coalesce(finished_at, ${now})`
            : now;
    }
    if (patch.finishedAt !== undefined) update.finished_at = patch.finishedAt;
    if (patch.branch !== undefined) update.branch = patch.branch;
    if (patch.baseBranch !== undefined) update.base_branch = patch.baseBranch;
    if (patch.baseCommit !== undefined) update.base_commit = patch.baseCommit;
    if (patch.worktree !== undefined) update.worktree = patch.worktree;
    if (patch.provider !== undefined) update.provider = patch.provider;
    if (patch.model !== undefined) update.model = patch.model;
    if (patch.finalCommit !== undefined) update.final_commit = patch.finalCommit;
    if (patch.config !== undefined) update.config_json = this.#configJson(patch.config);
    if (patch.error !== undefined) update.error = patch.error === null ? null : this.#redact(patch.error);
    const result = await this.#db.updateTable('runs').set(update).where('id', '=', id).executeTakeFirst();
    if (result.numUpdatedRows === 0n) throw notFound(id);
    return this.#requireRun(id);
  }

  async getRun(id: string): Promise<RunRow | undefined> {
    this.#assertOpen();
    const row = await this.#db.selectFrom('runs').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toRunRow(row);
  }

  async latestRun(filter: RunFilter = {}): Promise<RunRow | undefined> {
    this.#assertOpen();
    let query = this.#db.selectFrom('runs').selectAll();
    const statuses: readonly RunStatus[] | undefined =
      typeof filter.status === 'string' ? [filter.status] : filter.status;
    if (statuses !== undefined) {
      if (statuses.length === 0) return undefined;
      query = query.where('status', 'in', statuses);
    }
    if (filter.workflow !== undefined) query = query.where('workflow', '=', filter.workflow);
    if (filter.excludeWorkflow !== undefined) query = query.where('workflow', '!=', filter.excludeWorkflow);
    const row = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
    return row === undefined ? undefined : toRunRow(row);
  }

  async listRuns(limit = DEFAULT_LIST_LIMIT): Promise<RunRow[]> {
    this.#assertOpen();
    const rows = await this.#db
      .selectFrom('runs')
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toRunRow);
  }

  record(event: RatchetEvent): Promise<void> {
    return this.recordMany([event]);
  }

  recordMany(events: readonly RatchetEvent[]): Promise<void> {
    try {
      this.#assertOpen();
      this.#writer.write(events);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(ledgerError('Could not record an event in the run ledger', error));
    }
  }

  async stages(runId: string): Promise<StageRow[]> {
    this.#assertOpen();
    const rows = await this.#db.selectFrom('stages').selectAll().where('run_id', '=', runId).orderBy('id').execute();
    return rows.map(toStageRow);
  }

  async modelCalls(runId: string): Promise<ModelCallRow[]> {
    const rows = await this.#rowsBySeq('model_calls', runId);
    const messages = await loadMessages(
      this.#db,
      rows.flatMap((row) => messageHashes(row.message_hashes_json)),
    );
    return rows.map((row) => toModelCallRow(row, messages));
  }

  async toolCalls(runId: string): Promise<ToolCallRow[]> {
    return (await this.#rowsBySeq('tool_calls', runId)).map(toToolCallRow);
  }

  async verifications(runId: string): Promise<VerificationRow[]> {
    this.#assertOpen();
    // The task is the `verify-end` event's (at the same seq): the table has no column for it, and
    // reading it there serves the ledgers written before tasks runs existed too.
    const { rows } = await sql<Selectable<VerificationsTable> & { task: string | null }>`
      select v.*, json_extract(e.payload_json, '$.task') as task
      from verifications v left join events e on e.run_id = v.run_id and e.seq = v.seq
      where v.run_id = ${runId} order by v.seq
    `.execute(this.#db);
    return rows.map(toVerificationRow);
  }

  async checkpoints(runId: string): Promise<CheckpointRow[]> {
    return (await this.#rowsBySeq('checkpoints', runId)).map(toCheckpointRow);
  }

  async solveTrace(runId: string): Promise<SolveTrace> {
    this.#assertOpen();
    return readSolveTrace(this.#db, runId);
  }

  async lastEventNumber(runId: string): Promise<number> {
    this.#assertOpen();
    const prefix = `${runId}:`;
    const row = await this.#db
      .selectFrom('events')
      .where('run_id', '=', runId)
      .select(sql<number | null>`max(cast(substr(id, ${prefix.length + 1}) as integer))`.as('n'))
      .executeTakeFirstOrThrow();
    return row.n ?? 0;
  }

  async events(runId: string, query: EventQuery = {}): Promise<RatchetEvent[]> {
    this.#assertOpen();
    let select = this.#db
      .selectFrom('events as e')
      .leftJoin('model_calls as m', (join) => join.onRef('m.run_id', '=', 'e.run_id').onRef('m.seq', '=', 'e.seq'))
      .leftJoin('tool_calls as t', (join) => join.onRef('t.run_id', '=', 'e.run_id').onRef('t.seq', '=', 'e.seq'))
      .select(['e.run_id', 'e.seq', 'e.id', 'e.type', 'e.timestamp', 'e.payload_json'])
      .select(['m.request_json', 'm.message_hashes_json', 'm.response_json', 't.input_json', 't.output'])
      .where('e.run_id', '=', runId);
    if (query.types !== undefined) {
      if (query.types.length === 0) return [];
      select = select.where('e.type', 'in', query.types);
    }
    const rows = await select.orderBy('e.seq').execute();
    const messages = await loadMessages(
      this.#db,
      rows.flatMap((row) => messageHashes(row.message_hashes_json)),
    );
    return rows.map((row) => toEvent(row, messages));
  }

  async summary(runId: string): Promise<RunSummary> {
    this.#assertOpen();
    return computeSummary(this.#db, await this.#requireRun(runId));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#db.destroy();
    if (this.#sqlite.open) this.#sqlite.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #assertOpen(): void {
    if (this.#closed) throw new RatchetError('internal', `The run ledger at ${this.file} is closed`);
  }

  /** The rows one run's events left in a table derived from events, in event order. */
  async #rowsBySeq<T extends SeqTable>(table: T, runId: string): Promise<Selectable<LedgerDatabase[T]>[]> {
    this.#assertOpen();
    const { rows } = await sql<Selectable<LedgerDatabase[T]>>`
      select * from ${sql.table(table)} where run_id = ${runId} order by seq
    `.execute(this.#db);
    return rows;
  }

  #configJson(config: unknown): string | null {
    return config === undefined || config === null ? null : JSON.stringify(redactValue(config, this.#redact));
  }

  async #requireRun(id: string): Promise<RunRow> {
    const run = await this.getRun(id);
    if (run === undefined) throw notFound(id);
    return run;
  }
}

function notFound(id: string): RatchetError {
  return new RatchetError('not-found', `No run ${id} in the ledger`, {
    hint: 'Run `ratchet history` to list the runs this repository has.',
  });
}
