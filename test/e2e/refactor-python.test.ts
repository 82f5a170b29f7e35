/**
 * End to end: `ratchet refactor run --provider claude-code` on a Python package tested with
 * pytest (Debian's python3-pytest), the REAL `claude` binary talking to the loopback fake. The
 * planner answers in plain text instead of the structured output, so the heuristic plan from the
 * index stands: dead code in shop/util.py, a long function in shop/pricing.py, no tests for
 * shop/report.py. The first patch of batch-001 is over the diff budget (refused by the admission
 * checks); the first patch of batch-002 breaks pytest and is rolled back; both retries land.
 * Then `reject` drops the run: main is exactly as before and the backup is kept.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkoutState, readLedger, type ProjectRepo } from '../support/e2e-run.js';
import type { RefactorBrainScript } from '../support/refactor-brain.js';
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
  PY_FILES,
  PY_STEPS,
  pyVerifiers,
  scriptPatches,
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
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { toolchain } from '../support/toolchains.js';

/** The heuristic plan's goals for this fixture (see `heuristicPlan`). */
const GOALS = {
  'batch-001': 'Remove dead code in shop/util.py',
  'batch-002': 'Split long code in shop/pricing.py',
  'batch-003': 'Add tests for shop/report.py',
} as const;

function script(patches: ScriptedPatches): RefactorBrainScript {
  const patch = (batch: string, variant: string) => scriptedPatch(patches, batch, variant);
  return {
    planner: { kind: 'text', text: 'The heuristic plan looks right to me; I would keep it as it is.' },
    batches: {
      'batch-001': {
        goal: GOALS['batch-001'],
        first: patch('batch-001', 'overBudget'),
        retry: patch('batch-001', 'good'),
      },
      'batch-002': {
        goal: GOALS['batch-002'],
        first: patch('batch-002', 'breaksTests'),
        retry: patch('batch-002', 'good'),
      },
      'batch-003': { goal: GOALS['batch-003'], first: patch('batch-003', 'good') },
    },
  };
}

/** The verifiers run `/usr/bin/python3 -m pytest` (PYTHON). */
const tools = toolchain('claude', 'python3-pytest');
/** The subject is the refactor run, not the sandbox: where bubblewrap is missing the run opts out. */
const sandbox = sandboxForThisMachine();
/** The report is rendered in headless Chromium. */
const chromium = toolchain('chromium');

describe.skipIf(tools.missing)(
  `ratchet refactor run on a Python repository (real claude binary, heuristic plan)${tools.note}${sandbox.note}`,
  () => {
    let repo: ProjectRepo;
    let model: RefactorModel;
    let env: Record<string, string>;
    let finalFiles: FileMap;
    let run: RefactorRun;

    beforeAll(async () => {
      assertFreshBuild();
      const scripted = await scriptPatches(PY_FILES, PY_STEPS);
      finalFiles = scripted.final;
      repo = await createRefactorRepo({ ...PY_FILES, ...configFile(refactorConfig(pyVerifiers())) });
      model = await startRefactorModel(script(scripted.patches));
      env = claudeEnv(repo, model.server);
      run = await runRefactor(repo, env, sandbox.flags);
    }, 180_000);

    afterAll(async () => {
      await model?.server.close();
      await repo?.cleanup();
    });

    it('completes every batch and exits 0', () => {
      const { result, lines } = run;
      expectExit(result, 0);
      expect(model.brain.unexpected).toEqual([]);
      expect(
        field(
          lines.find((line) => line.type === 'report'),
          'status',
        ),
      ).toBe('completed');
      expect(patcherCalls(model.brain)).toEqual([
        'batch-001 first -',
        'batch-001 retry admission',
        'batch-002 first -',
        'batch-002 retry verifier',
        'batch-003 first -',
      ]);
    });

    it('falls back to the heuristic plan when the planner answers in plain text', () => {
      const { result, lines } = run;
      expect(model.brain.callsOf('PLANNER').length).toBeGreaterThanOrEqual(1);
      const plannerEnd = eventsOf(lines, 'stage-end').find((line) => field(line, 'stage') === 'PLANNER');
      expect(field(plannerEnd, 'outcome')).not.toBe('accepted');
      const plan = lines.find((line) => line.type === 'plan-create');
      expect(field(plan, 'source')).toBe('heuristic');
      expect(readRunOutput(result).plan.batches.map((batch) => `${batch.id} ${batch.goal}`)).toEqual(
        Object.entries(GOALS).map(([id, goal]) => `${id} ${goal}`),
      );
    });

    it('commits the landed batches, ending with the scripted files', () => {
      const { beforeState, lines, branch } = run;
      expect(subjects(repo, `${beforeState.head}..${branch}`)).toEqual(
        Object.entries(GOALS).map(([id, goal]) => `checkpoint: ${id} ${goal}`),
      );
      for (const [path, content] of Object.entries(finalFiles))
        expect(repo.run('show', `${branch}:${path}`), path).toBe(content.trimEnd());
      expect(batchEnds(lines)).toEqual(['batch-001 committed 2', 'batch-002 committed 2', 'batch-003 committed 1']);
    });

    it('refuses the patch over the diff budget, and rolls back the one that breaks pytest', () => {
      const { lines, branch } = run;
      const checks = eventsOf(lines, 'patch-check');
      expect(
        checks.map(
          (line) =>
            `${String(field(line, 'batch'))}#${String(field(line, 'attempt'))} ${String(field(line, 'admitted'))}`,
        ),
      ).toEqual(['batch-001#1 false', 'batch-001#2 true', 'batch-002#1 true', 'batch-002#2 true', 'batch-003#1 true']);
      const violations = z.array(z.string()).parse(field(checks[0], 'violations')).join('\n');
      expect(violations).toMatch(/budget/i);
      expect(violations).toContain('40');
      const first = repo.run('rev-parse', `${branch}~2`);
      const rollbacks = eventsOf(lines, 'checkpoint-rollback');
      expect(rollbacks.map((line) => field(line, 'to'))).toEqual([first]);
      const retry = model.brain
        .callsOf('PATCHER')
        .find((call) => call.batch === 'batch-002' && call.attempt === 'retry');
      expect(retry?.prompt).toContain('test_quote_rows_and_totals');
      expect(retry?.prompt).not.toContain('def _row(');
    });

    it.skipIf(chromium.missing)(
      `writes the backup, the artifacts, the ledger and the reports${chromium.note}`,
      async () => {
        const { runId, ledger } = run;
        expectBackup(repo, runId);
        const artifacts = join(runDirectory(repo.dir, runId), 'artifacts');
        for (const name of INDEX_ARTIFACTS) expect(isNonEmptyFile(join(artifacts, name)), name).toBe(true);
        expect(await readFile(join(artifacts, 'SYMBOL_REGISTRY.json'), 'utf8')).toContain('quote');
        expect((await readFile(join(artifacts, 'TASK_LEDGER.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(3);
        expect(ledger.run?.status).toBe('completed');
        const patcherCalls = ledger.modelCalls.filter((call) => call.stage === 'PATCHER');
        expect(patcherCalls).toHaveLength(5);
        for (const call of patcherCalls) expect(call.costUsd ?? 0).toBeGreaterThan(0);
        expect(ledger.modelCalls.filter((call) => call.stage === 'PLANNER').length).toBeGreaterThanOrEqual(1);
        const dir = runDirectory(repo.dir, runId);
        const markdown = await readFile(join(dir, 'report.md'), 'utf8');
        expect(markdown).toMatch(/\| batch-002 \| committed \| 2 \|/);
        // The verifier runs pytest as the TDD gates do: the ledger and the report name the test that broke.
        const failing = ledger.verifications.filter((verification) => verification.failingTests.length > 0);
        expect(
          failing.map((verification) => verification.failingTests.map((test) => `${test.id} ${String(test.kind)}`)),
        ).toEqual([[expect.stringMatching(/test_quote_rows_and_totals assertion$/)]]);
        expect(failing[0]?.command).toBe(pyVerifiers().fast[0]);
        expect(markdown).toMatch(
          /\| `[^`]*pytest -q` \| \d+ passed, 1 failed \| \d+ ms \| [^|]*test_quote_rows_and_totals \(assertion\) \|/,
        );
        const dom = await renderInChromium(join(dir, 'report.html'));
        expect(dom).toContain('<table id="batches">');
        expect(dom).toContain('batch-003');
      },
    );

    it("leaves the user's checkout untouched", () => {
      const { beforeState, beforeTree } = run;
      expect(checkoutState(repo)).toEqual(beforeState);
      expect(userTree(repo)).toEqual(beforeTree);
    });

    it('reject drops the run: main exactly as before, worktree and branch gone, backup kept', async () => {
      const { beforeState, beforeTree, beforeBranches, lines, runId } = run;
      const worktree = z.string().parse(
        field(
          lines.find((line) => line.type === 'run-start'),
          'worktree',
        ),
      );
      const rejected = await ratchet(['reject', runId, '--json'], repo.dir, env);
      expectExit(rejected, 0);
      expect(checkoutState(repo)).toEqual(beforeState);
      expect(userTree(repo)).toEqual(beforeTree);
      expect(branches(repo)).toEqual(beforeBranches);
      expect(existsSync(worktree)).toBe(false);
      expectBackup(repo, runId);
      expect((await readLedger(repo.dir, runId)).run?.status).toBe('rejected');
    });
  },
);
