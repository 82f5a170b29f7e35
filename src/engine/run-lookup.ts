import { z } from 'zod';
import { RatchetError } from '../core/errors.js';
import { Git } from '../git/git.js';
import { runLockHeld } from '../git/repo-lock.js';
import type { Ledger, RunRow } from '../ledger/types.js';
import { iterationLockHeld } from '../workflows/team/iteration-lock.js';
import { teamDirOf } from '../workflows/team/setup.js';
import { asGitRun, isClosed, type GitRun } from './git-run.js';
import { TEAM_WORKFLOW } from './team/iteration-ledger.js';

/**
 * The run named on the command line, or the latest run of the repository that is not a team
 * iteration's (that one records the team's calls but is no run of the lifecycle: `accept`,
 * `reject` or `rollback` without an id never act on it, and it is refused when named; the
 * commands that only read a run use `findRun` with `anyWorkflow`), with its git fields.
 */
export async function resolveRun(ledger: Ledger, runId: string | undefined): Promise<GitRun> {
  return asGitRun(await findRun(ledger, runId));
}

/**
 * The run as `resolveRun` finds it, without requiring git fields: a run that never made its
 * branch or worktree (a team iteration's before its workspace) has none, and the commands that
 * only read it (`history`, `report`) show what it has.
 */
export async function findRun(
  ledger: Ledger,
  runId: string | undefined,
  options: { anyWorkflow?: boolean } = {},
): Promise<RunRow> {
  const run = runId
    ? await ledger.getRun(runId)
    : await ledger.latestRun(options.anyWorkflow === true ? {} : { excludeWorkflow: TEAM_WORKFLOW });
  if (!run) throw noRunError(runId);
  if (run.workflow === TEAM_WORKFLOW && options.anyWorkflow !== true) throw teamRunError(run);
  return run;
}

/**
 * A team iteration's run named to a lifecycle verb (`status`, `accept`, `reject`, `rollback`,
 * ...): it has no checkpoints or handoff notes to act on, and its branch and worktrees belong to
 * the `ratchet team` commands, so the verb refuses before it reads or changes anything.
 */
function teamRunError(run: RunRow): RatchetError {
  return new RatchetError(
    'usage',
    `Run ${run.id} is a team iteration's ledger run: it records the team's model and tool calls, and is no run that status, accept, reject or rollback act on.`,
    {
      hint:
        'The iteration is worked with `ratchet team`: `team ui`, `team approvals`, `team worktrees review` and `team worktrees merge` (each layer merged and verified), `team checkpoint list|restore`; ' +
        `\`ratchet history\` and \`ratchet report ${run.id}\` show its calls${run.branch === null ? '' : `, and its branch ${run.branch} is merged with git when you take it`}.`,
    },
  );
}

/** The error for a run id this repository's ledger does not hold, or for a repository with no run yet. */
export function noRunError(runId: string | undefined): RatchetError {
  return runId
    ? new RatchetError('not-found', `No run ${runId} in this repository.`, {
        hint: 'Check the id and the directory: a run belongs to the repository it started in, which has a folder .ratchet/runs/<run-id> for it (`ratchet status` shows its latest run).',
      })
    : new RatchetError('not-found', 'No runs in this repository yet.', {
        hint: 'Start one with `ratchet tdd "<feature>"` or `ratchet refactor run`, or try `ratchet demo`.',
      });
}

/** Whether a live process holds the repository lock for this run (it is being worked on now). */
export async function runIsActive(repoRoot: string, runId: string): Promise<boolean> {
  return runLockHeld(await new Git(repoRoot).commonDir(), runId);
}

/** What a team iteration's ledger run stores (`iteration-ledger.ts`): the iteration it records. */
const TeamRunConfigSchema = z.object({ iteration: z.string().min(1) });

/**
 * The runs `running` in the ledger that no process holds the lock for: killed (kill -9, a crash).
 * A run of the lifecycle holds the repository lock; a team iteration's run is worked on by team
 * commands, which hold the iteration's lock instead (never the repository's).
 */
export async function orphanedRuns(
  repoRoot: string,
  runs: readonly Pick<RunRow, 'id' | 'status' | 'workflow' | 'config'>[],
): Promise<Set<string>> {
  const running = runs.filter((run) => run.status === 'running');
  if (running.length === 0) return new Set();
  const commonDir = await new Git(repoRoot).commonDir();
  const gone = new Set<string>();
  for (const run of running) {
    const team = run.workflow === TEAM_WORKFLOW ? TeamRunConfigSchema.safeParse(run.config) : undefined;
    const held = team?.success
      ? await iterationLockHeld(teamDirOf(repoRoot), team.data.iteration)
      : await runLockHeld(commonDir, run.id);
    if (!held) gone.add(run.id);
  }
  return gone;
}

/** A run that is over: completed, or accepted, rejected or rolled back. `resume` has nothing to do for it. */
export function isFinished(run: Pick<RunRow, 'status'>): boolean {
  return run.status === 'completed' || isClosed(run);
}
