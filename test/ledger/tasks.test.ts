import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, openLedger, type NewTask } from '../../src/ledger/index.js';
import { useLedger, useTempDir } from './helpers.js';

function newTask(key: string, fields: Partial<NewTask> = {}): NewTask {
  return {
    key,
    title: `Task ${key}`,
    goal: `Build ${key}`,
    acceptanceCriteria: [`${key} works`],
    testFile: `test/${key}.test.ts`,
    implFile: `src/${key}.ts`,
    dependsOn: [],
    exports: [],
    ...fields,
  };
}

describe('ledger: tasks, their stage attempts and model calls', () => {
  const fixture = useLedger();

  it('records a tasks file once, in file order, and keeps tasks as they are when it is recorded again', async () => {
    const { tasks } = fixture.ledger;
    await tasks.addTasks('run-1', [newTask('B', { dependsOn: ['A'], exports: ['b'] }), newTask('A')]);
    await tasks.updateTask('run-1', 'A', { status: 'merged', attempts: 1, mergeCommit: 'abc' });
    await tasks.addTasks('run-1', [newTask('B', { title: 'changed' }), newTask('A')]);

    const rows = await tasks.tasks('run-1');
    expect(rows.map((row) => [row.key, row.position, row.status, row.title])).toEqual([
      ['B', 0, 'pending', 'Task B'],
      ['A', 1, 'merged', 'Task A'],
    ]);
    expect(rows[0]).toMatchObject({ dependsOn: ['A'], exports: ['b'], acceptanceCriteria: ['B works'], attempts: 0 });
    expect(await tasks.tasks('run-2')).toEqual([]);
  });

  it('updates a task and refuses one the run does not have', async () => {
    const { tasks } = fixture.ledger;
    await tasks.addTasks('run-1', [newTask('A')]);
    const row = await tasks.updateTask('run-1', 'A', { status: 'blocked', reason: 'merge conflict in src/A.ts' });
    expect(row).toMatchObject({ status: 'blocked', reason: 'merge conflict in src/A.ts' });
    expect((await tasks.updateTask('run-1', 'A', { reason: null })).reason).toBeNull();
    await expect(tasks.updateTask('run-1', 'Z', { status: 'failed' })).rejects.toMatchObject({ code: 'not-found' });
  });

  it('stores a REFACTOR attempt, and one row per attempt however often its start and end arrive', async () => {
    const { tasks } = fixture.ledger;
    const attempt = { runId: 'run-1', taskKey: 'A', stage: 'refactor' as const, attemptNumber: 1, startedAt: 't1' };
    await tasks.recordAttempt({ ...attempt, worker: 'w1' });
    await tasks.recordAttempt({ ...attempt, completedAt: 't2', durationMs: 5, success: false, errorMessage: 'red' });
    // The stream replayed: the start again must not reopen it.
    await tasks.recordAttempt({ ...attempt, worker: 'w2' });
    await tasks.recordAttempt({ ...attempt, stage: 're_verify', startedAt: 't3' });

    const rows = await tasks.attempts('run-1', 'A');
    expect(rows.map((row) => [row.stage, row.attemptNumber, row.success, row.worker, row.errorMessage])).toEqual([
      ['refactor', 1, false, 'w1', 'red'],
      ['re_verify', 1, null, null, null],
    ]);
    expect(await tasks.attempts('run-1', 'B')).toEqual([]);
  });

  it('ignores a model call that arrives twice, and keeps calls of a retried delivery apart', async () => {
    const { tasks } = fixture.ledger;
    const call = { runId: 'run-1', taskKey: 'A', seq: 1, stage: 'red', model: 'm', createdAt: 't' };
    await tasks.recordInvocation(call);
    await tasks.recordInvocation({ ...call, inputTokens: 99 });
    await tasks.recordInvocation({ ...call, delivery: 2 });
    const rows = await tasks.invocations('run-1');
    expect(rows.map((row) => [row.delivery, row.seq, row.inputTokens])).toEqual([
      [1, 1, null],
      [2, 1, null],
    ]);
  });
});

describe('ledger migration 0004_tasks', () => {
  const temp = useTempDir();

  it('adds the task tables to a ledger written before it, keeping its runs (B4: an existing database)', async () => {
    const file = join(temp.dir, 'ledger.db');
    const first = await openLedger(file, { secrets: [] });
    await first.createRun({ id: 'run-old', workflow: 'tdd', repoRoot: temp.dir, feature: 'old' });
    await first.close();
    const raw = new BetterSqlite3(file);
    raw.exec(
      "drop table tasks; drop table task_attempts; drop table task_invocations; delete from kysely_migration where name = '0004_tasks'",
    );
    raw.close();

    await using ledger = await openLedger(file, { secrets: [] });
    expect((await ledger.getRun('run-old'))?.feature).toBe('old');
    await ledger.tasks.addTasks('run-old', [newTask('A')]);
    await ledger.tasks.recordAttempt({
      runId: 'run-old',
      taskKey: 'A',
      stage: 'refactor',
      attemptNumber: 1,
      startedAt: 't',
    });
    expect((await ledger.tasks.attempts('run-old')).map((row) => row.stage)).toEqual(['refactor']);
  });

  it('rebuilds a task_attempts table whose old CHECK constraint lacks refactor, keeping its rows (B4)', async () => {
    const file = join(temp.dir, 'ledger.db');
    await (await openLedger(file, { secrets: [] })).close();
    // The ledger as the seed's schema left it: the stage list of its CHECK has no 'refactor'.
    const raw = new BetterSqlite3(file);
    raw.exec(`
      drop table task_attempts;
      delete from kysely_migration where name = '0004_tasks';
      create table task_attempts (
        id integer primary key autoincrement,
        run_id text not null,
        task_key text not null,
        task_attempt integer not null default 1,
        stage text not null
          check(stage in ('red', 'red_fix', 'green', 'review', 'fix', 'verify', 're_verify', 'commit')),
        attempt_number integer not null,
        started_at text not null default current_timestamp,
        completed_at text,
        success integer,
        error_message text
      );
      create index task_attempts_run_task on task_attempts (run_id, task_key, id);
      insert into task_attempts (run_id, task_key, stage, attempt_number, started_at, success)
        values ('run-1', 'A', 'green', 1, 't1', 1), ('run-1', 'A', 'verify', 1, 't2', 0);
    `);
    expect(() =>
      raw
        .prepare(
          "insert into task_attempts (run_id, task_key, stage, attempt_number) values ('run-1', 'A', 'refactor', 1)",
        )
        .run(),
    ).toThrow(/CHECK constraint failed/);
    raw.close();

    await using ledger = await openLedger(file, { secrets: [] });
    await ledger.tasks.recordAttempt({
      runId: 'run-1',
      taskKey: 'A',
      stage: 'refactor',
      attemptNumber: 1,
      startedAt: 't3',
    });
    const rows = await ledger.tasks.attempts('run-1', 'A');
    expect(rows.map((row) => [row.stage, row.startedAt, row.success, row.taskAttempt])).toEqual([
      ['green', 't1', true, 1],
      ['verify', 't2', false, 1],
      ['refactor', 't3', null, 1],
    ]);
    const check = new BetterSqlite3(file, { readonly: true });
    try {
      const tables = check
        .prepare<[], { name: string }>(
          "select name from sqlite_master where type = 'table' and name like 'task_attempts%'",
        )
        .all();
      expect(tables.map((table) => table.name)).toEqual(['task_attempts']);
      const indexes = check
        .prepare<[], { name: string }>(
          "select name from sqlite_master where type = 'index' and tbl_name = 'task_attempts' and sql is not null",
        )
        .all();
      expect(indexes.map((index) => index.name)).toEqual(['task_attempts_run_task']);
      expect(
        check
          .prepare<[], { name: string }>('select name from kysely_migration order by name')
          .all()
          .map((row) => row.name),
      ).toEqual(Object.keys(MIGRATIONS).sort());
    } finally {
      check.close();
    }
  });
});
