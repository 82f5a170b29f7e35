/**
 * How a team iteration appears in the ledger: as one run (workflow `team`) per iteration, made by
 * the first team command that records a call in it, its id kept in `iteration.json`
 * (`ledger_run`). Each later command (`team run`, `continue`, `advance`, the TUI's) appends its
 * model and tool calls to the same run, so `ratchet history` lists the iteration, and `report`
 * shows every agent's, coach's and extraction's call with its stage, tokens and cost. The team
 * is not a run of the shared lifecycle: the iteration has its own branch and worktree, which the
 * run names, but no checkpoints or handoff notes; the run is `running` while a command works on
 * the iteration and says how the last command ended otherwise. Lifecycle verbs without a run id
 * (`accept`, `reject`, `status`, ...) never pick it (see `resolveRun`).
 */
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import type { ResolvedConfig } from '../../config/resolved.js';
import type { Clock } from '../../core/effects.js';
import type { Ledger } from '../../ledger/types.js';
import { createIterationStore } from '../../workflows/team/file-stores.js';
import type { TeamRecord } from '../../workflows/team/ledger-record.js';
import { systemClock } from '../effects.js';
import { createRecorder, type Recorder } from '../recorder.js';

/** The name team iterations are recorded under (`runs.workflow`). */
export const TEAM_WORKFLOW = 'team';

export interface IterationLedgerRun {
  /** Records an event in the iteration's run (creating the run on the first). */
  record: TeamRecord;
  /** The run's id once the first event made it, else null. */
  runId(): string | null;
  /** Says how this command ended; nothing when it recorded nothing. */
  finish(status: 'completed' | 'failed' | 'interrupted', error?: string): Promise<void>;
}

/** The ledger run of the current iteration of the team in `teamDir`. */
export function iterationLedgerRun(options: {
  ledger: Ledger;
  repoRoot: string;
  teamDir: string;
  config: ResolvedConfig;
  clock?: Clock;
}): IterationLedgerRun {
  const { ledger } = options;
  const iterations = createIterationStore(options.teamDir);
  let opened: { id: string; recorder: Recorder } | null = null;
  let opening: Promise<{ id: string; recorder: Recorder }> | null = null;

  // The first event comes once the command holds the iteration's lock (a session's first model
  // call, an extraction), so no two commands number the run's events at once.
  function open(): Promise<{ id: string; recorder: Recorder }> {
    // Parallel agent turns record at once: the run is made once.
    opening ??= make().then((made) => (opened = made));
    return opening;
  }

  async function make(): Promise<{ id: string; recorder: Recorder }> {
    const { iteration } = await iterations.getCurrent();
    const recorded = typeof iteration.ledger_run === 'string' ? await ledger.getRun(iteration.ledger_run) : undefined;
    let id: string;
    if (recorded !== undefined) {
      id = recorded.id;
      await ledger.updateRun(id, { status: 'running', error: null });
    } else {
      // The workspace's name (`team-<iteration>-<hex>`) is unique in $RATCHET_HOME, so in the ledger too.
      const workspace = typeof iteration.workspace === 'string' ? basename(iteration.workspace) : '';
      id = workspace.startsWith('team-') ? workspace : `team-${iteration.id}-${randomBytes(4).toString('hex')}`;
      await ledger.createRun({
        id,
        workflow: TEAM_WORKFLOW,
        repoRoot: options.repoRoot,
        feature: iteration.description,
        branch: typeof iteration.branch === 'string' ? iteration.branch : null,
        worktree: typeof iteration.workspace === 'string' ? iteration.workspace : null,
        baseCommit: typeof iteration.base_commit === 'string' ? iteration.base_commit : null,
        provider: options.config.provider.name,
        model: options.config.provider.model,
        config: { iteration: iteration.id },
      });
      await iterations.saveFields(iteration.id, { ledger_run: id });
    }
    return { id, recorder: createRecorder(id, ledger, options.clock ?? systemClock, await ledger.lastEventNumber(id)) };
  }

  return {
    async record(event) {
      await (await open()).recorder(event);
    },
    runId: () => opened?.id ?? null,
    async finish(status, error) {
      if (opened === null) return;
      await ledger.updateRun(opened.id, { status, ...(error === undefined ? {} : { error }) });
    },
  };
}
