import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { RatchetError } from '../core/errors.js';
import type { RatchetEvent } from '../core/events.js';
import type { ResolvedConfig } from '../config/resolved.js';
import { checkModels, startModels } from '../agent/models/run-models.js';
import { countChanges, describeChanges, namedChanges, type ChangeCount } from '../git/change-count.js';
import { Git } from '../git/git.js';
import { acquireRepoLock } from '../git/repo-lock.js';
import type { Ledger } from '../ledger/types.js';
import type { RunInfo, WorkflowDefinition, WorkflowTypes } from '../workflows/definition.js';
import type { EngineServices } from './effects.js';
import { asGitRun } from './git-run.js';
import { discardUnusedCopy, runPlace, type RunPlace } from './plain-directory.js';
import { createRecorder } from './recorder.js';
import { storedConfig } from './run-config.js';
import { runBranch, worktreePath } from './run-paths.js';
import { runProcess, type RunOutcome } from './run-process.js';
import { clearStaleGitLocks } from './stale-locks.js';
import { claudeCheckRunner, requireSandbox } from './tool-sandbox.js';
import { dropRun } from './verbs/reject-run.js';
import {
  addRunWorktree,
  discardRunWorktree,
  RATCHET_EXCLUDES,
  requireCommit,
  requireWritableHome,
  shareDependencies,
} from './worktree-setup.js';

export interface StartOptions<T extends WorkflowTypes> {
  /** The directory to work on: in a git repository, or (for a workflow that takes them) any directory. */
  directory: string;
  /** What the workflow is asked to do (the feature, the goal...). */
  request: T['request'];
  config: ResolvedConfig;
  /** Start from HEAD although the working tree has uncommitted changes (they are not part of the run). */
  allowDirty: boolean;
  /**
   * Absolute paths the run's sandbox never shows, besides the checkout and `$RATCHET_HOME`: what
   * the model and the commands it writes must not read (a benchmark's withheld tests and answers,
   * its results). Kept with the run, so a resumed run hides them too.
   */
  hidden?: readonly string[];
  /**
   * Absolute paths of the files the run reads from the checkout as it starts (a tasks file, a plan
   * written by `ratchet plan --output`): not part of the run, so their being uncommitted (as they
   * are right after Ratchet wrote them) does not make the working tree dirty.
   */
  inputs?: readonly string[];
  /** Append every model call to this cassette (`--record FILE`, an absolute path). */
  recordPath?: string;
  signal?: AbortSignal;
  /** Asked after the workflow's preparing steps; false drops the run (outcome `cancelled`). Without it, the run goes on. */
  confirm?: (prepared: T['prepared'], run: RunInfo) => Promise<boolean>;
  /** Told what the checks found worth saying before the run starts (e.g. that the provider's login works). */
  notice?: (message: string) => void;
}

/**
 * The ledger a run is recorded in: one open already, or how to open the ledger of the repository
 * the run will live in once its checks passed (then a refused run leaves none behind, and the
 * engine closes it when the run ends).
 */
export type StartServices = Omit<EngineServices, 'ledger'> & {
  ledger: Ledger | ((repoRoot: string) => Promise<Ledger>);
};

/**
 * Starts a run of `definition`: the checks (nothing written before they pass), the branch
 * `ratchet/<run-id>` and its worktree from HEAD, the ledger row, `run-start`, then the run's
 * process (see `runProcess`). Yields the run's events as they are recorded; returns its outcome.
 */
export async function* startRun<T extends WorkflowTypes>(
  definition: WorkflowDefinition<T>,
  options: StartOptions<T>,
  services: StartServices,
): AsyncGenerator<RatchetEvent, RunOutcome> {
  const runId = services.ids.runId();
  const place = await runPlace(options.directory, {
    home: options.config.home,
    runId,
    copies: definition.plainDirectories,
  });
  const opens = typeof services.ledger === 'function';
  let ledger: Ledger | undefined;
  const progress = { recorded: false };
  try {
    const checked = await checkStart(definition, options, place, services);
    ledger = typeof services.ledger === 'function' ? await services.ledger(place.repoRoot) : services.ledger;
    return yield* startChecked(definition, options, { ...services, ledger }, { runId, place, ...checked }, progress);
  } finally {
    if (opens) await ledger?.close();
    await discardUnusedCopy(place, progress.recorded);
  }
}

/**
 * Everything a new run can be refused for, checked without writing anything: a repository
 * without a commit, uncommitted changes (unless `allowDirty`), the workflow's own checks, a
 * `$RATCHET_HOME` that cannot hold the worktree, the models (provider, key, cassette, the Claude
 * Code binary and, for a workflow whose first model call comes late, its login), and a sandbox
 * that cannot work (unless the user opted out).
 */
async function checkStart<T extends WorkflowTypes>(
  definition: WorkflowDefinition<T>,
  options: StartOptions<T>,
  place: RunPlace,
  services: StartServices,
): Promise<{ checked: T['checked']; config: ResolvedConfig; changes: ChangeCount }> {
  const { repoRoot } = place;
  const git = new Git(repoRoot);
  await requireCommit(git, repoRoot);
  // `.ratchet/` (config, ledger) is kept out of git once a run starts (`.git/info/exclude`);
  // until then its untracked files are Ratchet's, not changes of the user's.
  const inputs = await inputPaths(repoRoot, options.inputs ?? []);
  const changes = await countChanges(
    git,
    (entry) => (entry.index === '?' && entry.path.startsWith('.ratchet/')) || inputs.has(entry.path),
  );
  if (changes.changes > 0 && !options.allowDirty) {
    throw new RatchetError('dirty-tree', `The working tree has ${describeChanges(changes)}.`, {
      hint: `Commit or stash them (${namedChanges(changes)}), or pass --allow-dirty to start from HEAD without them.`,
    });
  }
  const found = await definition.check(options.request, {
    repoRoot,
    git,
    config: options.config,
    env: services.env,
    runner: services.runner,
  });
  const config = found.config ?? options.config;
  await definition.preflight?.({ repoRoot, config });
  await requireWritableHome(config.home);
  // Fail fast on a missing key or a bad endpoint, before any branch, worktree or run exists.
  const notices = await checkModels(config, services, {
    ...(options.recordPath ? { recordPath: options.recordPath } : {}),
    ...(definition.checkLoginFirst ? { login: () => claudeCheckRunner(config, services.runner) } : {}),
  });
  // Model-written commands run only in a sandbox, unless the user opted out: refused before any model call.
  await requireSandbox(config, services.runner);
  for (const notice of notices) options.notice?.(notice);
  return { checked: found.checked, config, changes };
}

/** The repository-relative paths (as `git status` names them) of the inputs inside the repository. */
async function inputPaths(repoRoot: string, inputs: readonly string[]): Promise<Set<string>> {
  const root = await realpath(repoRoot);
  const paths = new Set<string>();
  for (const input of inputs) {
    // The CLI read the file already; one gone since is simply not an input any more.
    const path = relative(root, await realpath(input).catch(() => resolve(input)));
    if (path !== '' && path !== '..' && !path.startsWith('../') && !isAbsolute(path)) paths.add(path);
  }
  return paths;
}

async function* startChecked<T extends WorkflowTypes>(
  definition: WorkflowDefinition<T>,
  options: StartOptions<T>,
  services: EngineServices,
  start: { runId: string; place: RunPlace; checked: T['checked']; config: ResolvedConfig; changes: ChangeCount },
  progress: { recorded: boolean },
): AsyncGenerator<RatchetEvent, RunOutcome> {
  const { runId, place, config } = start;
  const { ledger } = services;
  const git = new Git(place.repoRoot);
  await git.addInfoExclude(RATCHET_EXCLUDES);
  const lock = await acquireRepoLock(await git.commonDir(), { runId });
  try {
    const baseCommit = await git.head();
    const info: RunInfo = {
      id: runId,
      ...place,
      hidden: [...new Set((options.hidden ?? []).map((path) => resolve(path)))],
      worktree: worktreePath(config.home, runId),
      branch: runBranch(runId),
      baseBranch: await git.currentBranch(),
      baseCommit,
      feature: definition.feature(options.request),
    };
    const models = startModels(config, services, options.recordPath ? { recordPath: options.recordPath } : {});
    await addRunWorktree(git, info.worktree, info.branch, baseCommit);
    let settled: Awaited<ReturnType<typeof definition.settle>>;
    let created;
    try {
      await shareDependencies(place.target, info.worktree, git);
      settled = await definition.settle(start.checked, {
        run: info,
        config,
        home: config.home,
        runner: services.runner,
      });
      created = await ledger.createRun({
        id: runId,
        workflow: definition.name,
        repoRoot: place.repoRoot,
        feature: info.feature,
        branch: info.branch,
        baseBranch: info.baseBranch,
        baseCommit,
        worktree: info.worktree,
        provider: models.provider,
        model: models.model,
        config: storedConfig(settled.settings, { ...place, hidden: info.hidden }, models.stored),
      });
    } catch (error) {
      // No run in the ledger tracks them (`reject` could not find them): they go with the failure.
      await discardRunWorktree(git, info.worktree, info.branch).catch(() => undefined);
      throw error;
    }
    progress.recorded = true;
    const run = asGitRun(created);
    // The notes ref is shared by every run: a run killed while writing a note leaves its lock.
    const removedLocks = await clearStaleGitLocks(place.repoRoot, run);
    const record = createRecorder(runId, ledger, services.clock);
    const { worktree, branch, feature } = info;
    yield await record({
      type: 'run-start',
      workflow: definition.name,
      feature,
      branch,
      worktree,
      baseCommit,
      resumed: false,
      ...models.startFields(baseCommit),
    });
    if (removedLocks.length > 0) yield await record({ type: 'git-lock-remove', files: removedLocks });
    if (start.changes.changes > 0) {
      yield await record({
        type: 'warning',
        message: `--allow-dirty: the run starts from HEAD (${baseCommit.slice(0, 8)}); it leaves out your ${describeChanges(start.changes)}.`,
      });
    }
    for (const event of settled.events) yield await record(event);
    return yield* runProcess({
      definition,
      run: info,
      settings: settled.settings,
      config,
      models,
      record,
      services,
      ...(options.signal ? { signal: options.signal } : {}),
      from: { kind: 'start', ...(options.confirm ? { confirm: options.confirm } : {}) },
      // Stopped by the user (no, or Ctrl-C at the confirmation): rejected; by a failure: failed.
      drop: (error) =>
        dropRun(
          place.repoRoot,
          run,
          ledger,
          error ? `${error.code}: ${error.message}` : null,
          error === null || error.code === 'interrupted' ? 'rejected' : 'failed',
        ),
    });
  } finally {
    await lock.release();
  }
}
