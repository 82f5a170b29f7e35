import { existsSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, openLedger } from '../../src/ledger/index.js';
import { newRun, useTempDir } from './helpers.js';

const TABLES = [
  'checkpoints',
  'events',
  'model_calls',
  'model_messages',
  'runs',
  // 0005_solve_trace (seed 004's orchestrator_runs, orchestrator_passes, run_attempts, validation_results).
  'solve_attempts',
  'solve_passes',
  'solve_runs',
  'solve_validations',
  'stages',
  'task_attempts',
  'task_invocations',
  'tasks',
  'tool_calls',
  'verifications',
];

function inspect(file: string): {
  tables: string[];
  migrations: string[];
  journalMode: unknown;
} {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const tables = db
      .prepare<[], { name: string }>(
        "select name from sqlite_master where type = 'table' and name not like 'kysely%' and name not like 'sqlite%' order by name",
      )
      .all()
      .map((row) => row.name);
    const migrations = db
      .prepare<[], { name: string }>('select name from kysely_migration order by name')
      .all()
      .map((row) => row.name);
    return {
      tables,
      migrations,
      journalMode: db.pragma('journal_mode', { simple: true }),
    };
  } finally {
    db.close();
  }
}

describe('ledger migrations', () => {
  const temp = useTempDir();

  it('creates the parent directory and every table on a fresh file, in WAL mode', async () => {
    const file = join(temp.dir, 'repo', '.ratchet', 'ledger.db');
    const ledger = await openLedger(file, { secrets: [] });
    await ledger.close();

    expect(existsSync(file)).toBe(true);
    const state = inspect(file);
    expect(state.tables).toEqual(TABLES);
    expect(state.migrations).toEqual(Object.keys(MIGRATIONS).sort());
    expect(state.migrations[0]).toBe('0001_initial');
    expect(state.journalMode).toBe('wal');
  });

  it('re-opens an existing ledger without re-running migrations and keeps its data', async () => {
    const file = join(temp.dir, 'ledger.db');
    const first = await openLedger(file, { secrets: [] });
    await first.createRun(newRun('run-1', { repoRoot: temp.dir, feature: 'add' }));
    await first.close();

    for (let i = 0; i < 2; i++) {
      await using ledger = await openLedger(file, { secrets: [] });
      expect((await ledger.getRun('run-1'))?.feature).toBe('add');
    }
    expect(inspect(file).migrations).toEqual(Object.keys(MIGRATIONS).sort());
  });

  it('brings a ledger written before 0002_final_commit up to date, keeping its runs', async () => {
    const file = join(temp.dir, 'ledger.db');
    const first = await openLedger(file, { secrets: [] });
    await first.createRun(newRun('run-old', { repoRoot: temp.dir, feature: 'old' }));
    await first.close();
    // Make it the ledger an earlier Ratchet wrote: no final_commit column, nothing of 0002 and later.
    const raw = new BetterSqlite3(file);
    raw.exec(
      [
        'alter table runs drop column final_commit',
        'drop table model_messages',
        'alter table model_calls drop column message_hashes_json',
        'drop table solve_validations',
        'drop table solve_attempts',
        'drop table solve_passes',
        'drop table solve_runs',
        'drop table tasks',
        'drop table task_attempts',
        'drop table task_invocations',
        "delete from kysely_migration where name in ('0002_final_commit', '0003_model_messages', '0004_tasks', '0005_solve_trace')",
      ].join('; '),
    );
    raw.close();

    await using ledger = await openLedger(file, { secrets: [] });
    expect(inspect(file).migrations).toEqual(Object.keys(MIGRATIONS).sort());
    expect(await ledger.getRun('run-old')).toMatchObject({ feature: 'old', finalCommit: null });
    expect(await ledger.updateRun('run-old', { status: 'accepted', finalCommit: 'abc123' })).toMatchObject({
      finalCommit: 'abc123',
    });
  });

  it('lets two connections open a fresh file at once', async () => {
    const file = join(temp.dir, 'ledger.db');
    const [a, b] = await Promise.all([openLedger(file, { secrets: [] }), openLedger(file, { secrets: [] })]);
    await a.createRun(newRun('run-a', { repoRoot: temp.dir, feature: 'x' }));
    expect((await b.getRun('run-a'))?.id).toBe('run-a');
    await a.close();
    await b.close();
    expect(inspect(file).migrations).toEqual(Object.keys(MIGRATIONS).sort());
  });

  it('refuses a ledger migrated by a newer Ratchet, saying what to do', async () => {
    const file = join(temp.dir, 'ledger.db');
    await (await openLedger(file, { secrets: [] })).close();
    const raw = new BetterSqlite3(file);
    raw
      .prepare("insert into kysely_migration (name, timestamp) values ('9999_from_the_future', ?)")
      .run(new Date().toISOString());
    raw.close();
    await expect(openLedger(file, { secrets: [] })).rejects.toMatchObject({
      code: 'internal',
      hint: expect.stringContaining('upgrade Ratchet') as unknown,
    });
  });

  it('supports an in-memory ledger', async () => {
    await using ledger = await openLedger(':memory:', { secrets: [] });
    expect(ledger.file).toBe(':memory:');
    await ledger.createRun(newRun('run-m', { feature: 'mem' }));
    expect((await ledger.listRuns()).map((run) => run.id)).toEqual(['run-m']);
  });

  it('fails with a typed error and a hint when the file is not a database', async () => {
    const file = join(temp.dir, 'ledger.db');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(file, 'this is not a sqlite database, just some text that is long enough '.repeat(100));
    await expect(openLedger(file, { secrets: [] })).rejects.toMatchObject({
      name: 'RatchetError',
      code: 'internal',
      hint: expect.stringContaining('move it aside') as unknown,
    });
  });

  it('is closed by close() and by await using, and rejects use after close', async () => {
    const file = join(temp.dir, 'ledger.db');
    const ledger = await openLedger(file, { secrets: [] });
    await ledger.close();
    await ledger.close();
    await expect(ledger.getRun('x')).rejects.toMatchObject({
      code: 'internal',
    });
    await expect(
      ledger.record({
        type: 'log',
        message: 'late',
        id: 'r:1',
        runId: 'r',
        timestamp: new Date(0).toISOString(),
      }),
    ).rejects.toMatchObject({ code: 'internal' });
  });
});
