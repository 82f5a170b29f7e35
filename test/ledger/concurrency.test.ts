import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/index.js';
import { eventFactory, newRun, useTempDir } from './helpers.js';

const RUN = 'run-wal';

describe('concurrent access (WAL)', () => {
  const temp = useTempDir();
  /** The current test's ledger file, in a directory that does not exist yet. */
  const ledgerFile = (): string => join(temp.dir, '.ratchet', 'ledger.db');

  it('lets a reader follow a run while the writer keeps the ledger open', async () => {
    const file = ledgerFile();
    await using writer = await openLedger(file, { secrets: [] });
    await writer.createRun(newRun(RUN));
    const ev = eventFactory(RUN);
    await writer.record(ev('stage-start', { stage: 'RED', phase: 'RED', attempt: 1, cycle: 1 }));

    await using reader = await openLedger(file, { secrets: [] });
    expect((await reader.getRun(RUN))?.status).toBe('running');
    expect(await reader.events(RUN)).toHaveLength(1);

    await writer.record(ev('stage-end', { stage: 'RED', phase: 'RED', attempt: 1, cycle: 1, outcome: 'accepted' }));
    await writer.updateRun(RUN, { status: 'completed' });
    expect(await reader.events(RUN)).toHaveLength(2);
    expect((await reader.stages(RUN))[0]?.outcome).toBe('accepted');
    expect((await reader.summary(RUN)).status).toBe('completed');
  });

  it('does not block readers while another connection holds an open write transaction', async () => {
    const file = ledgerFile();
    await using ledger = await openLedger(file, { secrets: [], busyTimeoutMs: 200 });
    await ledger.createRun(newRun(RUN));

    const other = new BetterSqlite3(file);
    try {
      other.exec('BEGIN IMMEDIATE');
      other
        .prepare(
          "insert into events (run_id, seq, id, type, timestamp, payload_json) values (?, 1, 'x', 'log', 't', '{}')",
        )
        .run(RUN);
      // The reader sees the last committed state, not the pending insert, and is not blocked.
      expect(await ledger.events(RUN)).toEqual([]);
      expect((await ledger.getRun(RUN))?.id).toBe(RUN);
      // A second writer waits for the lock and then fails with a retryable typed error.
      await expect(ledger.record(eventFactory(RUN)('log', { message: 'blocked' }))).rejects.toMatchObject({
        name: 'RatchetError',
        code: 'internal',
        retryable: true,
      });
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    await ledger.record(eventFactory(RUN)('log', { message: 'after' }));
    expect(await ledger.events(RUN)).toHaveLength(1);
  });

  it('does not block the writer while a reader holds an open read transaction', async () => {
    const file = ledgerFile();
    await using ledger = await openLedger(file, { secrets: [], busyTimeoutMs: 200 });
    await ledger.createRun(newRun(RUN));
    const ev = eventFactory(RUN);
    await ledger.record(ev('log', { message: 'one' }));

    const reader = new BetterSqlite3(file, { readonly: true });
    try {
      reader.exec('BEGIN');
      const count = reader.prepare<[string], { n: number }>('select count(*) as n from events where run_id = ?');
      expect(count.get(RUN)?.n).toBe(1);
      await ledger.record(ev('log', { message: 'two' }));
      // The reader's snapshot is stable; a new transaction sees the write.
      expect(count.get(RUN)?.n).toBe(1);
      reader.exec('COMMIT');
      expect(count.get(RUN)?.n).toBe(2);
    } finally {
      reader.close();
    }
  });

  it('keeps seq unique and ordered when two connections write to the same run', async () => {
    const file = ledgerFile();
    await using a = await openLedger(file, { secrets: [] });
    await using b = await openLedger(file, { secrets: [] });
    const ev = eventFactory(RUN);
    await a.record(ev('log', { message: 'a1' }));
    await b.record(ev('log', { message: 'b1' }));
    // `a` cached seq 1 for this run; its next write collides, reloads and lands after b's.
    await a.record(
      ev('tool-call', { stage: null, tool: 'Read', input: {}, output: 'a2', isError: false, durationMs: 1 }),
    );
    await b.recordMany([ev('log', { message: 'b2' }), ev('log', { message: 'b3' })]);
    await a.record(ev('log', { message: 'a3' }));

    const messages = (await b.events(RUN)).map((event) =>
      event.type === 'tool-call' ? event.output : event.type === 'log' ? event.message : '',
    );
    expect(messages).toEqual(['a1', 'b1', 'a2', 'b2', 'b3', 'a3']);
    expect((await a.toolCalls(RUN)).map((call) => call.seq)).toEqual([3]);
  });
});
