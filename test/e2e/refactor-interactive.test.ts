/**
 * End to end, on a terminal: `ratchet refactor run` without --yes asks to confirm the plan
 * (seed 002, 18: "show_confirm_screen ... if user_cancel: cleanup and exit") and, after the
 * report, whether to accept or reject the run (7.2, 18, 24). The built CLI runs on a pty (util-linux
 * `script`), with the real Anthropic adapter talking to the loopback fake, where a small brain
 * answers the patcher: batch-001 removes dead code, batch-002 is a noop.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  checkoutState,
  createProjectRepo,
  E2E_API_KEY,
  ratchetEnv,
  readLedger,
  type CheckoutState,
  type ProjectRepo,
} from '../support/e2e-run.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { startPtyCli, type PtyCli } from '../support/pty-cli.js';
import { REFACTOR_FILES, REFACTOR_MATH, refactorBrain, stageOf } from '../support/refactor-js-fixture.js';
import { assertFreshBuild } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { toolchain } from '../support/toolchains.js';

const PLAN_PROMPT = 'Proceed with these batches? [y/N]';
const DECISION_PROMPT = 'or keep it for later? [a/r/K]';

const RUN = ['refactor', 'run', '--provider', 'anthropic', '--model', 'claude-refactor-e2e'];

/** A max runtime far below what one batch takes (a model call, git apply and a `node --test` run). */
const TINY_MAX_RUNTIME = { '.ratchet/config.toml': '[refactor]\nmax_runtime_minutes = 0.00001\n' };

/** The subject is the questions, not the sandbox: where bubblewrap is missing the runs opt out. */
const sandbox = sandboxForThisMachine();
/** The CLI runs on a pseudo-terminal made by util-linux `script`. */
const script = toolchain('script');

describe.skipIf(script.missing)(
  `ratchet refactor run on a terminal: the plan confirmation and the accept/reject question${script.note}${sandbox.note}`,
  () => {
    let server: FakeAnthropicServer;
    let repo: ProjectRepo | undefined;
    let cli: PtyCli | undefined;

    beforeAll(async () => {
      assertFreshBuild();
      server = await startFakeAnthropicServer({ apiKey: E2E_API_KEY });
      server.setFallback(refactorBrain);
    });

    afterEach(async () => {
      cli?.kill();
      cli = undefined;
      await repo?.cleanup();
      repo = undefined;
    });

    afterAll(async () => {
      await server.close();
    });

    async function start(extra: Record<string, string> = {}): Promise<{ repo: ProjectRepo; session: PtyCli }> {
      repo = await createProjectRepo(REFACTOR_FILES);
      await repo.write(extra);
      cli = startPtyCli([...RUN, ...sandbox.flags], { cwd: repo.dir, env: ratchetEnv(repo, server) });
      return { repo, session: cli };
    }

    function runBranches(project: ProjectRepo): string[] {
      return project.run('branch', '--list', 'ratchet/*', '--format=%(refname:short)').split('\n').filter(Boolean);
    }

    function runIdOf(session: PtyCli): string {
      const match = /branch\s+ratchet\/(\S+) \(worktree/.exec(session.text());
      if (!match?.[1]) throw new Error(`no run branch on the confirm screen:\n${session.text()}`);
      return match[1];
    }

    /** Starts a run, answers y to the plan and waits for the accept/reject question after the report. */
    async function startAndProceed(
      extra: Record<string, string> = {},
    ): Promise<{ project: ProjectRepo; session: PtyCli; before: CheckoutState; runId: string }> {
      const { repo: project, session } = await start(extra);
      const before = checkoutState(project);
      await session.waitFor(PLAN_PROMPT);
      const runId = runIdOf(session);
      session.type('y');
      await session.waitFor(DECISION_PROMPT);
      return { project, session, before, runId };
    }

    it("y to the plan, a at the end: the checkpoints land on the user's branch and the worktree is gone", async () => {
      const { repo: project, session } = await start();
      const before = checkoutState(project);

      await session.waitFor(PLAN_PROMPT);
      const runId = runIdOf(session);
      // Nothing is applied before the answer: the user's checkout is as it was.
      expect(checkoutState(project)).toEqual(before);
      session.type('y');
      await session.waitFor(
        'Accept the run (merge into main), reject it (drop everything; the backup is kept), or keep it for later? [a/r/K] ',
      );
      expect(session.text()).toContain('1 of 2 batches committed on ratchet/');
      session.type('a');
      const code = await session.exit();

      expect(code, session.text()).toBe(0);
      expect(session.text()).toContain(`Accepted run ${runId} into main (fast-forward`);
      expect(session.text()).not.toContain(`ratchet accept ${runId}`);
      expect(project.run('log', '--format=%s', `${before.head}..main`).split('\n')).toEqual([
        'checkpoint: batch-001 Remove dead code in src/math.js',
      ]);
      expect(project.run('rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
      expect(await readFile(join(project.dir, 'src', 'math.js'), 'utf8')).not.toContain('unusedHelper');
      expect(project.run('status', '--porcelain', '--untracked-files=all')).toBe('');
      expect(runBranches(project)).toEqual([]);
      expect(existsSync(join(project.home, 'worktrees', runId))).toBe(false);
      expect((await readLedger(project.dir, runId)).run?.status).toBe('accepted');
    });

    it('n to the plan: the repository is untouched, the worktree and branch are removed, no batch runs', async () => {
      const { repo: project, session } = await start();
      const before = checkoutState(project);
      const patcherCalls = server.requests.filter((request) => stageOf(request) === 'Stage: PATCHER').length;

      await session.waitFor(PLAN_PROMPT);
      const runId = runIdOf(session);
      expect(existsSync(join(project.home, 'worktrees', runId))).toBe(true);
      session.type('n');
      const code = await session.exit();

      expect(code, session.text()).toBe(0);
      expect(session.text()).toContain('Cancelled: nothing was changed');
      expect(session.text()).not.toContain(DECISION_PROMPT);
      expect(checkoutState(project)).toEqual(before);
      expect(await readFile(join(project.dir, 'src', 'math.js'), 'utf8')).toBe(REFACTOR_MATH);
      expect(runBranches(project)).toEqual([]);
      expect(
        project
          .run('worktree', 'list', '--porcelain')
          .split('\n')
          .filter((line) => line.startsWith('worktree ')),
      ).toEqual([`worktree ${project.dir}`]);
      expect(existsSync(join(project.home, 'worktrees', runId))).toBe(false);
      expect(server.requests.filter((request) => stageOf(request) === 'Stage: PATCHER')).toHaveLength(patcherCalls);
      expect((await readLedger(project.dir, runId)).run?.status).toBe('rejected');
    });

    it('SIGTERM at the plan question cancels like n: nothing left behind, exit 4', async () => {
      const { repo: project, session } = await start();
      const before = checkoutState(project);

      await session.waitFor(PLAN_PROMPT);
      const runId = runIdOf(session);
      session.signalCli('SIGTERM');
      const code = await session.exit();

      expect(code, session.text()).toBe(4);
      expect(session.text()).toContain('Cancelled: nothing was changed');
      expect(checkoutState(project)).toEqual(before);
      expect(runBranches(project)).toEqual([]);
      expect(existsSync(join(project.home, 'worktrees', runId))).toBe(false);
      expect((await readLedger(project.dir, runId)).run?.status).toBe('rejected');
    });

    it("r at the end drops the run; the user's branch is unchanged and the backup stays", async () => {
      const { project, session, before, runId } = await startAndProceed();
      session.type('r');
      const code = await session.exit();

      expect(code, session.text()).toBe(0);
      expect(session.text()).toContain(`Rejected run ${runId}: worktree and branch ratchet/${runId} removed.`);
      expect(checkoutState(project)).toEqual(before);
      expect(runBranches(project)).toEqual([]);
      expect(existsSync(join(project.home, 'worktrees', runId))).toBe(false);
      expect(existsSync(join(project.home, 'backups', 'repo', runId))).toBe(true);
      expect((await readLedger(project.dir, runId)).run?.status).toBe('rejected');
    });

    it('Enter at the end keeps the run for later and prints the accept and reject commands', async () => {
      const { project, session, before, runId } = await startAndProceed();
      session.type('');
      const code = await session.exit();

      expect(code, session.text()).toBe(0);
      expect(session.text()).toContain(`Accept with ratchet accept ${runId}, or drop it with ratchet reject ${runId}`);
      expect(checkoutState(project)).toEqual(before);
      expect(runBranches(project)).toEqual([`ratchet/${runId}`]);
      expect((await readLedger(project.dir, runId)).run?.status).toBe('completed');
    });

    it('a run stopped by max_runtime_minutes exits 1 with the reason, and is accepted at the end only after a second yes', async () => {
      // The run always stops before batch-002.
      const { project, session, before, runId } = await startAndProceed(TINY_MAX_RUNTIME);
      expect(session.text()).toMatch(
        /the max runtime of 0\.00001 minutes was exceeded \([\d.e-]+ minutes elapsed\): stopped before batch-002 \(1 of 2 batches not started\)/,
      );
      expect(session.text()).toContain(`Run ${runId} failed: the max runtime of 0.00001 minutes was exceeded`);
      expect(session.text()).toContain('1 of 2 batches committed on ratchet/');
      session.type('a');
      await session.waitFor('Accept its 1 checkpoint as they are (as with --force)? [y/N]');
      session.type('y');
      const code = await session.exit();

      expect(code, session.text()).toBe(1);
      expect(session.text()).toContain(`Accepted run ${runId} into main`);
      expect(project.run('log', '--format=%s', `${before.head}..main`).split('\n')).toEqual([
        'checkpoint: batch-001 Remove dead code in src/math.js',
      ]);
      const ledger = await readLedger(project.dir, runId);
      expect(ledger.run?.status).toBe('accepted');
      const report = await readFile(join(project.dir, '.ratchet', 'runs', runId, 'report.md'), 'utf8');
      expect(report).toContain('the max runtime of 0.00001 minutes was exceeded');
    });

    it('a run that stopped early is kept when the second question is not answered yes', async () => {
      const { project, session, before, runId } = await startAndProceed(TINY_MAX_RUNTIME);
      session.type('a');
      await session.waitFor('as they are (as with --force)? [y/N]');
      session.type('n');
      const code = await session.exit();

      expect(code, session.text()).toBe(1);
      expect(session.text()).toContain(
        `Accept with ratchet accept ${runId} --force, or drop it with ratchet reject ${runId}`,
      );
      // (.ratchet/config.toml is git-excluded by the run, so only HEAD and the files are compared.)
      expect(checkoutState(project)).toMatchObject({ branch: before.branch, head: before.head });
      expect(await readFile(join(project.dir, 'src', 'math.js'), 'utf8')).toBe(REFACTOR_MATH);
      expect(runBranches(project)).toEqual([`ratchet/${runId}`]);
      expect((await readLedger(project.dir, runId)).run?.status).toBe('failed');
    });
  },
);
