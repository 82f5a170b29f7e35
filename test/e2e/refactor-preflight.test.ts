/**
 * End to end: the refactor commands around a run, each as the built CLI on a temporary
 * repository, with the REAL `claude` binary where one is needed: `refactor run` refusing a red
 * baseline without touching anything, `refactor plan` and `refactor verify` changing nothing,
 * `refactor run` on a directory that is not a git repository (worked on in a copy), and the
 * preflight failures of the Claude Code CLI: missing binary (exit 2, install hint) and no
 * credentials (exit 3, /login instructions).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkoutState, type ProjectRepo } from '../support/e2e-run.js';
import { patchAnswer } from '../support/refactor-brain.js';
import {
  scriptPatches,
  TS_FILES,
  TS_STEPS,
  tsVerifiers,
  writeFiles,
  type ScriptedPatches,
} from '../support/refactor-fixtures.js';
import {
  branches,
  claudeEnv,
  configFile,
  createRefactorRepo,
  expectExit,
  ratchet,
  readRunOutput,
  refactorConfig,
  startRefactorModel,
  treeHashes,
  type RefactorModel,
} from '../support/refactor-harness.js';
import { assertFreshBuild, parseNdjson, type JsonLine } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { toolchain } from '../support/toolchains.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tsRepo(
  overrides: Record<string, string> = {},
  config = refactorConfig(tsVerifiers(process.execPath)),
): Promise<ProjectRepo> {
  const repo = await createRefactorRepo({ ...TS_FILES, ...configFile(config), ...overrides });
  cleanups.push(() => repo.cleanup());
  return repo;
}

async function model(
  planner: Parameters<typeof startRefactorModel>[0]['planner'] = { kind: 'text', text: 'fine' },
  batches: Parameters<typeof startRefactorModel>[0]['batches'] = {},
): Promise<RefactorModel> {
  const started = await startRefactorModel({ planner, batches });
  cleanups.push(() => started.server.close());
  return started;
}

const ErrorLine = z.looseObject({
  type: z.literal('error'),
  code: z.string(),
  message: z.string(),
  hint: z.string().nullable(),
});

function errorOf(lines: JsonLine[]): z.infer<typeof ErrorLine> {
  return ErrorLine.parse(lines.find((line) => line.type === 'error'));
}

function worktreesUnder(home: string): string[] {
  const dir = join(home, 'worktrees');
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** A failing unit test: the baseline is red. */
const RED_TEST = {
  'test/math.test.ts': (TS_FILES['test/math.test.ts'] ?? '').replace(
    'assert.equal(add(2, 3), 5);',
    'assert.equal(add(2, 3), 6);',
  ),
};

let patches: ScriptedPatches;

beforeAll(async () => {
  assertFreshBuild();
  ({ patches } = await scriptPatches(TS_FILES, TS_STEPS));
});

/** The subject is what happens around a run, not the sandbox: where bubblewrap is missing the runs opt out. */
const sandbox = sandboxForThisMachine();
/** The runs that start the Claude Code CLI need the real one; the others name a binary they never start. */
const claude = toolchain('claude');

describe(`ratchet refactor, around the run${sandbox.note}`, () => {
  it.skipIf(claude.missing)(
    `refuses a red baseline with exit 1 and leaves the repository as it was${claude.note}`,
    async () => {
      const repo = await tsRepo(RED_TEST);
      const { server, brain } = await model();
      const before = {
        state: checkoutState(repo),
        tree: treeHashes(repo.dir, ['.git', '.ratchet']),
        branches: branches(repo),
      };
      const result = await ratchet(
        ['refactor', 'run', repo.dir, '--provider', 'claude-code', '--yes', '--json', ...sandbox.flags],
        repo.dir,
        claudeEnv(repo, server),
      );
      expectExit(result, 1);
      const lines = parseNdjson(result.stdout);
      expect(errorOf(lines).message).toMatch(/baseline/i);
      // It names the failing command and where its output was kept.
      const output = /exited 1; its output is in (\S+)\.$/.exec(errorOf(lines).message)?.[1] ?? '';
      expect(readFileSync(output, 'utf8')).toMatch(/6/);
      expect(
        lines.some(
          (line) =>
            line.type === 'stage-end' &&
            (line as Record<string, unknown>).stage === 'BASELINE' &&
            (line as Record<string, unknown>).outcome === 'rejected',
        ),
      ).toBe(true);
      // No model was asked for anything but the authentication check.
      expect(brain.calls.map((call) => call.role)).toEqual(['none']);
      expect(checkoutState(repo)).toEqual(before.state);
      expect(treeHashes(repo.dir, ['.git', '.ratchet'])).toEqual(before.tree);
      expect(branches(repo)).toEqual(before.branches);
      expect(worktreesUnder(repo.home)).toEqual([]);
      expect(repo.run('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    },
  );

  it('refactor plan prints the heuristic batches and changes nothing', async () => {
    const repo = await tsRepo();
    const before = {
      state: checkoutState(repo),
      tree: treeHashes(repo.dir, ['.git', '.ratchet']),
      branches: branches(repo),
    };
    const plain = await ratchet(['refactor', 'plan', repo.dir], repo.dir, claudeEnv(repo, null));
    expectExit(plain, 0);
    expect(plain.stdout).toContain('Plan: 4 batches');
    expect(plain.stdout).toContain('batch-001 Remove dead code in src/math.ts');
    expect(plain.stdout).toContain('batch-002 Split long code in src/invoice.ts');
    // The entry point gets a test batch too: the load-check script imports it.
    expect(plain.stdout).toContain('batch-003 Add tests for src/index.ts');
    expect(plain.stdout).toContain('batch-004 Add tests for src/report.ts');
    // A goal about nothing the index checks plans a batch in every file: each says why it is there.
    const goal = await ratchet(['refactor', 'plan', '--goal', 'Use async/await'], repo.dir, claudeEnv(repo, null));
    expectExit(goal, 0);
    const batchLines = goal.stdout.split('\n').filter((line) => /^\s+batch-\d+ /.test(line));
    const whyLines = goal.stdout.split('\n').filter((line) => /^\s+why: \S/.test(line));
    expect(batchLines.length, goal.stdout).toBeGreaterThan(1);
    expect(whyLines).toHaveLength(batchLines.length);
    expect(whyLines.some((line) => line.includes('no finding: the goal is about nothing the index checks'))).toBe(true);
    const json = await ratchet(['refactor', 'plan', '--json'], repo.dir, claudeEnv(repo, null));
    expectExit(json, 0);
    const plan = z
      .object({
        batches: z.array(
          z.object({ id: z.string(), goal: z.string(), scope_globs: z.array(z.string()), diff_budget_loc: z.number() }),
        ),
      })
      .parse(JSON.parse(json.stdout));
    expect(plan.batches.map((batch) => batch.id)).toEqual(['batch-001', 'batch-002', 'batch-003', 'batch-004']);
    expect(plan.batches[0]?.scope_globs).toEqual(['src/math.ts']);
    expect(plan.batches[0]?.diff_budget_loc).toBe(40);
    // Only Ratchet's own cache appeared, in the git-excluded .ratchet/ folder.
    expect(checkoutState(repo)).toEqual(before.state);
    expect(repo.run('status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(branches(repo)).toEqual(before.branches);
    expect(treeHashes(repo.dir, ['.git', '.ratchet'])).toEqual(before.tree);

    // A directory that is not a repository gets nothing at all, not even the cache.
    const plainDir = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-plain-plan-')));
    cleanups.push(() => rm(plainDir, { recursive: true, force: true }));
    await writeFiles(plainDir, { ...TS_FILES, ...configFile(refactorConfig(tsVerifiers(process.execPath))) });
    const plainBefore = treeHashes(plainDir, []);
    const plainPlan = await ratchet(['refactor', 'plan', plainDir], plainDir, claudeEnv(repo, null));
    expectExit(plainPlan, 0);
    expect(plainPlan.stdout).toContain('Plan: 4 batches');
    expect(treeHashes(plainDir, [])).toEqual(plainBefore);
    // Its index cache lives under $RATCHET_HOME/index, so the next index is incremental.
    const indexed = await ratchet(['index', plainDir, '--json'], plainDir, claudeEnv(repo, null));
    expectExit(indexed, 0);
    const summary = z
      .object({ git: z.boolean(), parsed: z.number(), reused: z.number() })
      .parse(JSON.parse(indexed.stdout));
    expect(summary.git).toBe(false);
    expect(summary.parsed).toBe(0);
    expect(summary.reused).toBeGreaterThan(0);
    expect(treeHashes(plainDir, [])).toEqual(plainBefore);
    expect(readdirSync(join(repo.home, 'index'))).toEqual([
      expect.stringMatching(/^ratchet-plain-plan-.+-[0-9a-f]{12}$/),
    ]);

    // `refactor verify` keeps its logs there too, one folder per directory: another directory
    // with the same name does not overwrite them.
    const twin = join(plainDir, 'twin', basename(plainDir));
    await writeFiles(twin, { ...TS_FILES, ...configFile(refactorConfig(tsVerifiers(process.execPath))) });
    const twinBefore = treeHashes(plainDir, []);
    for (const dir of [plainDir, twin])
      expectExit(await ratchet(['refactor', 'verify', dir], dir, claudeEnv(repo, null)), 0);
    expect(treeHashes(plainDir, [])).toEqual(twinBefore);
    const logs = readdirSync(join(repo.home, 'verify'));
    expect(logs).toHaveLength(2);
    for (const folder of logs) {
      expect(folder).toMatch(/^ratchet-plain-plan-.+-[0-9a-f]{12}$/);
      expect(readdirSync(join(repo.home, 'verify', folder))).toEqual(['001-baseline.log', '002-baseline.log']);
    }
  });

  it('refactor verify exits 0 on a green baseline and 1 on a red one, changing nothing', async () => {
    const green = await tsRepo();
    const ok = await ratchet(['refactor', 'verify', green.dir, '--json'], green.dir, claudeEnv(green, null));
    expectExit(ok, 0);
    const report = z
      .object({ ok: z.boolean(), results: z.array(z.object({ command: z.string(), exitCode: z.number().nullable() })) })
      .parse(JSON.parse(ok.stdout));
    expect(report.ok).toBe(true);
    // The baseline runs the full verifier: the tests, then the load check.
    expect(report.results.map((entry) => entry.exitCode)).toEqual([0, 0]);
    expect(green.run('status', '--porcelain', '--untracked-files=all')).toBe('');

    const red = await tsRepo(RED_TEST);
    const failed = await ratchet(['refactor', 'verify', red.dir], red.dir, claudeEnv(red, null));
    expectExit(failed, 1);
    expect(failed.stdout).toContain('Baseline is red');
    expect(red.run('status', '--porcelain', '--untracked-files=all')).toBe('');

    // The baseline runs the fast verifier too: one that fails before any change would blame every patch.
    const verifiers = tsVerifiers(process.execPath);
    const failing = `"${process.execPath}" -e "process.exit(3)"`;
    const fastFails = await tsRepo({}, refactorConfig({ fast: [...verifiers.fast, failing], full: verifiers.full }));
    const refused = await ratchet(
      ['refactor', 'verify', fastFails.dir, '--json'],
      fastFails.dir,
      claudeEnv(fastFails, null),
    );
    expectExit(refused, 1);
    const refusedReport = z
      .object({ ok: z.boolean(), results: z.array(z.object({ command: z.string(), exitCode: z.number().nullable() })) })
      .parse(JSON.parse(refused.stdout));
    expect(refusedReport.results.at(-1)).toMatchObject({ command: failing, exitCode: 3 });
  });

  it.skipIf(claude.missing)(
    `works on a copy of a directory that is not a git repository and never touches it${claude.note}`,
    async () => {
      const original = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-plain-')));
      cleanups.push(() => rm(original, { recursive: true, force: true }));
      const target = join(original, 'shop');
      await writeFiles(target, { ...TS_FILES, ...configFile(refactorConfig(tsVerifiers(process.execPath))) });
      // RATCHET_HOME and the claude HOME come from a throw-away repository beside it.
      const scratch = await tsRepo();
      const good = patches['batch-001']?.good;
      if (!good) throw new Error('no batch-001 patch');
      const goal = 'Remove dead code in src/math.ts';
      const { server, brain } = await model(
        {
          kind: 'structured',
          batches: [
            {
              id: 'x',
              goal,
              scope_globs: ['src/math.ts'],
              allowed_operations: ['remove-dead-code'],
              diff_budget_loc: 30,
              risk_score: 10,
              verifier_level: 'fast',
            },
          ],
        },
        { 'batch-001': { goal, first: patchAnswer(good.diff, good.files, 'drop legacyRound') } },
      );
      const before = treeHashes(original, []);
      const result = await ratchet(
        ['refactor', 'run', target, '--provider', 'claude-code', '--yes', '--json', ...sandbox.flags],
        original,
        claudeEnv(scratch, server),
      );
      expectExit(result, 0);
      expect(brain.unexpected).toEqual([]);
      const { runId, report } = readRunOutput(result);
      expect(report?.status).toBe('completed');
      // The run lives in a git copy under RATCHET_HOME; its branch holds the checkpoint.
      const copy = join(scratch.home, 'copies', runId, 'shop');
      expect(report?.html.startsWith(copy)).toBe(true);
      const log = execFileSync('git', ['log', '--format=%s', `ratchet/${runId}`], {
        cwd: copy,
        encoding: 'utf8',
        env: { ...process.env, ...scratch.env },
      });
      expect(log.split('\n')[0]).toBe(`checkpoint: batch-001 ${goal}`);
      expect(await readFile(join(target, 'src/math.ts'), 'utf8')).toContain('legacyRound');
      // Not one byte of the original changed, and no .git or .ratchet appeared in it.
      expect(treeHashes(original, [])).toEqual(before);
      expect(existsSync(join(target, '.git'))).toBe(false);
      expect(existsSync(join(target, '.ratchet'))).toBe(false);
      // The backup is a snapshot only (there is no history to bundle).
      const backup = join(scratch.home, 'backups', 'shop', runId);
      expect(existsSync(join(backup, 'snapshot.tar.gz'))).toBe(true);
      expect(existsSync(join(backup, 'backup.bundle'))).toBe(false);

      // Commands on the run from the original directory find it in its copy by the run id.
      const reported = await ratchet(
        ['report', runId, '--json', '--cwd', target],
        original,
        claudeEnv(scratch, server),
      );
      expectExit(reported, 0);
      // ... and without it: the newest copy of this directory holds its latest run.
      const status = await ratchet(['status', '--json', '--cwd', target], original, claudeEnv(scratch, server));
      expectExit(status, 0);
      expect(status.stdout).toContain(runId);
      expect(existsSync(join(target, '.ratchet'))).toBe(false);
      // Accepting (from the copy, where the run and its ledger live) brings the change into the original.
      const accepted = await ratchet(['accept', runId, '--cwd', copy], original, claudeEnv(scratch, server));
      expectExit(accepted, 0);
      expect(accepted.stdout).toContain(`copied into ${target}`);
      expect(await readFile(join(target, 'src/math.ts'), 'utf8')).not.toContain('legacyRound');
      expect(existsSync(join(target, '.git'))).toBe(false);
    },
  );

  it.skipIf(claude.missing)(
    `stops at the last checkpoint with exit 1 when a batch keeps failing its verifier${claude.note}`,
    async () => {
      const repo = await tsRepo();
      const entry = (batch: string, variant: string) => {
        const patch = patches[batch]?.[variant];
        if (!patch) throw new Error(`no ${variant} patch for ${batch}`);
        return patchAnswer(patch.diff, patch.files, `${batch} ${variant}`);
      };
      const { server, brain } = await model(
        { kind: 'text', text: 'Keep the heuristic plan.' },
        {
          'batch-001': { goal: 'Remove dead code in src/math.ts', first: entry('batch-001', 'good') },
          // Both attempts (retry_per_batch 1) break the tests.
          'batch-002': {
            goal: 'Split long code in src/invoice.ts',
            first: entry('batch-002', 'breaksTests'),
            retry: entry('batch-002', 'breaksTests'),
          },
        },
      );
      const before = checkoutState(repo);
      const result = await ratchet(
        ['refactor', 'run', repo.dir, '--provider', 'claude-code', '--yes', '--json', ...sandbox.flags],
        repo.dir,
        claudeEnv(repo, server),
      );
      expectExit(result, 1);
      expect(brain.unexpected).toEqual([]);
      const { lines, runId, report } = readRunOutput(result);
      expect(report?.status).toBe('failed');
      const ends = lines
        .filter((line) => line.type === 'batch-end')
        .map(
          (line) =>
            `${String((line as Record<string, unknown>).batch)} ${String((line as Record<string, unknown>).outcome)}`,
        );
      // batch-003 is never attempted: the run stops (seed 002, 8.3).
      expect(ends).toEqual(['batch-001 committed', 'batch-002 failed']);
      expect(brain.callsOf('PATCHER').map((call) => call.batch)).toEqual(['batch-001', 'batch-002', 'batch-002']);
      // The worktree is back at batch-001's checkpoint, with nothing of batch-002 in it.
      const worktree = z
        .string()
        .parse((lines.find((line) => line.type === 'run-start') as Record<string, unknown> | undefined)?.worktree);
      const checkpoint = repo.run('rev-parse', `ratchet/${runId}`);
      expect(repo.run('log', '-1', '--format=%s', checkpoint)).toBe(
        'checkpoint: batch-001 Remove dead code in src/math.ts',
      );
      expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: worktree, encoding: 'utf8' }).trim()).toBe(checkpoint);
      expect(
        execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: worktree, encoding: 'utf8' }),
      ).toBe('');
      expect(await readFile(join(worktree, 'src/invoice.ts'), 'utf8')).toBe(TS_FILES['src/invoice.ts']);
      // The report is written, and the user's checkout is untouched.
      expect(await readFile(z.string().parse(report?.markdown), 'utf8')).toMatch(/\| batch-002 \| failed \| 2 \|/);
      expect(checkoutState(repo)).toEqual(before);
      // Accepting a failed run takes --force.
      const refused = await ratchet(['accept', runId], repo.dir, claudeEnv(repo, server));
      expectExit(refused, 2);
      expect(refused.stderr).toContain('--force');
      // Without --yes, the question names the gentler way for a run that was never accepted.
      const unconfirmed = await ratchet(['refactor', 'rollback', runId], repo.dir, claudeEnv(repo, server));
      expectExit(unconfirmed, 2);
      expect(unconfirmed.stderr).toContain(`Run ${runId} was never accepted: \`ratchet reject ${runId}\` drops it`);
      // Rolling the unaccepted run back leaves nothing of it: no worktree, no branch.
      const rolledBack = await ratchet(['refactor', 'rollback', runId, '--yes'], repo.dir, claudeEnv(repo, server));
      expectExit(rolledBack, 0);
      expect(checkoutState(repo)).toEqual(before);
      expect(branches(repo)).toEqual([`main ${before.head}`]);
      expect(existsSync(worktree)).toBe(false);
      // On record as rolled back (not rejected), with what it was before, and no worktree listed.
      const status = await ratchet(['status', runId, '--json'], repo.dir, claudeEnv(repo, server));
      expectExit(status, 0);
      expect(JSON.parse(status.stdout)).toMatchObject({
        run: { status: 'rolled-back' },
        worktree: null,
        rollback: { type: 'backup-restore', previousStatus: 'failed', branch: 'main' },
      });
      const shown = await ratchet(['status', runId], repo.dir, claudeEnv(repo, server));
      expect(shown.stdout).toMatch(/rolled back at \S+ \(it had failed, never accepted\): /);
      expect(shown.stdout).toContain('rolled back, the branch was removed');
      expect(shown.stdout).not.toContain(worktree);
    },
  );

  it('exits 2 with the install hint when the claude binary is missing', async () => {
    const repo = await tsRepo(
      {},
      refactorConfig(tsVerifiers(process.execPath), {
        claude: {
          binary: '/nonexistent/bin/claude',
          allowed_tools: 'Read',
          max_turns_patcher: 2,
          max_turns_planner: 2,
        },
      }),
    );
    const { server } = await model();
    const before = checkoutState(repo);
    const result = await ratchet(
      ['refactor', 'run', repo.dir, '--provider', 'claude-code', '--yes', '--json', ...sandbox.flags],
      repo.dir,
      claudeEnv(repo, server),
    );
    expectExit(result, 2);
    const error = errorOf(parseNdjson(result.stdout));
    expect(error.message).toContain('/nonexistent/bin/claude');
    expect(error.hint).toContain('npm install -g @anthropic-ai/claude-code');
    expect(server.requests).toHaveLength(0);
    expect(checkoutState(repo)).toEqual(before);
    expect(branches(repo)).toHaveLength(1);
  });

  it('exits 3 before any backup, branch, worktree or run when the API key is missing', async () => {
    const repo = await tsRepo();
    const before = { state: checkoutState(repo), branches: branches(repo) };
    const result = await ratchet(
      ['refactor', 'run', repo.dir, '--provider', 'anthropic', '--model', 'claude-x', '--yes', ...sandbox.flags],
      repo.dir,
      claudeEnv(repo, null, { apiKey: null }),
    );
    expectExit(result, 3);
    expect(result.stderr).toContain('ANTHROPIC_API_KEY is not set');
    expect(result.stdout).not.toContain('BASELINE');
    expect(checkoutState(repo)).toEqual(before.state);
    expect(branches(repo)).toEqual(before.branches);
    expect(worktreesUnder(repo.home)).toEqual([]);
    expect(existsSync(join(repo.home, 'backups'))).toBe(false);
  });

  it('refuses a provider with nothing listening with exit 3 before its backup, baseline or worktree', async () => {
    const repo = await tsRepo();
    const before = { state: checkoutState(repo), branches: branches(repo) };
    const result = await ratchet(
      [
        'refactor',
        'run',
        repo.dir,
        '--provider',
        'anthropic',
        '--model',
        'claude-x',
        '--yes',
        '--json',
        ...sandbox.flags,
      ],
      repo.dir,
      // Nothing listens on port 1: the provider check (its model list) is refused (issue 13).
      { ...claudeEnv(repo, null), ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' },
    );
    expectExit(result, 3);
    const lines = parseNdjson(result.stdout);
    expect(lines.filter((line) => line.type !== 'error')).toEqual([]);
    expect(errorOf(lines)).toMatchObject({ code: 'provider' });
    expect(errorOf(lines).message).toContain('http://127.0.0.1:1 does not answer');
    expect(checkoutState(repo)).toEqual(before.state);
    expect(branches(repo)).toEqual(before.branches);
    expect(worktreesUnder(repo.home)).toEqual([]);
    expect(existsSync(join(repo.home, 'backups'))).toBe(false);
  });

  it('stops with exit 3 when the planner cannot reach the provider after its retries, leaving no worktree or branch', async () => {
    const repo = await tsRepo();
    const before = { state: checkoutState(repo), branches: branches(repo) };
    // The provider check passes (the model list answers); every model call's connection drops.
    const { server } = await model();
    server.setFallback(() => ({ kind: 'disconnect' }));
    const result = await ratchet(
      ['refactor', 'run', repo.dir, '--provider', 'anthropic', '--model', 'claude-x', '--yes', '--json'],
      repo.dir,
      claudeEnv(repo, server),
    );
    expectExit(result, 3);
    const lines = parseNdjson(result.stdout);
    // The retries stream as they happen (1 s, 2 s, 4 s), then the planner's attempt ends in an error.
    expect(lines.filter((line) => line.type === 'model-retry').map((line) => line.delayMs)).toEqual([1000, 2000, 4000]);
    expect(
      lines.some((line) => line.type === 'stage-end' && line.stage === 'PLANNER' && line.outcome === 'error'),
    ).toBe(true);
    expect(lines.some((line) => line.type === 'batch-start' || line.type === 'plan-create')).toBe(false);
    expect(errorOf(lines)).toMatchObject({ code: 'network' });
    expect(checkoutState(repo)).toEqual(before.state);
    expect(branches(repo)).toEqual(before.branches);
    expect(worktreesUnder(repo.home)).toEqual([]);
  });

  it('exits 2 on a repository that has no commit yet', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-empty-repo-')));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    const result = await ratchet(['refactor', 'run', dir, '--provider', 'anthropic', '--yes', '--allow-dirty'], dir, {
      RATCHET_HOME: join(dir, '.home'),
      ANTHROPIC_API_KEY: 'sk-ant-test-no-commit-000000000000',
    });
    expectExit(result, 2);
    expect(result.stderr).toContain(`${dir} has no commits yet: a run starts from a commit.`);
    expect(result.stderr).toContain('git add -A && git commit -m "initial"');
  });

  it('exits 2 before any backup or worktree when nothing can verify the project, naming it', async () => {
    const packageJson = `${JSON.stringify({ name: 'shop', private: true, type: 'module' }, null, 2)}\n`;
    const repo = await tsRepo({ 'package.json': packageJson }, refactorConfig({ fast: [], full: [] }));
    const { server } = await model();
    const result = await ratchet(
      ['refactor', 'run', repo.dir, '--provider', 'claude-code', '--yes', '--json', ...sandbox.flags],
      repo.dir,
      claudeEnv(repo, server),
    );
    expectExit(result, 2);
    const error = errorOf(parseNdjson(result.stdout));
    expect(error.message).toBe(
      `No verifier commands for ${repo.dir}: fast_verifier and full_verifier not set, and no test command was found to use instead.`,
    );
    expect(error.hint).toContain('fast_verifier');
    expect(worktreesUnder(repo.home)).toEqual([]);
    expect(existsSync(join(repo.home, 'backups'))).toBe(false);

    // The same directory outside git: its working copy goes too, nothing is left in RATCHET_HOME.
    const plainDir = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-plain-noverify-')));
    cleanups.push(() => rm(plainDir, { recursive: true, force: true }));
    await writeFiles(plainDir, {
      ...TS_FILES,
      'package.json': packageJson,
      ...configFile(refactorConfig({ fast: [], full: [] })),
    });
    const plain = await ratchet(
      ['refactor', 'run', plainDir, '--provider', 'claude-code', '--yes', ...sandbox.flags],
      plainDir,
      claudeEnv(repo, server),
    );
    expectExit(plain, 2);
    expect(plain.stderr).toContain('No verifier commands for');
    expect(existsSync(join(repo.home, 'copies')) ? readdirSync(join(repo.home, 'copies')) : []).toEqual([]);
  });

  it.skipIf(claude.missing)(
    `exits 3 with the /login instructions when Claude Code is not authenticated${claude.note}`,
    async () => {
      const repo = await tsRepo();
      const { server } = await model();
      const before = checkoutState(repo);
      const plain = await ratchet(
        ['refactor', 'run', repo.dir, '--provider', 'claude-code', '--yes', ...sandbox.flags],
        repo.dir,
        claudeEnv(repo, server, { apiKey: null }),
      );
      expectExit(plain, 3);
      expect(plain.stderr).toMatch(/not authenticated/i);
      expect(plain.stderr).toContain('/login');
      expect(server.requests).toHaveLength(0);
      expect(checkoutState(repo)).toEqual(before);
      expect(branches(repo)).toHaveLength(1);
      expect(worktreesUnder(repo.home)).toEqual([]);
    },
  );
});
