import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ResolvedConfig } from '../../config/resolved.js';
import { createSlots, type Slots } from '../../core/slots.js';
import type { RunModels } from '../../agent/models/run-models.js';
import { Git } from '../../git/git.js';
import { commandEnvironment } from '../../process/env.js';
import type { ProcessRunner } from '../../process/types.js';
import type { RunInfo, TaskSpace, TaskSpacePort } from '../../workflows/definition.js';
import { requireSandbox, toolSandbox } from '../tool-sandbox.js';
import { addRunWorktree, shareDependencies } from '../worktree-setup.js';

export interface TaskSpacesOptions {
  run: RunInfo;
  config: ResolvedConfig;
  models: RunModels;
  runner: ProcessRunner;
  env: Record<string, string | undefined>;
  /** `.ratchet/runs/<run-id>/`: each task's prompt files go under it. */
  runDir: string;
  /**
   * A branch left by an earlier process is made anew from the start point instead of checked out
   * again (a queue worker: a job started again begins from its start point, not a dead worker's commits).
   */
  restart?: boolean;
  /**
   * The checkout whose installed dependency folders (`node_modules`, `.venv`) each task's worktree
   * shares, read-only in its sandbox; default `run.target` (the user's checkout). A queue worker's
   * repository is a bare fetch target with none: it names a checkout of its own machine.
   */
  dependencies?: string;
  /**
   * Where worktrees are added and removed one at a time (default: this port's own lock). Local
   * worker processes of one run share the coordinator's, as they share the repository.
   */
  serial?: Slots;
}

/** `ratchet/<run-id>-<key>-<attempt>`: beside the run's branch, one per attempt of a task. */
export function taskBranch(runId: string, key: string, attempt: number): string {
  return `ratchet/${runId}-${key}-${attempt}`;
}

/**
 * The local pool's task spaces: each attempt of a task gets a worktree beside the run's
 * (`$RATCHET_HOME/worktrees/<run-id>-tasks/<key>-<attempt>`) on its own branch, the checkout's
 * dependency folders shared into it, a sandbox of its own (the task's agent and tests write only
 * there) and its own agents. A branch left by an earlier process (a resumed run) is checked out
 * again rather than made anew.
 *
 * Worktrees are added and removed one at a time: git keeps them in `.git/worktrees/`, and a
 * `worktree add` that reads another one half made (or a prune that drops it) fails ("failed to
 * read .git/worktrees/T6-1/commondir"), as do two writers of `.git/info/exclude`. Stale entries
 * (a killed process's worktrees, deleted by hand) are pruned once, before the first worktree;
 * those this port makes go with their space. Whether bubblewrap works is asked once too.
 */
export function createTaskSpaces(options: TaskSpacesOptions): TaskSpacePort {
  const { run, config } = options;
  const git = new Git(run.repoRoot);
  const environment = commandEnvironment(options.env, config.bash.env);
  const serially = options.serial ?? createSlots(1);
  let pruned: Promise<void> | undefined;
  let sandboxChecked: Promise<void> | undefined;
  /**
   * The run's task branches, listed once and then kept up to date here (one git process per run
   * instead of one per task): only this port makes them, one run at a time (the run lock). A queue
   * worker (`restart`) asks git each time: its repository is fetched into between jobs.
   */
  let listed: Promise<Set<string>> | undefined;
  const prefix = `ratchet/${run.id}-`; // of every `taskBranch` of the run
  const branchExists = async (branch: string): Promise<boolean> => {
    if (options.restart === true) return git.branchExists(branch);
    const listing = (listed ??= git
      .listBranches('ratchet/')
      .then((names) => new Set(names.filter((name) => name.startsWith(prefix)))));
    // A failed listing is not kept.
    listing.catch(() => {
      if (listed === listing) listed = undefined;
    });
    return (await listing).has(branch);
  };
  /** Adds the worktree; returns the commit it starts at. */
  const addWorktree = async (worktree: string, branch: string, startPoint: string): Promise<string> => {
    if (existsSync(worktree)) await git.removeWorktree(worktree, { force: true });
    await (pruned ??= git.pruneWorktrees());
    let exists = await branchExists(branch);
    if (options.restart === true && exists) {
      await git.deleteBranch(branch, { force: true });
      exists = false;
    }
    if (exists) {
      await git.addWorktree(worktree, branch);
      return new Git(worktree).head();
    }
    try {
      await addRunWorktree(git, worktree, branch, startPoint, { branchExists: false });
    } catch (error) {
      // Perhaps half made: asked of git again next time.
      listed = undefined;
      throw error;
    }
    if (listed !== undefined) (await listed).add(branch);
    // A commit id is where the new branch is; anything else (a ref) is asked of git.
    return /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(startPoint) ? startPoint : new Git(worktree).head();
  };
  return {
    async open({ key, attempt, startPoint }): Promise<TaskSpace> {
      const branch = taskBranch(run.id, key, attempt);
      const worktree = join(dirname(run.worktree), `${run.id}-tasks`, `${key}-${attempt}`);
      await mkdir(dirname(worktree), { recursive: true });
      const dependencies = options.dependencies ?? run.target;
      const head = await serially(async () => {
        const added = await addWorktree(worktree, branch, startPoint);
        await shareDependencies(dependencies, worktree, new Git(worktree));
        return added;
      });
      await (sandboxChecked ??= requireSandbox(config, options.runner));
      const sandbox = await toolSandbox(
        config,
        options.runner,
        {
          protect: [...new Set([run.repoRoot, run.target, run.worktree, dependencies])],
          worktree,
          dependenciesOf: dependencies,
          runId: `${run.id}-${key}`,
        },
        { checked: true },
      );
      const agents = options.models.open({
        toolRunner: sandbox.runner,
        cliRunner: sandbox.claudeRunner,
        environment,
        promptDir: join(options.runDir, 'prompts', key),
      });
      return {
        worktree,
        branch,
        head,
        commands: { runner: sandbox.runner, environment },
        agents,
        takeNotices: () => sandbox.takeNotices(),
        restoreShared: () => sandbox.restoreShared(),
        async [Symbol.asyncDispose]() {
          await sandbox[Symbol.asyncDispose]();
          await serially(() => git.removeWorktree(worktree, { force: true })).catch(() => undefined);
        },
      };
    },
  };
}
