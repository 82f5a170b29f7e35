/**
 * The TUI's ports over the real thing: the team's file stores, the engine's sessions and
 * transitions, and the layer worktrees, through the same helpers as the CLI's team commands
 * (`continueIteration` and `groomTopic` persist each event before the TUI sees it;
 * `continueIteration` saves a checkpoint after each session, `advanceIteration` one after each
 * phase change). One AbortController for the TUI's life: `stop` (quitting) ends what runs.
 */
import { resolve } from 'node:path';
import { packageRoot } from '../../config/prompts.js';
import { RatchetError } from '../../core/errors.js';
import type { ModelClient } from '../../core/model.js';
import { systemClock } from '../../engine/effects.js';
import { currentLayerTarget, mergeCurrentLayer, teamLayerStores } from '../../engine/team/layer-state.js';
import { reviewLayer, setupLayer } from '../../engine/team/layer-worktrees.js';
import { createProcessRunner } from '../../process/runner.js';
import { advanceIteration } from '../../workflows/team/advance.js';
import { approveWrite, denyWrite } from '../../workflows/team/approvals.js';
import type { Speaker, TeamContext } from '../../workflows/team/context.js';
import { continueIteration, speakerModels } from '../../workflows/team/continue-iteration.js';
import type { TeamEvent } from '../../workflows/team/events.js';
import { createIterationStore } from '../../workflows/team/file-stores.js';
import { countAgentTurns } from '../../workflows/team/history.js';
import { groomTopic } from '../../workflows/team/groom-topic.js';
import { iterationCheckpoints } from '../../workflows/team/iteration-checkpoints.js';
import { iterationStores } from '../../workflows/team/iteration-session.js';
import { startIteration } from '../../workflows/team/start-iteration.js';
import { loadTeamContext } from '../../workflows/team/setup.js';
import { configFor, type ProviderFlags } from '../context.js';
import { recordingIteration, withIterationLedger } from '../team-ledger.js';
import type { TeamUiPorts } from './team-ui-ports.js';

export interface LiveTeamUiOptions {
  repoRoot: string;
  flags: ProviderFlags & { record?: string };
  /**
   * `--max-turns`: agent turns per phase of an iteration started in the TUI (default: the team's
   * max_turns), and of each grooming session (default: two rounds), as `team run` and `team groom`.
   */
  maxTurns: number | undefined;
}

async function currentIteration(ctx: TeamContext) {
  const { iteration, dir } = await createIterationStore(ctx.teamDir).getCurrent();
  return { iteration, stores: iterationStores(ctx, dir, iteration.id) };
}

/** The TUI's ports for the repository's team (refuses a repository without `.team/`). */
export async function createLiveTeamUiPorts(options: LiveTeamUiOptions): Promise<TeamUiPorts> {
  const { repoRoot, flags } = options;
  const stopping = new AbortController();
  const { signal } = stopping;
  const ctx = await loadTeamContext({ projectRoot: repoRoot, packageRoot: packageRoot(), env: process.env });
  const runner = createProcessRunner();
  let models: ((speaker: Speaker) => ModelClient) | undefined;
  /** Made on the first model call, so the TUI opens (and shows the log) without a provider set up. */
  const modelFor = async (): Promise<(speaker: Speaker) => ModelClient> => {
    models ??= speakerModels(await configFor(repoRoot, flags), {
      env: process.env,
      recordPath: flags.record ? resolve(flags.record) : undefined,
      sleep: (ms, sleepSignal) => systemClock.sleep(ms, sleepSignal),
    });
    return models;
  };
  // The iteration's ledger run records the calls of its sessions and phase changes (cli/team-ledger.ts).
  const ledgerTarget = async () => ({
    repoRoot,
    teamDir: ctx.teamDir,
    config: await configFor(repoRoot, flags),
    signal,
  });
  const checkpoints = iterationCheckpoints(ctx);
  const layerTarget = () => currentLayerTarget(teamLayerStores(repoRoot), repoRoot);

  return {
    async snapshot() {
      const current = await createIterationStore(ctx.teamDir).findCurrent();
      if (current === null) return null;
      const { iteration } = current;
      const stores = iterationStores(ctx, current.dir, iteration.id);
      const agents = ctx.config.agents.map((agent) => agent.name);
      return {
        iterationId: iteration.id,
        description: iteration.description,
        phase: iteration.phase,
        maxTurns: iteration.max_turns,
        turn: countAgentTurns(await stores.conversation.readPhaseHistory(), agents),
        currentLayer: iteration.current_layer ?? null,
        messages: await stores.conversation.readFull(),
        approvals: await stores.approvals.pending(),
      };
    },

    async start(description) {
      const config = await configFor(repoRoot, flags);
      const { iteration, workspace } = await startIteration(ctx, {
        description,
        maxTurns: options.maxTurns ?? ctx.config.max_turns,
        home: config.home,
      });
      return [`${iteration.id}: agents write in ${workspace.workspace} (branch ${workspace.branch}).`];
    },

    async *converse({ answer, moreTurns, onText }): AsyncGenerator<TeamEvent> {
      const models = await modelFor();
      yield* withIterationLedger(await ledgerTarget(), (record) =>
        continueIteration(
          ctx,
          { modelFor: models, runner, signal, record, onTextDelta: onText },
          { answer, moreTurns: moreTurns ?? undefined, pendingHint: 'Approve (a) or deny (d) each one first.' },
        ),
      );
    },

    async *groom({ topic, withCoach, onText }): AsyncGenerator<TeamEvent> {
      yield* groomTopic(
        ctx,
        { modelFor: await modelFor(), runner, signal, onTextDelta: onText },
        { topic, maxTurns: options.maxTurns ?? ctx.config.agents.length * 2, withCoach },
      );
    },

    async listApprovals() {
      return (await currentIteration(ctx)).stores.approvals.list();
    },

    async approve(id) {
      const { iteration, stores } = await currentIteration(ctx);
      const decision = await approveWrite(ctx, { iteration, stores, id, runner });
      if (decision.writeError !== null)
        throw new RatchetError(
          'usage',
          `Approved, but ${decision.approval.path} could not be written: ${decision.writeError}`,
        );
    },

    async deny(id, reason) {
      const { iteration, stores } = await currentIteration(ctx);
      await denyWrite({ iteration, stores, id, reason: reason ?? undefined });
    },

    async advance(options = {}) {
      const models = await modelFor();
      const result = await recordingIteration(await ledgerTarget(), (record) =>
        advanceIteration(ctx, { modelFor: models, signal, record, force: options.force === true }),
      );
      const layers = new Map<number, string[]>();
      for (const task of result.from === 'planning' ? (result.tasks ?? []) : [])
        layers.set(task.layer ?? 0, [...(layers.get(task.layer ?? 0) ?? []), task.id]);
      return [
        ...result.written.map((file) => `Wrote ${file}`),
        ...result.problems.map(
          (problem) =>
            `Could not extract ${problem.artifact}: ${problem.problem} (the reply is kept in ${problem.rawFile}).`,
        ),
        ...[...layers].sort((a, b) => a[0] - b[0]).map(([layer, ids]) => `  layer ${layer}: ${ids.join(', ')}`),
        `Phase: ${result.from} -> ${result.to}`,
      ];
    },

    listCheckpoints: () => checkpoints.list(),
    createCheckpoint: (description) => checkpoints.create(description),
    restoreCheckpoint: (number) => checkpoints.restore(number),

    async setupLayer() {
      return setupLayer(await layerTarget());
    },

    async reviewLayer() {
      return reviewLayer(await layerTarget());
    },

    async mergeLayer() {
      const config = await configFor(repoRoot, flags);
      const merged = await recordingIteration(await ledgerTarget(), (record) =>
        mergeCurrentLayer(repoRoot, { config, runner, env: process.env, signal }, record),
      );
      return merged.result;
    },

    stop() {
      stopping.abort(new Error('the TUI was closed'));
    },
  };
}
