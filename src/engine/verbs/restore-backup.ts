import { join } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import type { EventOf } from '../../core/events.js';
import type { ProcessRunner } from '../../process/types.js';
import type { RunBackup } from '../../workflows/definition.js';
import { systemClock } from '../effects.js';
import { isClosed, type GitRun } from '../git-run.js';
import type { IdGenerator } from '../../core/effects.js';
import { rollbackChain, type RollbackChain } from '../rollback-chain.js';
import { readRunConfig } from '../run-config.js';
import { recordRollback, rollbacksOf } from '../rollbacks.js';
import { rejectRun } from './reject-run.js';
import type { RunVerbContext } from './verb-context.js';

/** What restoring a run's backup would do, for the confirmation. */
export interface BackupRestorePlan {
  run: GitRun;
  /** The directory the backup is of (the run's target). */
  target: string;
  isGit: boolean;
  backup: RunBackup;
  chain: RollbackChain;
  /** What the restore does, in a few sentences (the confirmation shows it). */
  warning: string;
}

export interface BackupRestoreResult {
  plan: BackupRestorePlan;
  /** The `backup-restore` event recorded for the run. */
  restore: EventOf<'backup-restore'>;
  /** Where the state the restore replaced is kept. */
  safety: RunBackup;
  /** The runs accepted after this one started that the restore undid (with --force). */
  undone: RunList;
  /** The runs rolled back since whose changes the backup brought back (with --force), and when they were. */
  revived: RunList & { at: string };
  /** Where the restore put things back: the branch, or the directory. */
  where: string;
}

/**
 * `ratchet refactor rollback`: restores the directory a run worked on from the backup the run
 * made before it changed anything (seed 002, 8.1: revertable), after backing up the state it
 * replaces (nothing is lost by a rollback). Runs accepted since go with it and runs rolled back
 * since whose changes the backup holds come back: refused unless `force`, never silently. A run
 * that was not accepted has its worktree and branch dropped too. `confirm` sees the plan first;
 * false changes nothing (null is returned). On record: the run's status `rolled-back` and a
 * `backup-restore` event, for it and for each run it undid.
 */
export async function restoreRunBackup(
  repoRoot: string,
  run: GitRun,
  context: RunVerbContext & { runner: ProcessRunner; ids: IdGenerator },
  options: { force: boolean; confirm: (plan: BackupRestorePlan) => Promise<boolean> },
): Promise<BackupRestoreResult | null> {
  const { ledger } = context;
  const { workflow, settings, target, isGit } = readRunConfig(context.registry, run);
  const backup = workflow.backups?.of(settings) ?? null;
  if (workflow.backups === undefined || backup === null)
    throw new RatchetError('not-found', `Run ${run.id} has no backup recorded.`);
  const backups = workflow.backups;
  const where = isGit && run.baseBranch ? `branch ${run.baseBranch}` : target;
  // The backup is from before the run: runs accepted since go with it, runs rolled back since
  // whose changes it holds come back. Neither happens silently (seed 002, 8.1: revertable).
  const chain = await rollbackChain(ledger, run, { dir: target, isGit });
  const undone = runList(chain.undone.map((other) => other.id));
  const revived = runList(chain.revived.map((entry) => entry.run.id));
  const revivedAt =
    chain.revived.length === 1
      ? `at ${chain.revived[0]?.rolledBackAt ?? ''}`
      : chain.revived.map((entry) => `${entry.run.id} at ${entry.rolledBackAt}`).join(', ');
  if (!options.force && (chain.undone.length > 0 || chain.revived.length > 0)) {
    const newest = chain.undone[0];
    const reasons = [
      newest
        ? `Rolling back run ${run.id} would also undo ${undone.text}, accepted after it started: the backup of run ${run.id} is from before ${undone.text}, so ${where} would lose ${undone.their} changes too, while ${undone.they} would still be marked accepted.`
        : '',
      chain.revived.length > 0
        ? `The backup of run ${run.id} holds the changes of ${revived.text}, rolled back since (${revivedAt}): restoring it would bring them back on ${where}, while ${revived.they} would stay marked rolled back.`
        : '',
    ];
    const hints = [
      newest
        ? hasBackup(context, newest)
          ? `Roll back the newest first: \`${backups.restoreCommand} ${newest.id}\`; or pass --force to undo ${undone.them} too (marked rolled back as well).`
          : `Run ${newest.id} (${newest.workflow}) has no backup: undo it with git first (git revert), or pass --force to undo ${undone.them} too (marked rolled back as well).`
        : '',
      chain.revived.length > 0
        ? `Pass --force to restore the backup anyway (the changes of ${revived.text} come back).`
        : '',
    ];
    throw new RatchetError('usage', reasons.filter(Boolean).join(' '), {
      hint: hints.filter(Boolean).join(' '),
      details: { undone: undone.ids, revived: revived.ids },
    });
  }
  const previous = run.status === 'rolled-back' ? (await rollbacksOf(ledger, run.id)).at(-1) : undefined;
  const warning =
    `This puts ${target} back as it was before run ${run.id}: ${isGit && run.baseBranch ? `branch ${run.baseBranch} goes back to its commit then (commits made on it since leave it), ` : ''}` +
    'and files changed or added since, committed or not, are replaced or removed.' +
    // Nothing of a run that was never accepted is on the user's branch: reject is enough.
    (run.status === 'rolled-back'
      ? ` Run ${run.id} was already rolled back${previous ? ` at ${previous.timestamp}` : ''}: this restores the same backup again.`
      : isClosed(run)
        ? ''
        : ` Run ${run.id} was never accepted: \`ratchet reject ${run.id}\` drops it and leaves your branch and files as they are.`) +
    (chain.undone.length > 0
      ? ` It also undoes ${undone.text}, accepted after run ${run.id} started: ${undone.they} ${undone.ids.length === 1 ? 'is' : 'are'} marked rolled back too.`
      : '') +
    (chain.revived.length > 0
      ? ` The backup holds the changes of ${revived.text}, rolled back since (${revivedAt}): they come back on ${where}.`
      : '');
  const plan: BackupRestorePlan = { run, target, isGit, backup, chain, warning };
  if (!(await options.confirm(plan))) return null;
  // Nothing is lost by a rollback: the state it replaces is backed up first, like the run's.
  const safety = await backups.create(
    target,
    join(backup.directory, `before-rollback-${context.ids.runId()}`),
    context.runner,
    { git: isGit },
  );
  const branch = isGit ? run.baseBranch : null;
  await backups.restore(target, backup, context.runner, { branch });
  // A run that was not accepted still has its worktree and branch: the rollback drops them,
  // as a reject would, so that nothing of the run is left.
  if (!isClosed(run)) await rejectRun(repoRoot, run, context);
  // On record: status `rolled-back` and a `backup-restore` event (when, from what, and where
  // the state it replaced is kept), which `status`, `history` and `report` show.
  const restored = {
    target,
    backup: backup.directory,
    safetyBackup: safety.directory,
    branch: isGit && backup.bundle ? branch : null,
  };
  const clock = context.clock ?? systemClock;
  const restore = await recordRollback(ledger, run, restored, clock);
  // The runs it undid (--force) are rolled back too, each with its own event naming this run.
  for (const other of chain.undone) await recordRollback(ledger, other, { ...restored, undoneBy: run.id }, clock);
  return { plan, restore, safety, undone, revived: { ...revived, at: revivedAt }, where };
}

/** Whether the run recorded a backup its workflow can restore. */
function hasBackup(context: RunVerbContext, run: GitRun): boolean {
  const { workflow, settings } = readRunConfig(context.registry, run);
  return workflow.backups !== undefined && workflow.backups.of(settings) !== null;
}

/** Run ids as a sentence names them: `run A`, `runs A and B`, `runs A, B and C`, with pronouns. */
export interface RunList {
  ids: string[];
  text: string;
  they: string;
  them: string;
  their: string;
}

function runList(ids: string[]): RunList {
  const one = ids.length === 1;
  const names = ids.length > 1 ? `${ids.slice(0, -1).join(', ')} and ${ids.at(-1) ?? ''}` : (ids[0] ?? '');
  return {
    ids,
    text: `${one ? 'run' : 'runs'} ${names}`,
    they: one ? 'it' : 'they',
    them: one ? 'it' : 'them',
    their: one ? 'its' : 'their',
  };
}
