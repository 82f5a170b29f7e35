import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Git } from '../git/git.js';
import type { ProcessRunner } from '../process/types.js';
import { makeShare, matchesShare, planNodeModules, type NodeModulesShare } from './share-node-modules.js';
import { SHARED_DIRECTORIES } from './worktree-setup.js';

/**
 * The dependency folders `shareDependencies` put in a run's worktree, kept as it made them. The
 * links live in the worktree, which the model's commands may write: a model that replaces
 * `node_modules` (or `.venv`) with a folder of its own, holding a `vitest` or `python` that
 * reports whatever it likes, would have the run's verification run that program. The entries are
 * ignored by git and skipped by the fingerprint, so nothing else would see the swap.
 */
export interface SharedDependencyGuard {
  /**
   * Puts back each shared entry that is not exactly what sharing makes (another link target, a
   * folder of its own, an entry added to or taken from a folder of links): removed without
   * following links, shared again. Returns the names it restored.
   */
  restore(): Promise<string[]>;
}

/**
 * The guard of `worktree`'s entries shared from `source`. What sharing makes is worked out once,
 * from the checkout (which the sandbox hides or shows read-only), never from the worktree; an
 * entry the worktree's HEAD tracks (a committed `venv`) was never shared and is left alone.
 */
export async function guardSharedDependencies(source: string, worktree: string): Promise<SharedDependencyGuard> {
  const names = SHARED_DIRECTORIES.filter((name) => existsSync(join(source, name)));
  // Unknown (git failed): every entry is guarded, as the safe side.
  const tracked =
    names.length === 0 || !existsSync(join(worktree, '.git'))
      ? []
      : await new Git(worktree).existingPaths('HEAD', names).catch(() => []);
  const shares = new Map<string, NodeModulesShare>();
  for (const name of names.filter((entry) => !tracked.includes(entry))) {
    const from = join(source, name);
    shares.set(
      name,
      name === 'node_modules' ? await planNodeModules(from, source, worktree) : { kind: 'link', target: from },
    );
  }
  const restoreNow = async (): Promise<string[]> => {
    const restored: string[] = [];
    for (const [name, share] of shares) {
      const to = join(worktree, name);
      if (await matchesShare(share, to)) continue;
      // A link is removed, never followed; a folder of links loses only its links.
      await rm(to, { recursive: true, force: true });
      await makeShare(share, to);
      restored.push(name);
    }
    return restored;
  };
  // Commands started together must not both remove and share again the same entry.
  let last: Promise<unknown> = Promise.resolve();
  return {
    restore() {
      const next = last.then(restoreNow, restoreNow);
      last = next;
      return next;
    },
  };
}

/** When a restore happened: before a command, or once the agent's work left its hands. */
type RestoreMoment = 'before-command' | 'work-handed-over';

/** What a run says when it restored `name`. */
function restoredMessage(name: string, moment: RestoreMoment): string {
  const when =
    moment === 'before-command'
      ? 'before running the next command'
      : 'once the agent handed its work over (the folder is not left swapped in the worktree)';
  return `The agent replaced or changed ${name} in the worktree (shared from your checkout); Ratchet restored it ${when}, so no program of the agent's judges the run.`;
}

/**
 * Checks and restores the shared folders now, `notice` hearing each restore: for the points where
 * the agent's work leaves its hands with no command after it (a stage's end, a checkpoint, the
 * run's end, disposing the sandbox), where a swap by its last command or a file-write tool would
 * otherwise stay in the worktree.
 */
export async function restoreSharedNow(guard: SharedDependencyGuard, notice: (message: string) => void): Promise<void> {
  for (const name of await guard.restore()) notice(restoredMessage(name, 'work-handed-over'));
}

/**
 * `runner`, with the worktree's shared dependency folders checked (and restored) before every
 * command: the agent's Bash and the tests, lint and verifiers alike. `notice` hears each restore.
 */
export function guardedRunner(
  runner: ProcessRunner,
  guard: SharedDependencyGuard,
  notice: (message: string) => void,
): ProcessRunner {
  return {
    ...runner,
    async run(spec) {
      for (const name of await guard.restore()) notice(restoredMessage(name, 'before-command'));
      return runner.run(spec);
    },
  };
}
