/**
 * End to end: `ratchet refactor run --provider claude-code` on a multi-module TypeScript
 * repository (tests by `node --test` on the .ts files), with the REAL `claude` binary talking to
 * the loopback fake Anthropic server, where the refactor brain plays the planner and the
 * patcher. The run goes through four batches: the first patch of batch-001 touches a file
 * outside the batch's scope and is refused by the admission checks; the first patch of
 * batch-002 applies but breaks the unit tests, so it is rolled back to batch-001's checkpoint;
 * both retries land; batch-003 lands first time and batch-004 is a noop. Then `accept` merges
 * the run and `refactor rollback` restores the repository exactly as it was before the run,
 * including an untracked file (the run started with --allow-dirty).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkoutState, type ProjectRepo } from '../support/e2e-run.js';
import { noopAnswer, type RefactorBrainScript } from '../support/refactor-brain.js';
import {
  batchEnds,
  expectBackup,
  field,
  INDEX_ARTIFACTS,
  patcherCalls,
  runRefactor,
  scriptedPatch,
  userTree,
  type RefactorRun,
} from '../support/refactor-e2e-run.js';
import {
  scriptPatches,
  TS_FILES,
  TS_STEPS,
  tsVerifiers,
  type FileMap,
  type ScriptedPatches,
} from '../support/refactor-fixtures.js';
import {
  branches,
  claudeEnv,
  configFile,
  createRefactorRepo,
  eventsOf,
  expectExit,
  isNonEmptyFile,
  ratchet,
  readRunOutput,
  refactorConfig,
  renderInChromium,
  runDirectory,
  startRefactorModel,
  subjects,
  type RefactorModel,
} from '../support/refactor-harness.js';
import { assertFreshBuild } from '../support/run-cli.js';
import { openLedger } from '../../src/ledger/ledger.js';
import type { EventOf } from '../../src/core/events.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { toolchain } from '../support/toolchains.js';

const GOALS = {
  'batch-001': 'Remove dead code in src/math.ts',
  'batch-002': 'Extract the row formatting of renderInvoice in src/invoice.ts',
  'batch-003': 'Add tests for src/report.ts',
  'batch-004': 'Tidy the re-exports of src/index.ts',
} as const;

function script(patches: ScriptedPatches): RefactorBrainScript {
  const patch = (batch: string, variant: string) => scriptedPatch(patches, batch, variant);
  return {
    planner: {
      kind: 'structured',
      batches: [
        {
          id: 'b1',
          goal: GOALS['batch-001'],
          scope_globs: ['src/math.ts'],
          allowed_operations: ['remove-dead-code'],
          diff_budget_loc: 30,
          risk_score: 10,
          verifier_level: 'fast',
          notes: 'legacyRound is unreferenced',
        },
        {
          id: 'b2',
          goal: GOALS['batch-002'],
          scope_globs: ['src/invoice.ts'],
          allowed_operations: ['extract-function'],
          diff_budget_loc: 40,
          risk_score: 25,
          verifier_level: 'fast',
        },
        {
          id: 'b3',
          goal: GOALS['batch-003'],
          scope_globs: ['src/report.ts', 'test/report.test.ts'],
          allowed_operations: ['add-tests'],
          diff_budget_loc: 40,
          risk_score: 30,
          verifier_level: 'full',
        },
        {
          id: 'b4',
          goal: GOALS['batch-004'],
          scope_globs: ['src/index.ts'],
          allowed_operations: ['rename'],
          diff_budget_loc: 10,
          risk_score: 5,
          verifier_level: 'fast',
        },
      ],
    },
    batches: {
      'batch-001': {
        goal: GOALS['batch-001'],
        first: patch('batch-001', 'outOfScope'),
        retry: patch('batch-001', 'good'),
      },
      'batch-002': {
        goal: GOALS['batch-002'],
        first: patch('batch-002', 'breaksTests'),
        retry: patch('batch-002', 'good'),
      },
      'batch-003': { goal: GOALS['batch-003'], first: patch('batch-003', 'good') },
      'batch-004': { goal: GOALS['batch-004'], first: noopAnswer('The re-exports are already minimal.') },
    },
  };
}

const SCRATCH = 'scratch/notes.md';
const SCRATCH_TEXT = 'my uncommitted notes: not part of any commit\n';

const TaskLedgerLine = z.looseObject({
  batch: z.string(),
  goal: z.string(),
  outcome: z.string(),
  attempts: z.number(),
  commit: z.string().nullable(),
});

const claude = toolchain('claude');
/** The subject is the refactor run, not the sandbox: where bubblewrap is missing the run opts out. */
const sandbox = sandboxForThisMachine();
/** Two tests render the report in headless Chromium. */
const chromium = toolchain('chromium');

describe.skipIf(claude.missing)(
  `ratchet refactor run on a TypeScript repository (real claude binary, scripted model)${claude.note}${sandbox.note}`,
  () => {
    let repo: ProjectRepo;
    let model: RefactorModel;
    let env: Record<string, string>;
    let patches: ScriptedPatches;
    let finalFiles: FileMap;
    let run: RefactorRun;
    let tip: string;

    beforeAll(async () => {
      assertFreshBuild();
      ({ patches, final: finalFiles } = await scriptPatches(TS_FILES, TS_STEPS));
      repo = await createRefactorRepo({ ...TS_FILES, ...configFile(refactorConfig(tsVerifiers(process.execPath))) });
      model = await startRefactorModel(script(patches));
      env = claudeEnv(repo, model.server);
      // An untracked file the user has lying around: --allow-dirty starts from HEAD without it,
      // and the backup keeps it.
      await mkdir(join(repo.dir, 'scratch'));
      await writeFile(join(repo.dir, SCRATCH), SCRATCH_TEXT);
      run = await runRefactor(repo, env, ['--allow-dirty', ...sandbox.flags]);
      tip = repo.run('rev-parse', run.branch);
    }, 180_000);

    afterAll(async () => {
      await model?.server.close();
      await repo?.cleanup();
    });

    /** The run's `backup-restore` events, as the ledger (`.ratchet/ledger.db`) stored them. */
    async function rollbackEvents(runId: string): Promise<Array<EventOf<'backup-restore'>>> {
      await using ledger = await openLedger(join(repo.dir, '.ratchet', 'ledger.db'), { secrets: [] });
      return (await ledger.events(runId, { types: ['backup-restore'] })).flatMap((event) =>
        event.type === 'backup-restore' ? [event] : [],
      );
    }

    it('completes every batch and exits 0, the model answering as scripted', () => {
      const { result, lines } = run;
      expectExit(result, 0);
      expect(model.brain.unexpected).toEqual([]);
      const report = lines.find((line) => line.type === 'report');
      expect(field(report, 'status')).toBe('completed');
      expect(
        field(
          lines.find((line) => line.type === 'run-end'),
          'status',
        ),
      ).toBe('completed');
      // The claude CLI's requests, as the brain understood them: the planner once, then the patcher
      // per batch and attempt, each retry carrying the feedback of the failed attempt.
      expect(patcherCalls(model.brain)).toEqual([
        'batch-001 first -',
        'batch-001 retry admission',
        'batch-002 first -',
        'batch-002 retry verifier',
        'batch-003 first -',
        'batch-004 first -',
      ]);
      expect(model.brain.callsOf('PLANNER')).toHaveLength(1);
    });

    it('plans from the index and lets the planner refine it', () => {
      const { result, lines } = run;
      const planner = model.brain.callsOf('PLANNER')[0];
      // The heuristic plan the planner was shown found the dead code, the long function and the
      // untested module.
      expect(planner?.prompt).toContain('Remove dead code in src/math.ts');
      expect(planner?.prompt).toContain('legacyRound');
      expect(planner?.prompt).toContain('Split long code in src/invoice.ts');
      expect(planner?.prompt).toContain('Add tests for src/report.ts');
      const plan = lines.find((line) => line.type === 'plan-create');
      expect(field(plan, 'source')).toBe('planner');
      expect(field(plan, 'batches')).toBe(4);
      expect(readRunOutput(result).plan.batches.map((batch) => `${batch.id} ${batch.goal}`)).toEqual(
        Object.entries(GOALS).map(([id, goal]) => `${id} ${goal}`),
      );
    });

    it('commits one checkpoint per landed batch on ratchet/<run-id>, ending with the scripted files', () => {
      const { beforeState, lines, branch } = run;
      const base = beforeState.head;
      expect(subjects(repo, `${base}..${branch}`)).toEqual([
        `checkpoint: batch-001 ${GOALS['batch-001']}`,
        `checkpoint: batch-002 ${GOALS['batch-002']}`,
        `checkpoint: batch-003 ${GOALS['batch-003']}`,
      ]);
      for (const [path, content] of Object.entries(finalFiles))
        expect(repo.run('show', `${branch}:${path}`), path).toBe(content.trimEnd());
      expect(batchEnds(lines)).toEqual([
        'batch-001 committed 2',
        'batch-002 committed 2',
        'batch-003 committed 1',
        'batch-004 noop 1',
      ]);
    });

    it('refuses the out-of-scope patch in the admission checks and lands the retry', () => {
      const { lines, branch } = run;
      const checks = eventsOf(lines, 'patch-check').filter((line) => field(line, 'batch') === 'batch-001');
      expect(checks.map((line) => field(line, 'admitted'))).toEqual([false, true]);
      const violations = z.array(z.string()).parse(field(checks[0], 'violations'));
      expect(violations.join('\n')).toMatch(/src\/invoice\.ts/);
      expect(violations.join('\n')).toMatch(/scope/i);
      // The retry's packet told the model why.
      const retry = model.brain
        .callsOf('PATCHER')
        .find((call) => call.batch === 'batch-001' && call.attempt === 'retry');
      expect(retry?.prompt).toContain('src/invoice.ts');
      // Nothing of the refused patch reached the branch.
      expect(repo.run('show', `${branch}:src/invoice.ts`)).toContain(
        '/** The invoice as plain text: one row per line, then the totals. */',
      );
    });

    it('rolls the patch that breaks the tests back to the last checkpoint, then lands the retry', () => {
      const { beforeState, lines, branch } = run;
      const [first, second, third] = subjects(repo, `${beforeState.head}..${branch}`).map((_, index) =>
        repo.run('rev-parse', `${branch}~${2 - index}`),
      );
      expect(third).toBe(tip);
      const rollbacks = eventsOf(lines, 'checkpoint-rollback');
      expect(rollbacks).toHaveLength(1);
      expect(field(rollbacks[0], 'to')).toBe(first);
      expect(String(field(rollbacks[0], 'reason'))).toContain('batch-002');
      // The failing fast verifier is on record.
      const failing = eventsOf(lines, 'verify-end').filter(
        (line) => z.object({ ok: z.boolean() }).safeParse(field(line, 'result')).data?.ok === false,
      );
      expect(failing).toHaveLength(1);
      // The retry saw the failing test output and the file as it is at the checkpoint: the worktree
      // was reset, the broken extraction is gone.
      const retry = model.brain
        .callsOf('PATCHER')
        .find((call) => call.batch === 'batch-002' && call.attempt === 'retry');
      expect(retry?.prompt).toContain('verifier failed');
      expect(retry?.prompt).toMatch(/renders the lines and the totals/);
      expect(retry?.prompt).toContain('const quantity = String(line.quantity).padStart(3);');
      expect(retry?.prompt).not.toContain('function formatRow');
      // batch-002's checkpoint sits directly on batch-001's.
      expect(repo.run('rev-parse', `${String(second)}~1`)).toBe(first);
    });

    it('backs the repository up before the run: git bundle and tar.gz snapshot', () => {
      const { beforeState, lines, runId } = run;
      const backup = expectBackup(repo, runId);
      expect(repo.run('bundle', 'list-heads', join(backup, 'backup.bundle'))).toContain(
        `${beforeState.head} refs/heads/main`,
      );
      const listing = execFileSync('tar', ['-tzf', join(backup, 'snapshot.tar.gz')], { encoding: 'utf8' });
      expect(listing).toContain(SCRATCH);
      expect(listing).toContain('src/invoice.ts');
      expect(listing).not.toMatch(/^\.\/\.git\//m);
      expect(
        field(
          lines.find((line) => line.type === 'backup-create'),
          'directory',
        ),
      ).toBe(backup);
    });

    it('writes the index artifacts and one task-ledger line per batch', async () => {
      const { runId } = run;
      const artifacts = join(runDirectory(repo.dir, runId), 'artifacts');
      for (const name of INDEX_ARTIFACTS) expect(isNonEmptyFile(join(artifacts, name)), name).toBe(true);
      for (const name of [
        'SYMBOL_REGISTRY.json',
        'DEPENDENCY_GRAPH.json',
        'CALL_GRAPH.json',
        'RISK_REGISTER.json',
        'CONTRACTS/public_api_snapshot.json',
      ]) {
        expect(() => JSON.parse(readFileSync(join(artifacts, name), 'utf8')) as unknown, name).not.toThrow();
      }
      expect(await readFile(join(artifacts, 'SYMBOL_REGISTRY.json'), 'utf8')).toContain('renderInvoice');
      expect(await readFile(join(artifacts, 'DEPENDENCY_GRAPH.json'), 'utf8')).toContain('src/math.ts');
      const entries = (await readFile(join(artifacts, 'TASK_LEDGER.jsonl'), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((line) => TaskLedgerLine.parse(JSON.parse(line)));
      expect(entries.map((entry) => `${entry.batch} ${entry.outcome} ${entry.attempts}`)).toEqual([
        'batch-001 committed 2',
        'batch-002 committed 2',
        'batch-003 committed 1',
        'batch-004 noop 1',
      ]);
      expect(entries[2]?.commit).toBe(tip);
    });

    it('records every claude call in the ledger with its cost', () => {
      const { ledger } = run;
      expect(ledger.run?.status).toBe('completed');
      expect(ledger.run?.provider).toBe('claude-code');
      const calls = ledger.modelCalls;
      expect(calls.map((call) => call.stage)).toEqual([
        'PLANNER',
        'PATCHER',
        'PATCHER',
        'PATCHER',
        'PATCHER',
        'PATCHER',
        'PATCHER',
      ]);
      for (const call of calls) {
        expect(call.provider).toBe('claude-code');
        expect(call.costUsd ?? 0).toBeGreaterThan(0);
        expect(call.error).toBeNull();
      }
      // The secret never reaches the ledger.
      expect(JSON.stringify(calls)).not.toContain(env.ANTHROPIC_API_KEY);
    });

    it.skipIf(chromium.missing)(
      `writes report.md and a report.html that renders in headless Chromium${chromium.note}`,
      async () => {
        const { runId, ledger } = run;
        const dir = runDirectory(repo.dir, runId);
        const markdown = await readFile(join(dir, 'report.md'), 'utf8');
        expect(markdown).toContain('## Batches');
        expect(markdown).toMatch(/\| batch-001 \| committed \| 2 \|/);
        expect(markdown).toMatch(/\| batch-004 \| noop \| 1 \|/);
        expect(markdown).toContain('Patches rejected by the admission checks');
        // The model is the one Claude Code reports using (none was configured, so no --model).
        const used = ledger.modelCalls[0]?.model ?? '';
        expect(used).not.toBe('');
        expect(ledger.run?.model).toBeNull();
        expect(markdown).toContain(`| Provider | claude-code \`${used}\` |`);
        expect(markdown).toMatch(/\| Cost \| \$\d+\.\d{4} \|/);
        expect(markdown).toContain(`| \`${tip.slice(0, 8)}\` | checkpoint: batch-003 ${GOALS['batch-003']} |`);
        const dom = await renderInChromium(join(dir, 'report.html'));
        expect(dom).toContain('<table id="batches">');
        const batchesTable = dom.slice(
          dom.indexOf('<table id="batches">'),
          dom.indexOf('</table>', dom.indexOf('<table id="batches">')),
        );
        for (const id of Object.keys(GOALS)) expect(batchesTable).toContain(id);
        expect(batchesTable).toContain('committed');
        expect(batchesTable).toContain('noop');
      },
    );

    it("leaves the user's checkout untouched until accept", () => {
      const { beforeState, beforeTree, beforeBranches, branch } = run;
      expect(checkoutState(repo)).toEqual(beforeState);
      expect(userTree(repo)).toEqual(beforeTree);
      expect(branches(repo)).toEqual([...beforeBranches, `${branch} ${tip}`].sort());
    });

    it('accept merges the run into main and removes its worktree and branch', async () => {
      const { lines, runId } = run;
      // Accept wants a clean checkout: the user puts the scratch file aside first.
      await rename(join(repo.dir, SCRATCH), repo.path('notes-aside.md'));
      const worktree = z.string().parse(
        field(
          lines.find((line) => line.type === 'run-start'),
          'worktree',
        ),
      );
      expect(existsSync(worktree)).toBe(true);
      const accepted = await ratchet(['accept', runId, '--json'], repo.dir, env);
      expectExit(accepted, 0);
      expect(repo.run('rev-parse', 'HEAD')).toBe(tip);
      expect(repo.run('rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
      expect(repo.run('status', '--porcelain', '--untracked-files=all')).toBe('');
      expect(existsSync(worktree)).toBe(false);
      expect(branches(repo)).toEqual([`main ${tip}`]);
      for (const [path, content] of Object.entries(finalFiles))
        expect(await readFile(join(repo.dir, path), 'utf8'), path).toBe(content);
    });

    it('reject of the accepted run names refactor rollback, and status no longer lists its worktree', async () => {
      const { lines, runId } = run;
      const worktree = z.string().parse(
        field(
          lines.find((line) => line.type === 'run-start'),
          'worktree',
        ),
      );
      const refused = await ratchet(['reject', runId], repo.dir, env);
      expectExit(refused, 2);
      expect(refused.stderr).toContain(`Run ${runId} was already accepted into main; it cannot be rejected.`);
      expect(refused.stderr).toContain(`hint: Undo it with \`ratchet refactor rollback ${runId}\``);
      expect(refused.stderr).not.toContain('git revert');
      expect(repo.run('rev-parse', 'HEAD')).toBe(tip);
      // The worktree accept removed is not listed as if it were still there.
      const status = await ratchet(['status', runId], repo.dir, env);
      expectExit(status, 0);
      expect(status.stdout).toContain('accepted, the branch was removed');
      expect(status.stdout).not.toMatch(/^\s*worktree\b/m);
      expect(status.stdout).not.toContain(worktree);
      const json = z
        .looseObject({ run: z.looseObject({ status: z.string() }), worktree: z.string().nullable() })
        .parse(JSON.parse((await ratchet(['status', runId, '--json'], repo.dir, env)).stdout));
      expect(json).toMatchObject({ run: { status: 'accepted' }, worktree: null });
    });

    it('refactor rollback after the accept restores the repository exactly as it was before the run', async () => {
      const { beforeState, beforeTree, beforeBranches, runId } = run;
      // Work done since the run is what a rollback replaces: it asks first, and without a terminal
      // it takes --yes.
      await writeFile(join(repo.dir, 'LATER.md'), 'written after the accept\n');
      repo.run('add', 'LATER.md');
      repo.run('commit', '-q', '-m', 'later work');
      const later = repo.run('rev-parse', 'HEAD');
      const unconfirmed = await ratchet(['refactor', 'rollback', runId], repo.dir, env);
      expectExit(unconfirmed, 2);
      expect(unconfirmed.stderr).toContain('--yes');
      expect(repo.run('rev-parse', 'HEAD')).toBe(later);

      const rolledBack = await ratchet(['refactor', 'rollback', runId, '--yes', '--json'], repo.dir, env);
      expectExit(rolledBack, 0);
      // ... and keeps the state it replaced: the later commit is in the new backup's bundle.
      const previous = RollbackLine.parse(JSON.parse(rolledBack.stdout.trim().split('\n').at(-1) ?? ''));
      expect(previous).toMatchObject({ run: runId, status: 'rolled-back', branch: 'main' });
      expect(
        execFileSync('git', ['bundle', 'list-heads', join(previous.previousState, 'backup.bundle')], {
          encoding: 'utf8',
        }),
      ).toContain(later);
      expect(checkoutState(repo)).toEqual(beforeState);
      expect(userTree(repo)).toEqual(beforeTree);
      expect(await readFile(join(repo.dir, SCRATCH), 'utf8')).toBe(SCRATCH_TEXT);
      expect(branches(repo)).toEqual(beforeBranches);
    });

    it.skipIf(chromium.missing)(
      `records the rollback: status, history and report say when, and where the state it replaced is kept${chromium.note}`,
      async () => {
        const { runId } = run;
        const [restore] = await rollbackEvents(runId);
        expect(restore).toMatchObject({ branch: 'main', previousStatus: 'accepted' });
        const at = restore?.timestamp ?? '';
        const kept = restore?.safetyBackup ?? '';
        expect(kept).toMatch(/before-rollback-/);
        expect(existsSync(kept)).toBe(true);

        const status = await ratchet(['status', runId], repo.dir, env);
        expectExit(status, 0);
        expect(status.stdout).toContain(`rolled back at ${at}`);
        expect(status.stdout).toContain(
          `(it was accepted): ${restore?.target ?? ''} restored from ${restore?.backup ?? ''}`,
        );
        expect(status.stdout).toContain(`the state it replaced is kept in ${kept}`);
        expect(status.stdout).toContain('rolled back, the branch was removed');
        expect(status.stdout).not.toContain('rejected, the branch was removed');
        expect(status.stdout).not.toMatch(/^\s*worktree\b/m);
        const statusJson = z
          .looseObject({
            run: z.looseObject({ status: z.string() }),
            worktree: z.string().nullable(),
            rollback: BackupRestore.nullable(),
          })
          .parse(JSON.parse((await ratchet(['status', runId, '--json'], repo.dir, env)).stdout));
        expect(statusJson).toMatchObject({ run: { status: 'rolled-back' }, worktree: null, rollback: restore });

        const history = await ratchet(['history', runId], repo.dir, env);
        expectExit(history, 0);
        expect(history.stdout).toContain(`Run ${runId} was rolled back at ${at} (it was accepted)`);
        expect(history.stdout).toContain(kept);
        const historyJson = z
          .looseObject({
            runs: z.array(z.looseObject({ id: z.string(), status: z.string() })),
            rollbacks: z.array(BackupRestore),
          })
          .parse(JSON.parse((await ratchet(['history', '--json'], repo.dir, env)).stdout));
        expect(historyJson.runs.find((entry) => entry.id === runId)?.status).toBe('rolled-back');
        expect(historyJson.rollbacks).toEqual([restore]);

        const report = await ratchet(['report', runId], repo.dir, env);
        expectExit(report, 0);
        expect(report.stdout).toContain('| Status | **rolled-back** |');
        expect(report.stdout).toContain(`| Rolled back | at ${at} (it was accepted): `);
        expect(report.stdout).toContain(`the state it replaced is kept in ${kept} |`);
        expect(report.stdout).not.toContain('**rejected**');
        const reportJson = z
          .looseObject({ status: z.string(), rollback: BackupRestore.nullable(), html: z.string() })
          .parse(JSON.parse((await ratchet(['report', runId, '--json'], repo.dir, env)).stdout));
        expect(reportJson).toMatchObject({ status: 'rolled-back', rollback: restore });
        const dom = await renderInChromium(reportJson.html);
        expect(dom).toContain(`<td>Rolled back</td><td>at ${at} (it was accepted): `);
        expect(dom).toContain(kept);
      },
    );

    it('refuses to accept, reject, resume or trim the rolled-back run, saying when it was rolled back', async () => {
      const { beforeState, runId } = run;
      const [restore] = await rollbackEvents(runId);
      for (const args of [
        ['accept', runId],
        ['accept', runId, '--force'],
        ['reject', runId],
        ['resume', runId],
        ['rollback', runId],
      ]) {
        const refused = await ratchet(args, repo.dir, env);
        expectExit(refused, 2);
        expect(refused.stderr, args.join(' ')).toContain(
          `Run ${runId} was rolled back at ${restore?.timestamp ?? ''} (\`ratchet refactor rollback\`)`,
        );
        expect(refused.stderr, args.join(' ')).toContain(`kept in ${restore?.safetyBackup ?? ''}`);
      }
      expect(checkoutState(repo)).toEqual(beforeState);
    });

    it('a second refactor rollback restores the same backup again, backing up first', async () => {
      const { beforeState, beforeTree, beforeBranches, runId } = run;
      const unconfirmed = await ratchet(['refactor', 'rollback', runId], repo.dir, env);
      expectExit(unconfirmed, 2);
      expect(unconfirmed.stderr).toContain(`Run ${runId} was already rolled back at `);
      const again = await ratchet(['refactor', 'rollback', runId, '--yes', '--json'], repo.dir, env);
      expectExit(again, 0);
      const second = RollbackLine.parse(JSON.parse(again.stdout.trim().split('\n').at(-1) ?? ''));
      expect(existsSync(second.previousState)).toBe(true);
      expect(checkoutState(repo)).toEqual(beforeState);
      expect(userTree(repo)).toEqual(beforeTree);
      expect(branches(repo)).toEqual(beforeBranches);
      const rollbacks = await rollbackEvents(runId);
      expect(rollbacks.map((event) => event.previousStatus)).toEqual(['accepted', 'rolled-back']);
      expect(rollbacks[1]).toMatchObject({ timestamp: second.rolledBackAt, safetyBackup: second.previousState });
      const status = await ratchet(['status', runId], repo.dir, env);
      expect(status.stdout).toContain(`rolled back at ${second.rolledBackAt}`);
      expect(status.stdout).toContain(`(again)`);
    });
  },
);

/** The last line of `refactor rollback --json`. */
const RollbackLine = z.looseObject({
  run: z.string(),
  status: z.string(),
  rolledBackAt: z.string(),
  restored: z.string(),
  backup: z.string(),
  previousState: z.string(),
  branch: z.string().nullable(),
});

/** A `backup-restore` event, as `--json` outputs carry it. */
const BackupRestore = z.looseObject({
  type: z.literal('backup-restore'),
  timestamp: z.string(),
  target: z.string(),
  backup: z.string(),
  safetyBackup: z.string(),
  branch: z.string().nullable(),
  previousStatus: z.string(),
});
