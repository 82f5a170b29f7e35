import { RatchetError } from '../../core/errors.js';
import type { WorkflowDefinition } from '../definition.js';
import { backupDirectory, createBackup, restoreBackup } from './backup.js';
import { verifierCommands } from './planning.js';
import { prepareRefactor, type PreparedRefactor } from './prepare.js';
import { runBatches, type RefactorResult } from './run-batches.js';
import { RefactorRunSettingsSchema, type RefactorRunSettings } from './run-settings.js';
import { loadRefactorSettings, type RefactorSettings } from './settings.js';

/** What starts a refactor run. */
export interface RefactorRequest {
  /** What the refactoring should achieve; null: the index-driven clean-up plan. */
  goal: string | null;
  /** A critic reviews every patch before it is applied. */
  useCritic: boolean;
}

interface RefactorTypes {
  request: RefactorRequest;
  checked: { request: RefactorRequest; settings: RefactorSettings };
  settings: RefactorRunSettings;
  prepared: PreparedRefactor;
  state: never;
  result: RefactorResult;
}

/**
 * The whole-repository refactor of seed 002 as a workflow of the engine: a backup and the
 * baseline before anything changes, the code index, a risk-ordered plan (heuristic, refined by a
 * planner), the user's confirmation, then small batches, each a patch that passes admission, the
 * fast verifier (the full one every few batches) and the public API comparison before it is a
 * checkpoint. A directory that is not a git repository is worked on in a git copy. Its runs are
 * not resumed: what they committed is accepted (with --force when they stopped) or dropped.
 */
export const refactorWorkflow: WorkflowDefinition<RefactorTypes> = {
  name: 'refactor',
  startCommand: 'ratchet refactor run',
  settings: RefactorRunSettingsSchema,
  modelStages: ['refactor'],
  plainDirectories: true,
  // The first model call (the planner) comes after the backup, the baseline and the index.
  checkLoginFirst: true,
  verifiesCheckpointsTwice: true,
  feature: (request) => request.goal ?? 'whole-repository refactor',
  async check(request, { repoRoot, config }) {
    // `.refactor-bot.config.json` when the project has one, else `[refactor]`: the run's settings.
    const settings = await loadRefactorSettings(repoRoot, config);
    const refined = { ...config, refactor: settings };
    // A project with nothing to verify it is refused before any backup or worktree.
    await verifierCommands(repoRoot, settings, refined);
    return { checked: { request, settings }, config: refined };
  },
  async settle({ request, settings }, { run, config, home, runner }) {
    // Seed 002, 8.1: a full, revertable backup of the directory before anything changes.
    const backup = await createBackup(run.target, backupDirectory(home, run.target, run.id), runner, {
      git: run.isGit,
    });
    const commands = await verifierCommands(run.worktree, settings, config);
    return {
      settings: { goal: request.goal, critic: request.useCritic, settings, commands, backup },
      events: [
        { type: 'backup-create', bundle: backup.bundle, snapshot: backup.snapshot, directory: backup.directory },
      ],
    };
  },
  prepare: prepareRefactor,
  run(context, from) {
    if (from.kind !== 'start') throw new RatchetError('internal', 'A refactor run is not resumed.');
    return runBatches(context, from.prepared);
  },
  backups: {
    restoreCommand: 'ratchet refactor rollback',
    of: (settings) => settings.backup ?? null,
    create: createBackup,
    restore: restoreBackup,
  },
};
