import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { ResolvedConfig } from '../config/resolved.js';
import { Git } from '../git/git.js';
import { commandEnvironment } from '../process/env.js';
import type { ProcessRunner } from '../process/types.js';
import { editableInstallPaths } from '../verify/editable-installs.js';
import { PYTHON_ENVIRONMENTS, withEditableInstalls } from './editable-install-env.js';
import { gitCopyOf } from './plain-directory.js';
import { sandboxUnavailable, toolSandbox } from './tool-sandbox.js';
import { requireWritableHome, SHARED_DIRECTORIES, shareDependencies } from './worktree-setup.js';

/** Where the project's commands run for `doctor` and `refactor verify`. */
export interface ScratchCheckout {
  /** The temporary worktree (or copy) the commands run in. */
  dir: string;
  /** The commit it holds: HEAD of the repository; null for a copy of a directory that is not one. */
  commit: string | null;
  /** Runs the commands there, in the sandbox a run's commands get (see `toolSandbox`). */
  runner: ProcessRunner;
  /** The environment the commands start from (see `commandEnvironment`). */
  environment: Record<string, string>;
  /** Whether `runner` sandboxes anything. */
  sandboxed: boolean;
  /** Why it does not, when a sandbox was wanted (bubblewrap cannot work here). */
  notice: string | null;
  /**
   * The warnings since the last call: a shared dependency folder (`node_modules`, `.venv`) a
   * command replaced, restored before the next one (see `guardSharedDependencies`).
   */
  takeNotices(): string[];
}

export interface ScratchOptions {
  /** A git repository's root, or a directory that is not one. */
  target: string;
  config: ResolvedConfig;
  runner: ProcessRunner;
  /** Ratchet's environment, which the commands' allowlisted one is made from. */
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * Runs `body` with a temporary checkout of `target` as a run would get it, and removes it
 * afterwards whatever happens. `doctor`'s baseline and `refactor verify` run the project's own
 * commands, which write (`coverage/`, `dist/`, `*.tsbuildinfo`, `target/`, lock files) and run
 * whatever the dependencies hold: never in the user's checkout, never unsandboxed. A repository
 * gets a detached worktree of HEAD under `$RATCHET_HOME/scratch/` (a run starts from HEAD too, so
 * uncommitted changes are not part of it); a directory that is not a repository gets a copy there.
 * The dependency folders (`node_modules`, `.venv`) are shared into it as into a run's worktree,
 * and the commands run in the run's sandbox, with the checkout read-only.
 */
export async function withScratchCheckout<T>(
  options: ScratchOptions,
  body: (scratch: ScratchCheckout) => Promise<T>,
): Promise<T> {
  const { target, config } = options;
  await requireWritableHome(config.home);
  const parent = join(config.home, 'scratch');
  await mkdir(parent, { recursive: true });
  const dir = join(parent, `${basename(target)}-${randomBytes(4).toString('hex')}`);
  const isGit = await Git.isRepository(target);
  const git = isGit ? new Git(target) : undefined;
  let commit: string | null = null;
  try {
    if (git !== undefined) {
      commit = await git.head();
      await git.addDetachedWorktree(dir, commit);
      await shareDependencies(target, dir, git);
    } else {
      await shareDependencies(target, dir, await gitCopyOf(target, dir));
    }
    // The commands are the user's own (HEAD, not a model's): where no sandbox can be made they run
    // without one, and say so, rather than refuse as a run does.
    const problem = config.bash.sandbox === 'off' ? undefined : await sandboxUnavailable(config, options.runner);
    const effective = problem === undefined ? config : { ...config, bash: { ...config.bash, sandbox: 'off' as const } };
    await using sandbox = await toolSandbox(effective, options.runner, {
      protect: [target],
      worktree: dir,
      dependenciesOf: target,
      runId: 'scratch',
    });
    // As in a run: an editable install in the shared `.venv` points into the checkout, so the
    // scratch copy's own sources go first on PYTHONPATH (else the tests import the user's files,
    // or nothing when the sandbox hides the checkout).
    const { runner } = withEditableInstalls(sandbox, await editableInstallPaths(target, dir, PYTHON_ENVIRONMENTS));
    return await body({
      dir,
      commit,
      runner,
      environment: commandEnvironment(options.env, config.bash.env),
      sandboxed: sandbox.sandboxed,
      notice: problem === undefined ? null : `not sandboxed: ${problem}`,
      takeNotices: () => sandbox.takeNotices(),
    });
  } finally {
    // The links first: removing the directory must never follow one into the checkout's folders.
    // A workspace's node_modules is a folder of links (`shareNodeModules`): removed without following them.
    for (const name of SHARED_DIRECTORIES)
      await rm(join(dir, name), { force: true, recursive: true }).catch(() => undefined);
    if (git !== undefined && existsSync(dir)) await git.removeWorktree(dir, { force: true }).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    if (git !== undefined) await git.pruneWorktrees().catch(() => undefined);
  }
}
