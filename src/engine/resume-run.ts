import { existsSync } from 'node:fs';
import { RatchetError } from '../core/errors.js';
import type { RatchetEvent } from '../core/events.js';
import type { ResolvedConfig } from '../config/resolved.js';
import { checkModels, resumeFlags, resumeModels, type ModelFlags } from '../agent/models/run-models.js';
import { Git } from '../git/git.js';
import { acquireRepoLock } from '../git/repo-lock.js';
import type { RunRow } from '../ledger/types.js';
import type { ResumeContext, ResumeSupport, RunInfo, WorkflowTypes } from '../workflows/definition.js';
import type { EngineServices } from './effects.js';
import { asGitRun, type GitRun } from './git-run.js';
import { createRecorder } from './recorder.js';
import type { WorkflowRegistry } from './registry.js';
import { readRunConfig, storedConfig, type StoredRunConfig } from './run-config.js';
import { isFinished, noRunError, runIsActive } from './run-lookup.js';
import { runProcess, type RunOutcome } from './run-process.js';
import { closeAttemptsLeftOpen, recordCheckpointsLeftOut } from './resume-recovery.js';
import { rolledBackError } from './rollbacks.js';
import { clearStaleGitLocks } from './stale-locks.js';
import { requireSandbox } from './tool-sandbox.js';
import { requireWritableHome, shareDependencies } from './worktree-setup.js';

export interface ResumeOptions {
  /** The repository the run lives in. */
  repoRoot: string;
  /** The run; default the latest run of a workflow that resumes runs that has not finished. */
  runId?: string;
  /**
   * The configuration as given, or how to load it with the flags that choose the run's models:
   * those the run started with, `flags` (given to `resume`) winning (see `resumeFlags`).
   */
  config: ResolvedConfig | ((flags: ModelFlags) => Promise<ResolvedConfig>);
  /** The model flags given to `resume` (with a configuration to load). */
  flags?: ModelFlags;
  /** Record the model calls into this cassette (default: the one the run was recorded into, if any). */
  recordPath?: string;
  signal?: AbortSignal;
  /** Told which models the run resumes on (before it starts). */
  notice?: (message: string) => void;
}

/**
 * `ratchet resume`: continues a run from its last checkpoint (after a crash, `kill -9`, SIGINT
 * or a failure). Holding the repository lock, it clears the git lock files a kill left, makes
 * the worktree again when it is gone, drops what came after the workflow's resume point, records
 * the checkpoints a killed process made but did not record in full and ends the stage attempts
 * it left open; then the run's process goes on from there (see `runProcess`).
 */
export async function* resumeRun(
  registry: WorkflowRegistry,
  options: ResumeOptions,
  services: EngineServices,
): AsyncGenerator<RatchetEvent, RunOutcome> {
  const { ledger } = services;
  const { run, stored, resume } = await resumableRun(registry, options, services);
  const { workflow } = stored;
  const config = await resumeConfig(run, options);
  await workflow.preflight?.({ repoRoot: options.repoRoot, config });
  await requireWritableHome(config.home);
  await checkModels(config, services, options.recordPath ? { recordPath: options.recordPath } : {});
  await requireSandbox(config, services.runner);
  const git = new Git(options.repoRoot);
  const lock = await acquireRepoLock(await git.commonDir(), { runId: run.id });
  try {
    // With the repository lock held, git lock files of this run can only be leftovers of a kill.
    const removedLocks = await clearStaleGitLocks(options.repoRoot, run);
    if (!existsSync(run.worktree)) {
      await git.pruneWorktrees();
      await git.addWorktree(run.worktree, run.branch);
    }
    await shareDependencies(stored.target, run.worktree, git);
    const worktreeGit = new Git(run.worktree);
    await worktreeGit.resetHard('HEAD');
    await worktreeGit.clean();
    const info = runInfo(run, stored);
    const context: ResumeContext<unknown> = { run: info, settings: stored.settings, git: worktreeGit, ledger };
    const point = await resume.point(context);
    const head = await worktreeGit.head();
    const models = await resumeModels(run, config, services, {
      ...(options.recordPath ? { recordPath: options.recordPath } : {}),
      commit: point.commit,
      events: (types) => ledger.events(run.id, { types }),
    });
    const record = createRecorder(run.id, ledger, services.clock, await ledger.lastEventNumber(run.id));
    // The provider, model, endpoint and cassette this stretch of the run uses (flags to `resume` may choose others).
    await ledger.updateRun(run.id, {
      status: 'running',
      error: null,
      provider: models.provider,
      model: models.model,
      config: storedConfig(stored.settings, stored, models.stored),
    });
    yield await record({
      type: 'run-start',
      workflow: workflow.name,
      feature: run.feature,
      branch: run.branch,
      worktree: run.worktree,
      baseCommit: run.baseCommit,
      resumed: true,
      ...models.startFields(point.commit),
    });
    // Checkpoints a killed process made (commit and note) but did not record in full: recorded, said so.
    for (const notice of await recordCheckpointsLeftOut(run, point, ledger, record, models.resumedCheckpointFields()))
      yield notice;
    // Attempts a killed process left open (no stage-end): they ended with it.
    await closeAttemptsLeftOpen(run, ledger, record);
    for (const notice of models.notices) yield await record(notice);
    if (removedLocks.length > 0) yield await record({ type: 'git-lock-remove', files: removedLocks });
    if (point.commit !== head) {
      await worktreeGit.resetHard(point.commit);
      yield await record({
        type: 'warning',
        message: `Dropped ${point.dropped} commit(s) after the last checkpoint ${point.commit.slice(0, 8)} (they had no handoff note).`,
      });
    }
    // The stage a kill or an interruption cut short continues its attempts (numbers and limit).
    const state = await resume.state(context, point);
    return yield* runProcess({
      definition: workflow,
      run: info,
      settings: stored.settings,
      config,
      models,
      record,
      services,
      ...(options.signal ? { signal: options.signal } : {}),
      from: { kind: 'resume', state },
      // A resumed run is never dropped: its failures are outcomes.
      drop: () => Promise.resolve(),
    });
  } finally {
    await lock.release();
  }
}

/** The run to resume and its stored configuration; refuses one that cannot be resumed, with the reason. */
async function resumableRun(
  registry: WorkflowRegistry,
  options: ResumeOptions,
  services: EngineServices,
): Promise<{ run: GitRun; stored: StoredRunConfig; resume: ResumeSupport<WorkflowTypes> }> {
  const { ledger } = services;
  const resumable = registry.workflows.filter((workflow) => workflow.resume !== undefined);
  const isResumable = (entry: RunRow): boolean =>
    resumable.some((workflow) => workflow.name === entry.workflow) &&
    (entry.status === 'running' ||
      entry.status === 'interrupted' ||
      entry.status === 'failed' ||
      entry.status === 'partial');
  const found = options.runId ? await ledger.getRun(options.runId) : (await ledger.listRuns(50)).find(isResumable);
  if (!found) {
    if (options.runId !== undefined || (await ledger.latestRun()) === undefined) throw noRunError(options.runId);
    const starts = resumable.map((workflow) => `\`${workflow.startCommand}\``).join(' or ');
    throw new RatchetError('not-found', 'No run to resume in this repository.', {
      hint: `See \`ratchet history\` for the runs, or start one with ${starts}.`,
    });
  }
  // Restored from its backup: there is nothing of it left to resume, keep or drop.
  if (found.status === 'rolled-back')
    throw await rolledBackError(ledger, asGitRun(found), 'there is nothing to resume');
  const stored = readRunConfig(registry, found);
  const resume = stored.workflow.resume;
  if (resume === undefined) {
    const names = new Intl.ListFormat('en', { type: 'conjunction' }).format(resumable.map((workflow) => workflow.name));
    throw new RatchetError('usage', `Run ${found.id} is a ${found.workflow} run; only ${names} runs can be resumed.`, {
      hint: `Keep what it committed with \`ratchet accept ${found.id} --force\`, drop it with \`ratchet reject ${found.id}\`, or start a new \`${stored.workflow.startCommand}\`.`,
    });
  }
  const run = asGitRun(found);
  if (isFinished(run)) throw new RatchetError('usage', `Run ${run.id} is ${run.status}; there is nothing to resume.`);
  return { run, stored, resume };
}

/**
 * The configuration the run resumes with: as given, or loaded with the flags that choose its
 * models (see `resumeFlags`); which models those are is said unless another process is running
 * the run (it is then refused as locked).
 */
async function resumeConfig(run: GitRun, options: ResumeOptions): Promise<ResolvedConfig> {
  const load = options.config;
  if (typeof load !== 'function') return load;
  const { flags, notice } = await resumeFlags(
    run,
    options.flags ?? {},
    async (chosen) => (await load(chosen)).provider.model,
  );
  if (notice !== null && !(await runIsActive(options.repoRoot, run.id))) options.notice?.(notice);
  return load(flags);
}

/** The run as its workflow sees it. */
function runInfo(run: GitRun, stored: StoredRunConfig): RunInfo {
  return {
    id: run.id,
    repoRoot: run.repoRoot,
    target: stored.target,
    isGit: stored.isGit,
    hidden: stored.hidden,
    worktree: run.worktree,
    branch: run.branch,
    baseBranch: run.baseBranch,
    baseCommit: run.baseCommit,
    feature: run.feature,
  };
}
