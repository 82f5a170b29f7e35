/**
 * The engine bound to the workflows this package ships, for library users (`src/index.ts`): the
 * registry the engine finds a recorded run's workflow in, and the entry points with the
 * signatures of earlier versions (`startTdd`, `resumeTdd`, `acceptRun(repoRoot, run, ledger,
 * options)`...). The CLI uses the same registry (`src/workflows/index.ts` lists the workflows).
 */
import type { Clock } from './core/effects.js';
import type { RatchetEvent } from './core/events.js';
import type { ResolvedConfig } from './config/resolved.js';
import type { Ledger } from './ledger/types.js';
import type { EngineServices } from './engine/effects.js';
import type { GitRun } from './engine/git-run.js';
import { workflowRegistry } from './engine/shipped-registry.js';
import { resumeRun } from './engine/resume-run.js';
import type { RunOutcome } from './engine/run-process.js';
import { startRun } from './engine/start-run.js';
import { acceptRun as acceptRecordedRun, type AcceptResult } from './engine/verbs/accept-run.js';
import { rejectRun as rejectRecordedRun } from './engine/verbs/reject-run.js';
import { repairNotes as repairRecordedNotes } from './engine/verbs/repair-notes.js';
import { rollbackRun as rollbackRecordedRun } from './engine/verbs/rollback-run.js';
import { tddWorkflow } from './workflows/tdd/definition.js';

export type { RunOutcome };

/** The workflows of this package, by the name their runs are recorded under. */
export const workflows = workflowRegistry();

export interface StartTddOptions {
  repoRoot: string;
  feature: string;
  config: ResolvedConfig;
  allowDirty: boolean;
  /** Append every model call to this cassette (an absolute path). */
  recordPath?: string;
  signal?: AbortSignal;
}

/** Starts `ratchet tdd`: branch + worktree from HEAD, then the loop (`startRun` of the TDD workflow). */
export function startTdd(options: StartTddOptions, services: EngineServices): AsyncGenerator<RatchetEvent, RunOutcome> {
  const { repoRoot, feature, ...rest } = options;
  return startRun(tddWorkflow, { ...rest, directory: repoRoot, request: { feature } }, services);
}

export interface ResumeTddOptions {
  repoRoot: string;
  runId?: string;
  config: ResolvedConfig;
  recordPath?: string;
  signal?: AbortSignal;
}

/** `ratchet resume`: continues a run from its last checkpoint (`resumeRun` over this package's workflows). */
export function resumeTdd(
  options: ResumeTddOptions,
  services: EngineServices,
): AsyncGenerator<RatchetEvent, RunOutcome> {
  return resumeRun(workflows, options, services);
}

/** `ratchet accept`: merges the run into the branch it started from and removes its worktree. */
export function acceptRun(
  repoRoot: string,
  run: GitRun,
  ledger: Ledger,
  options: { force: boolean },
  clock?: Clock,
): Promise<AcceptResult & { removedLocks: string[] }> {
  return acceptRecordedRun(repoRoot, run, { ledger, registry: workflows, ...(clock ? { clock } : {}) }, options);
}

/** `ratchet reject`: removes the run's worktree and branch. */
export function rejectRun(
  repoRoot: string,
  run: GitRun,
  ledger: Ledger,
  clock?: Clock,
): Promise<{ removedLocks: string[] }> {
  return rejectRecordedRun(repoRoot, run, { ledger, registry: workflows, ...(clock ? { clock } : {}) });
}

/** `ratchet rollback <commit>`: moves the run back to one of its checkpoints. */
export function rollbackRun(
  repoRoot: string,
  run: GitRun,
  target: string,
  ledger: Ledger,
  clock?: Clock,
): ReturnType<typeof rollbackRecordedRun> {
  return rollbackRecordedRun(repoRoot, run, target, { ledger, registry: workflows, ...(clock ? { clock } : {}) });
}

/** `ratchet repair-notes`: restores the run's handoff notes from the ledger. */
export function repairNotes(
  repoRoot: string,
  run: GitRun,
  ledger: Ledger,
  clock?: Clock,
): ReturnType<typeof repairRecordedNotes> {
  return repairRecordedNotes(repoRoot, run, { ledger, registry: workflows, ...(clock ? { clock } : {}) });
}
