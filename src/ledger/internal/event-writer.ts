import { createHash } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import type { InsertType } from 'kysely';
import type { EventEnvelope, EventOf, EventType, RatchetEvent } from '../../core/events.js';
import type { ModelMessage } from '../../core/model.js';
import { redactValue, type Redactor } from '../../core/redact.js';
import type {
  CheckpointsTable,
  EventsTable,
  LedgerDatabase,
  ModelCallsTable,
  StagesTable,
  ToolCallsTable,
  VerificationsTable,
} from '../schema.js';
import type { FailingTest } from '../types.js';
import { SOLVE_EVENT_TYPES, SolveRows } from './solve-rows.js';
import { sqliteCode } from './sqlite-code.js';
import { parseVerificationResult } from './verification-result.js';

/** Columns the database fills in (`Generated<...>`: optional on insert). */
type GeneratedKeys<T> = { [K in keyof T]: undefined extends InsertType<T[K]> ? K : never }[keyof T];

/** A row to insert with every other column given (better-sqlite3 needs each named parameter). */
type FullRow<T> = { [K in Exclude<keyof T, GeneratedKeys<T>>]: InsertType<T[K]> };

/** One `true` per column: the compiler checks the list is complete and has no extras. */
type ColumnSet<T> = Record<keyof FullRow<T>, true>;

type Insert<T> = (row: FullRow<T>) => void;

function prepareInsert<K extends keyof LedgerDatabase>(
  sqlite: BetterSqlite3.Database,
  table: K,
  columns: ColumnSet<LedgerDatabase[K]>,
): Insert<LedgerDatabase[K]> {
  const names = Object.keys(columns);
  const statement = sqlite.prepare<[FullRow<LedgerDatabase[K]>]>(
    `insert into ${table} (${names.join(', ')}) values (${names.map((name) => `@${name}`).join(', ')})`,
  );
  return (row) => {
    statement.run(row);
  };
}

type EventPayload<E extends RatchetEvent> = Omit<E, keyof EventEnvelope | 'type'>;

function payloadOf<E extends RatchetEvent>(event: E): EventPayload<E> {
  const { id: _id, runId: _runId, timestamp: _timestamp, type: _type, ...payload } = event;
  return payload;
}

/** Event types that also write a typed row (so need a transaction even alone). */
const TYPED_EVENT_TYPES: ReadonlySet<EventType> = new Set<EventType>([
  'stage-start',
  'stage-end',
  'model-call',
  'tool-call',
  'verify-end',
  'checkpoint-create',
  ...SOLVE_EVENT_TYPES,
]);

/**
 * Writes events with statements prepared once per connection: one row in `events` plus, for
 * some types, one row in a typed table, atomically (one transaction per call; an event without
 * a typed row is a single statement and needs none). Synchronous on purpose, as better-sqlite3
 * is: nothing can interleave between an event and its typed row.
 *
 * `seq` numbers come from a per-run cache, loaded from the table on a run's first event. Should
 * another connection have written to the same run meanwhile, the insert hits the (run_id, seq)
 * key; the cache is then reloaded and the write retried once.
 */
export class EventWriter {
  readonly #redact: Redactor;
  readonly #writeBatch: (events: readonly RatchetEvent[]) => void;
  readonly #insertEvent: Insert<EventsTable>;
  readonly #lastSeq: BetterSqlite3.Statement<[string], { seq: number | null }>;
  readonly #insertStage: Insert<StagesTable>;
  readonly #closeStage: BetterSqlite3.Statement<
    [Pick<StagesTable, 'run_id' | 'cycle' | 'stage' | 'attempt' | 'outcome' | 'reason' | 'ended_at' | 'task'>]
  >;
  readonly #insertModelCall: Insert<ModelCallsTable>;
  readonly #insertMessage: BetterSqlite3.Statement<[string, string]>;
  /**
   * The hash of each message object already stored: a conversation's calls share their earlier
   * messages (the same objects, never changed once sent), so each is redacted, hashed and
   * written once, not once per call. Others (copies) are hashed again and found stored.
   */
  readonly #messageHashes = new WeakMap<object, string>();
  /** Hashes stored by the write in progress; known to `#messageHashes` once it commits. */
  readonly #pendingHashes = new Map<object, string>();
  readonly #insertToolCall: Insert<ToolCallsTable>;
  readonly #insertVerification: Insert<VerificationsTable>;
  readonly #insertCheckpoint: Insert<CheckpointsTable>;
  readonly #solveRows: SolveRows;
  /** Last committed seq per run. */
  readonly #seqs = new Map<string, number>();
  /** Seqs used by the write in progress; merged into `#seqs` once it commits. */
  readonly #pending = new Map<string, number>();

  constructor(sqlite: BetterSqlite3.Database, redact: Redactor) {
    this.#redact = redact;
    this.#insertEvent = prepareInsert(sqlite, 'events', {
      run_id: true,
      seq: true,
      id: true,
      type: true,
      timestamp: true,
      payload_json: true,
    });
    this.#lastSeq = sqlite.prepare('select max(seq) as seq from events where run_id = ?');
    this.#insertStage = prepareInsert(sqlite, 'stages', {
      run_id: true,
      cycle: true,
      stage: true,
      phase: true,
      attempt: true,
      outcome: true,
      reason: true,
      started_at: true,
      ended_at: true,
      task: true,
    });
    // Closes the latest open attempt with the same run, task, cycle, stage and attempt number.
    this.#closeStage = sqlite.prepare(
      `update stages set outcome = @outcome, reason = @reason, ended_at = @ended_at
       where id = (select id from stages
                   where run_id = @run_id and cycle = @cycle and stage = @stage and attempt = @attempt
                     and task is @task and ended_at is null
                   order by id desc limit 1)`,
    );
    this.#insertModelCall = prepareInsert(sqlite, 'model_calls', {
      run_id: true,
      seq: true,
      stage: true,
      provider: true,
      model: true,
      request_json: true,
      message_hashes_json: true,
      response_json: true,
      finish_reason: true,
      input_tokens: true,
      output_tokens: true,
      cost_usd: true,
      latency_ms: true,
      error_code: true,
      error: true,
      created_at: true,
    });
    this.#insertMessage = sqlite.prepare('insert or ignore into model_messages (hash, message_json) values (?, ?)');
    this.#insertToolCall = prepareInsert(sqlite, 'tool_calls', {
      run_id: true,
      seq: true,
      stage: true,
      tool: true,
      input_json: true,
      output: true,
      is_error: true,
      duration_ms: true,
      created_at: true,
    });
    this.#insertVerification = prepareInsert(sqlite, 'verifications', {
      run_id: true,
      seq: true,
      stage: true,
      kind: true,
      command: true,
      exit_code: true,
      timed_out: true,
      duration_ms: true,
      passed: true,
      failed: true,
      skipped: true,
      total: true,
      ok: true,
      failing_tests_json: true,
      collection_errors_json: true,
      output_file: true,
      created_at: true,
    });
    this.#insertCheckpoint = prepareInsert(sqlite, 'checkpoints', {
      run_id: true,
      seq: true,
      stage: true,
      phase: true,
      commit_sha: true,
      subject: true,
      created_at: true,
    });
    this.#solveRows = new SolveRows(sqlite, redact);
    this.#writeBatch = sqlite.transaction((events: readonly RatchetEvent[]) => {
      for (const event of events) this.#write(event);
    });
  }

  /** Writes the events in order, all or nothing. */
  write(events: readonly RatchetEvent[]): void {
    try {
      this.#writeOnce(events);
    } catch (error) {
      if (sqliteCode(error) !== 'SQLITE_CONSTRAINT_PRIMARYKEY') throw error;
      this.#seqs.clear();
      this.#writeOnce(events);
    }
  }

  #writeOnce(events: readonly RatchetEvent[]): void {
    if (events.length === 0) return;
    this.#pending.clear();
    this.#pendingHashes.clear();
    const [only] = events;
    if (events.length === 1 && only !== undefined && !TYPED_EVENT_TYPES.has(only.type)) this.#write(only);
    else this.#writeBatch(events);
    for (const [runId, seq] of this.#pending) this.#seqs.set(runId, seq);
    for (const [message, hash] of this.#pendingHashes) this.#messageHashes.set(message, hash);
    this.#pendingHashes.clear();
  }

  #nextSeq(runId: string): number {
    const last = this.#pending.get(runId) ?? this.#seqs.get(runId) ?? this.#lastSeq.get(runId)?.seq ?? 0;
    this.#pending.set(runId, last + 1);
    return last + 1;
  }

  #json(value: unknown): string {
    return JSON.stringify(redactValue(value, this.#redact)) ?? 'null';
  }

  #event(event: RatchetEvent, payload: object): number {
    const seq = this.#nextSeq(event.runId);
    this.#insertEvent({
      run_id: event.runId,
      seq,
      id: event.id,
      type: event.type,
      timestamp: event.timestamp,
      payload_json: this.#json(payload),
    });
    return seq;
  }

  #write(event: RatchetEvent): void {
    switch (event.type) {
      case 'model-delta':
        return;
      case 'stage-start':
        this.#event(event, payloadOf(event));
        return this.#stageStart(event);
      case 'stage-end':
        this.#event(event, payloadOf(event));
        return this.#stageEnd(event);
      case 'model-call': {
        const { request, response, ...rest } = payloadOf(event);
        const seq = this.#event(event, rest);
        return this.#modelCall(event, seq, request, response);
      }
      case 'tool-call': {
        const { input, output, ...rest } = payloadOf(event);
        const seq = this.#event(event, rest);
        return this.#toolCall(event, seq, input, output);
      }
      case 'verify-end':
        return this.#verification(event, this.#event(event, payloadOf(event)));
      case 'checkpoint-create':
        return this.#checkpoint(event, this.#event(event, payloadOf(event)));
      case 'solve-pass-start':
      case 'solve-pass-end':
      case 'solve-attempt-end':
      case 'solve-progress':
        return this.#solveRows.write(event, this.#event(event, payloadOf(event)));
      default:
        this.#event(event, payloadOf(event));
    }
  }

  #stageStart(event: EventOf<'stage-start'>): void {
    this.#insertStage({
      run_id: event.runId,
      cycle: event.cycle,
      stage: event.stage,
      phase: event.phase,
      attempt: event.attempt,
      outcome: null,
      reason: null,
      started_at: event.timestamp,
      ended_at: null,
      task: event.task ?? null,
    });
  }

  #stageEnd(event: EventOf<'stage-end'>): void {
    const closed = {
      run_id: event.runId,
      cycle: event.cycle,
      stage: event.stage,
      attempt: event.attempt,
      outcome: event.outcome,
      reason: event.reason === undefined ? null : this.#redact(event.reason),
      ended_at: event.timestamp,
      task: event.task ?? null,
    };
    if (this.#closeStage.run(closed).changes > 0) return;
    // No open attempt (e.g. a stage skipped without starting): record it as a closed attempt.
    this.#insertStage({
      ...closed,
      phase: event.phase,
      started_at: event.timestamp,
    });
  }

  #modelCall(
    event: EventOf<'model-call'>,
    seq: number,
    request: EventOf<'model-call'>['request'],
    response: EventOf<'model-call'>['response'],
  ): void {
    const { messages } = request;
    this.#insertModelCall({
      run_id: event.runId,
      seq,
      stage: event.stage,
      provider: event.provider,
      model: event.model,
      // `messages: null` keeps the key's place: the request reads back as it was sent.
      request_json: this.#json({ ...request, messages: null }),
      message_hashes_json: JSON.stringify(messages.map((message) => this.#message(message))),
      response_json: response === null ? null : this.#json(response),
      finish_reason: response?.finishReason ?? null,
      input_tokens: response?.usage.inputTokens ?? null,
      output_tokens: response?.usage.outputTokens ?? null,
      cost_usd: response?.costUsd ?? null,
      latency_ms: event.latencyMs,
      error_code: event.error?.code ?? null,
      error: event.error === null ? null : this.#redact(event.error.message),
      created_at: event.timestamp,
    });
  }

  /** Stores one message of a conversation (once: content-addressed); returns its hash. */
  #message(message: ModelMessage): string {
    const known = this.#messageHashes.get(message) ?? this.#pendingHashes.get(message);
    if (known !== undefined) return known;
    const json = this.#json(message);
    const hash = createHash('sha256').update(json).digest('hex');
    this.#insertMessage.run(hash, json);
    this.#pendingHashes.set(message, hash);
    return hash;
  }

  #toolCall(event: EventOf<'tool-call'>, seq: number, input: unknown, output: string): void {
    this.#insertToolCall({
      run_id: event.runId,
      seq,
      stage: event.stage,
      tool: event.tool,
      input_json: this.#json(input),
      output: this.#redact(output),
      is_error: event.isError ? 1 : 0,
      duration_ms: event.durationMs,
      created_at: event.timestamp,
    });
  }

  #verification(event: EventOf<'verify-end'>, seq: number): void {
    const parsed = parseVerificationResult(event.result);
    const { result } = parsed;
    const common = {
      run_id: event.runId,
      seq,
      stage: event.stage,
      kind: event.kind,
      command: this.#redact(result.command),
      exit_code: result.exitCode,
      timed_out: result.timedOut ? 1 : 0,
      duration_ms: result.durationMs,
      output_file: event.outputFile,
      created_at: event.timestamp,
    };
    if (parsed.type === 'check') {
      this.#insertVerification({
        ...common,
        passed: null,
        failed: null,
        skipped: null,
        total: null,
        ok: parsed.result.ok ? 1 : 0,
        failing_tests_json: '[]',
        collection_errors_json: '[]',
      });
      return;
    }
    const { counts, tests, collectionErrors } = parsed.result;
    const failing: FailingTest[] = tests
      .filter((test) => test.status === 'failed')
      .map((test) => ({
        id: test.id,
        kind: test.failureKind ?? null,
        message: test.message ?? null,
      }));
    this.#insertVerification({
      ...common,
      passed: counts.passed,
      failed: counts.failed,
      skipped: counts.skipped,
      total: counts.total,
      ok: null,
      failing_tests_json: this.#json(failing),
      collection_errors_json: this.#json(collectionErrors),
    });
  }

  #checkpoint(event: EventOf<'checkpoint-create'>, seq: number): void {
    this.#insertCheckpoint({
      run_id: event.runId,
      seq,
      stage: event.stage,
      phase: event.phase,
      commit_sha: event.commit,
      subject: this.#redact(event.subject),
      created_at: event.timestamp,
    });
  }
}
