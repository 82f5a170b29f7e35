import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { oneBatchBrain, REFACTOR_FILES, refactorBrain } from '../support/refactor-js-fixture.js';
import { assertFreshBuild, describeResult, runCli, type CliResult } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

/**
 * `ratchet refactor rollback` of one of two runs accepted in sequence on one repository (run A,
 * a commit of the user's, run B): a run's backup is from before it, so rolling back A would undo
 * B too, and restoring B's backup once A is rolled back would bring A's changes back. Both are
 * refused and named unless --force, which then says so (and marks B rolled back with A).
 */

/** Run B's plan and patch: one batch that swaps the imports of src/app.js. */
const REORDER_IMPORTS = `diff --git a/src/app.js b/src/app.js
--- a/src/app.js
+++ b/src/app.js
@@ -1,4 +1,4 @@
-import { add, mul } from './math.js';
+import { mul, add } from './math.js';
 
 export function total(xs) {
   return xs.reduce((sum, x) => add(sum, mul(x, 1)), 0);
`;

const secondRunBrain = oneBatchBrain(
  { goal: 'Reorder imports', scope: ['src/app.js'], budget: 30 },
  { diff: REORDER_IMPORTS, files: ['src/app.js'], rationale: 'Alphabetical is not the point; this is a test.' },
);

const RollbackLine = z.looseObject({
  run: z.string(),
  status: z.literal('rolled-back'),
  backup: z.string(),
  previousState: z.string(),
  alsoRolledBack: z.array(z.string()),
  broughtBack: z.array(z.string()),
});

const StatusJson = z.looseObject({
  run: z.looseObject({ status: z.string() }),
  rollback: z
    .looseObject({
      backup: z.string(),
      safetyBackup: z.string(),
      previousStatus: z.string(),
      undoneBy: z.string().optional(),
    })
    .nullable(),
});

/** The subject is the refactor run, not the sandbox: where bubblewrap is missing the runs opt out. */
const sandbox = sandboxForThisMachine();

describe(`ratchet refactor rollback of one of two runs accepted in sequence${sandbox.note}`, () => {
  let server: FakeAnthropicServer;
  let fixture: TempRepo;
  let repo: string;
  let env: Record<string, string>;
  let runA = '';
  let runB = '';
  /** main before run A, after A's accept and the user's commit (B's start), and after B's accept. */
  let beforeA = '';
  let beforeB = '';
  let afterB = '';

  const ratchet = (...args: string[]): Promise<CliResult> => runCli(args, { cwd: repo, env });
  const head = (): string => fixture.run('rev-parse', 'main');
  const math = (): Promise<string> => readFile(join(repo, 'src', 'math.js'), 'utf8');
  const app = (): Promise<string> => readFile(join(repo, 'src', 'app.js'), 'utf8');
  const status = async (runId: string): Promise<z.infer<typeof StatusJson>> => {
    const result = await ratchet('status', runId, '--json');
    expect(result.exitCode, describeResult(result)).toBe(0);
    return StatusJson.parse(JSON.parse(result.stdout));
  };
  const backupOf = (runId: string): string => join(env.RATCHET_HOME ?? '', 'backups', 'repo', runId);
  const safetyBackups = (runId: string): string[] =>
    readdirSync(backupOf(runId)).filter((entry) => entry.startsWith('before-rollback-'));

  async function acceptedRun(): Promise<string> {
    const result = await ratchet(
      'refactor',
      'run',
      repo,
      '--provider',
      'anthropic',
      '--model',
      'claude-refactor-e2e',
      '--yes',
      '--json',
      ...sandbox.flags,
    );
    expect(result.exitCode, describeResult(result)).toBe(0);
    const start = result.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type: string; runId?: string })
      .find((event) => event.type === 'run-start');
    const runId = start?.runId ?? '';
    expect(runId).not.toBe('');
    const accepted = await ratchet('accept', runId);
    expect(accepted.exitCode, describeResult(accepted)).toBe(0);
    return runId;
  }

  beforeAll(async () => {
    assertFreshBuild();
    server = await startFakeAnthropicServer();
    fixture = await createTempRepo({ files: REFACTOR_FILES });
    repo = fixture.dir;
    env = {
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-refactor-chain-0000000000',
      RATCHET_HOME: fixture.path('ratchet-home'),
    };
    beforeA = head();
    server.setFallback(refactorBrain);
    runA = await acceptedRun();
    await writeFile(join(repo, 'NOTES.md'), 'written between the runs\n');
    fixture.run('add', 'NOTES.md');
    fixture.run('commit', '-q', '-m', 'notes');
    beforeB = head();
    server.setFallback(secondRunBrain);
    runB = await acceptedRun();
    afterB = head();
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    await fixture?.cleanup();
  });

  it('both runs are on main', async () => {
    expect(await math()).not.toContain('unusedHelper');
    expect(await app()).toContain("import { mul, add } from './math.js';");
    expect(fixture.run('log', '--format=%s', `${beforeA}..main`)).toContain('notes');
  });

  it('rolling back A refuses while B, accepted after it started, is still accepted, naming B', async () => {
    for (const args of [['--yes'], []]) {
      const refused = await ratchet('refactor', 'rollback', runA, ...args);
      expect(refused.exitCode, describeResult(refused)).toBe(2);
      expect(refused.stderr).toContain(
        `Rolling back run ${runA} would also undo run ${runB}, accepted after it started`,
      );
      expect(refused.stderr).toContain(
        `hint: Roll back the newest first: \`ratchet refactor rollback ${runB}\`; or pass --force to undo it too`,
      );
    }
    // Nothing changed: no backup of the current state either, and both runs are still accepted.
    expect(head()).toBe(afterB);
    expect(safetyBackups(runA)).toEqual([]);
    expect((await status(runA)).run.status).toBe('accepted');
    expect((await status(runB)).run.status).toBe('accepted');
  });

  it('asks, naming B, before rolling back A with --force', async () => {
    const unconfirmed = await ratchet('refactor', 'rollback', runA, '--force');
    expect(unconfirmed.exitCode, describeResult(unconfirmed)).toBe(2);
    expect(unconfirmed.stderr).toContain(
      `It also undoes run ${runB}, accepted after run ${runA} started: it is marked rolled back too.`,
    );
    expect(unconfirmed.stderr).toContain(`ratchet refactor rollback ${runA} --force --yes`);
    expect(head()).toBe(afterB);
  });

  it('rolling back A with --force undoes B too and marks it rolled back, with its own event', async () => {
    const result = await ratchet('refactor', 'rollback', runA, '--force', '--yes', '--json');
    expect(result.exitCode, describeResult(result)).toBe(0);
    const line = RollbackLine.parse(JSON.parse(result.stdout.trim().split('\n').at(-1) ?? ''));
    expect(line).toMatchObject({ run: runA, alsoRolledBack: [runB], broughtBack: [] });
    // The state it replaced was backed up first: B's accept is in that bundle.
    expect(
      execFileSync('git', ['bundle', 'list-heads', join(line.previousState, 'backup.bundle')], { encoding: 'utf8' }),
    ).toContain(afterB);
    expect(head()).toBe(beforeA);
    expect(await math()).toContain('unusedHelper');
    expect(await app()).toContain("import { add, mul } from './math.js';");

    const a = await status(runA);
    expect(a.run.status).toBe('rolled-back');
    expect(a.rollback).toMatchObject({ previousStatus: 'accepted', backup: backupOf(runA) });
    expect(a.rollback?.undoneBy).toBeUndefined();
    const b = await status(runB);
    expect(b.run.status).toBe('rolled-back');
    expect(b.rollback).toMatchObject({
      previousStatus: 'accepted',
      undoneBy: runA,
      backup: backupOf(runA),
      safetyBackup: line.previousState,
    });
    const plain = await ratchet('status', runB);
    expect(plain.stdout).toContain(`, undone by the rollback of run ${runA}:`);
  });

  it('rolling back B refuses: its backup holds the changes of A, which was rolled back', async () => {
    const refused = await ratchet('refactor', 'rollback', runB, '--yes');
    expect(refused.exitCode, describeResult(refused)).toBe(2);
    expect(refused.stderr).toContain(
      `The backup of run ${runB} holds the changes of run ${runA}, rolled back since (at `,
    );
    expect(refused.stderr).toContain('restoring it would bring them back on branch main');
    expect(refused.stderr).toContain(
      `Pass --force to restore the backup anyway (the changes of run ${runA} come back)`,
    );
    expect(head()).toBe(beforeA);
    expect(safetyBackups(runB)).toEqual([]);
  });

  it('rolling back B with --force restores its backup and says that A comes back', async () => {
    const result = await ratchet('refactor', 'rollback', runB, '--force', '--yes');
    expect(result.exitCode, describeResult(result)).toBe(0);
    expect(result.stdout).toContain(`run ${runB} is now rolled back`);
    expect(result.stdout).toContain(`The backup held the changes of run ${runA}, rolled back before (at `);
    expect(result.stdout).toContain(`they are back on branch main, and it stays marked rolled back.`);
    expect(head()).toBe(beforeB);
    expect(await math()).not.toContain('unusedHelper');
    expect(await app()).toContain("import { add, mul } from './math.js';");
    expect((await status(runA)).run.status).toBe('rolled-back');
    expect((await status(runB)).rollback).toMatchObject({ previousStatus: 'rolled-back', backup: backupOf(runB) });
  });

  it('a second rollback of A, with nothing accepted since, needs no --force', async () => {
    const result = await ratchet('refactor', 'rollback', runA, '--yes', '--json');
    expect(result.exitCode, describeResult(result)).toBe(0);
    expect(RollbackLine.parse(JSON.parse(result.stdout.trim().split('\n').at(-1) ?? ''))).toMatchObject({
      alsoRolledBack: [],
      broughtBack: [],
    });
    expect(head()).toBe(beforeA);
    expect(await math()).toContain('unusedHelper');
    expect(safetyBackups(runA)).toHaveLength(2);
  });
});

describe(`accepting a run whose branch started from a run rolled back since (built CLI)${sandbox.note}`, () => {
  it('refuses, naming that run, unless --force, which accepts it and says the changes are back', async () => {
    const server = await startFakeAnthropicServer();
    const fixture = await createTempRepo({ files: REFACTOR_FILES });
    try {
      const env = {
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'sk-ant-test-refactor-chain-0000000000',
        RATCHET_HOME: fixture.path('ratchet-home'),
      };
      const ratchet = (...args: string[]): Promise<CliResult> => runCli(args, { cwd: fixture.dir, env });
      const run = async (): Promise<string> => {
        const result = await ratchet(
          'refactor',
          'run',
          '--provider',
          'anthropic',
          '--model',
          'm',
          '--yes',
          '--json',
          ...sandbox.flags,
        );
        expect(result.exitCode, describeResult(result)).toBe(0);
        const start = result.stdout
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { type: string; runId?: string })
          .find((event) => event.type === 'run-start');
        return start?.runId ?? '';
      };
      server.setFallback(refactorBrain);
      const runA = await run();
      expect((await ratchet('accept', runA)).exitCode).toBe(0);
      server.setFallback(secondRunBrain);
      const runC = await run(); // Its branch starts from A's accepted changes.
      expect((await ratchet('refactor', 'rollback', runA, '--yes')).exitCode).toBe(0);
      const math = (): Promise<string> => readFile(join(fixture.dir, 'src', 'math.js'), 'utf8');
      expect(await math()).toContain('unusedHelper');

      const refused = await ratchet('accept', runC);
      expect(refused.exitCode, describeResult(refused)).toBe(2);
      expect(refused.stderr).toContain(
        `Accepting run ${runC} would bring back the changes of run ${runA} (rolled back at `,
      );
      expect(await math()).toContain('unusedHelper');

      const forced = await ratchet('accept', runC, '--force');
      expect(forced.exitCode, describeResult(forced)).toBe(0);
      expect(forced.stderr).toContain(`Warning: the changes of run ${runA} (rolled back at `);
      expect(await math()).not.toContain('unusedHelper');
    } finally {
      await server.close();
      await fixture.cleanup();
    }
  }, 180_000);
});
