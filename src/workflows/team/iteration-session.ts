/**
 * Wiring shared by every front end (the CLI's commands, the TUI): the stores of the current
 * iteration, the policy of its phase, the engine's ports, and the persistence of its events.
 * Front ends iterate the events, call `persistEvent` for each, and render.
 */
import { join } from 'node:path';
import type { ModelClient } from '../../core/model.js';
import type { ProcessRunner } from '../../process/types.js';
import { createCheckpointStore } from './checkpoints.js';
import type { SessionPorts, Speaker, TeamContext, TeamFileTools } from './context.js';
import { runSession } from './engine.js';
import { countAgentTurns } from './history.js';
import { holdingIterationLock } from './iteration-lock.js';
import type { TeamEvent } from './events.js';
import {
  createApprovalStore,
  createArtifactStore,
  createConversationStore,
  createDebugStore,
  createIterationStore,
} from './file-stores.js';
import { createTeamFileTools } from './file-tools.js';
import { groomingPolicy, iterationPolicy, type SessionPolicy } from './policy.js';
import type {
  ApprovalStore,
  ArtifactStore,
  CheckpointStore,
  ConversationStore,
  DebugStore,
  IterationStore,
  TeamStores,
} from './stores.js';
import { tasksSummary } from './transitions.js';
import { agentWorkspaces } from './layers/agent-workspaces.js';
import { routeByTask } from './layers/task-router.js';
import { recordingFiles, recordingModels, type TeamRecord } from './ledger-record.js';
import type { Iteration, TeamTask } from './types.js';
import { recordedWorkspace, workspaceChanges, type IterationWorkspace } from './workspace.js';

export interface IterationStores extends TeamStores {
  iterations: IterationStore;
  approvals: ApprovalStore;
  artifacts: ArtifactStore;
  checkpoints: CheckpointStore;
}

/** What a session needs from outside: models, a process runner for the file tools, a signal. */
export interface SessionDependencies {
  modelFor: (speaker: Speaker) => ModelClient;
  runner: ProcessRunner;
  signal?: AbortSignal;
  /** Each fragment of a speaker's text as it streams (see `SessionPorts.onTextDelta`). */
  onTextDelta?: (speaker: string, delta: string) => void;
  /**
   * Records the iteration's model and tool calls in the ledger (ledger-record.ts); absent:
   * nothing is recorded. Grooming sessions belong to no iteration and are never recorded.
   */
  record?: TeamRecord;
}

export function iterationStores(ctx: TeamContext, iterationDir: string, iterationId: string): IterationStores {
  const iterations = createIterationStore(ctx.teamDir);
  return {
    iterations,
    conversation: createConversationStore(iterationDir, ctx.redact),
    debug: createDebugStore(iterationDir, ctx.redact),
    approvals: createApprovalStore(iterationDir),
    artifacts: createArtifactStore(iterationDir),
    checkpoints: createCheckpointStore(iterationDir, {
      phase: async () => {
        const { iteration } = await iterations.getCurrent();
        return iteration.id === iterationId ? iteration.phase : 'unknown';
      },
    }),
  };
}

/** Persists what an event carries: messages, debug entries, pending approvals. */
export async function persistEvent(
  stores: { conversation: ConversationStore; debug: DebugStore; approvals: ApprovalStore | null },
  event: TeamEvent,
): Promise<void> {
  switch (event.type) {
    case 'AppendMessage':
      await stores.conversation.append(event.msg);
      return;
    case 'AppendDebug':
      await stores.debug.append(event.entry);
      return;
    case 'ApprovalRequested':
      await stores.approvals?.add(event.approval);
      return;
    case 'SessionStarted':
    case 'KickoffInjected':
    case 'AgentTurnStarted':
    case 'AgentPassed':
    case 'FileOperationLogged':
    case 'CoachTurnStarted':
    case 'ParallelRoundStarted':
    case 'PhaseCompleteSignaled':
    case 'CoachAskedPM':
    case 'PauseForApprovals':
    case 'SessionComplete':
      // Carried by an AppendMessage of their own, or nothing to keep.
      return;
  }
}

export interface OpenedIterationSession {
  iteration: Iteration;
  dir: string;
  stores: IterationStores;
  policy: SessionPolicy;
  events: AsyncGenerator<TeamEvent, void>;
}

/**
 * The agents' file tools of an iteration session: over the iteration's workspace, or, in the
 * implementation phase once the layer's worktrees are set up, each agent's over its task's
 * worktree (read-only over the workspace without one), all through the same file guard.
 */
async function iterationFileTools(
  ctx: TeamContext,
  input: {
    iteration: Iteration;
    workspace: IterationWorkspace;
    tasks: TeamTask[] | null;
    nextApprovalId: () => string;
    runner: ProcessRunner;
  },
): Promise<{ tools: TeamFileTools; byTask: boolean }> {
  const toolsOver = (workspace: string, readOnly?: string): TeamFileTools =>
    createTeamFileTools({
      workspace,
      access: ctx.config.file_access,
      nextApprovalId: input.nextApprovalId,
      phase: input.iteration.phase,
      runner: input.runner,
      ...(readOnly === undefined ? {} : { readOnly }),
    });
  const shared = toolsOver(input.workspace.workspace);
  const spaces = await agentWorkspaces({
    phase: input.iteration.phase,
    layer: input.iteration.current_layer ?? 0,
    workspace: input.workspace,
    tasks: input.tasks,
    agents: ctx.config.agents.map((agent) => agent.name),
  });
  if (spaces === null) return { tools: shared, byTask: false };
  const layer = input.iteration.current_layer ?? 0;
  const byAgent = new Map(
    [...spaces].map(([agent, space]) => [
      agent,
      space.kind === 'tasks'
        ? routeByTask({
            layer,
            tasks: space.tasks.map((task) => ({ task: task.task, tools: toolsOver(task.worktree, task.readOnly) })),
          })
        : toolsOver(space.worktree, space.why),
    ]),
  );
  const nobody = toolsOver(input.workspace.workspace, 'Only the agents of the team write files.');
  return {
    tools: {
      execute: (agentName, call, signal) => (byAgent.get(agentName) ?? nobody).execute(agentName, call, signal),
    },
    byTask: true,
  };
}

/** The session of the current iteration in its current phase. */
export async function openIterationSession(
  ctx: TeamContext,
  deps: SessionDependencies,
): Promise<OpenedIterationSession> {
  const { iteration, dir } = await createIterationStore(ctx.teamDir).getCurrent();
  const stores = iterationStores(ctx, dir, iteration.id);
  const workspace = recordedWorkspace(iteration);
  const tasks = await stores.artifacts.readTasks();
  const existing = (await stores.approvals.list()).length;
  let issued = 0;
  const routed =
    workspace === null
      ? null
      : await iterationFileTools(ctx, {
          iteration,
          workspace,
          tasks,
          nextApprovalId: () => `a${existing + ++issued}`,
          runner: deps.runner,
        });
  const files = routed === null ? null : recordingFiles(routed.tools, deps.record);
  const policy = iterationPolicy({
    config: ctx.config,
    iteration,
    groomedSummary: await stores.artifacts.readGroomed(),
    tasksSummary: tasks === null ? null : tasksSummary(tasks),
    // Code review reads what the iteration changed; earlier phases have nothing to review yet.
    diffsSummary: iteration.phase === 'code-review' && workspace !== null ? await workspaceChanges(workspace) : null,
    fileTools: files !== null,
    fileToolsByTask: routed?.byTask === true,
  });
  const ports: SessionPorts = {
    conversation: stores.conversation,
    modelFor: recordingModels(deps.modelFor, deps.record),
    files,
    ...(deps.signal === undefined ? {} : { signal: deps.signal }),
    ...(deps.onTextDelta === undefined ? {} : { onTextDelta: deps.onTextDelta }),
  };
  return {
    iteration,
    dir,
    stores,
    policy,
    events: holdingIterationLock(ctx.teamDir, iteration.id, runSession(ctx, policy, ports)),
  };
}

/** `"Rate limiting for the API!"` -> `rate-limiting-for-the-api`. */
function slugOf(topic: string): string {
  const slug = topic
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/g, '');
  return slug === '' ? 'topic' : slug;
}

/**
 * A freeform grooming session under `.team/grooming/<slug>/` (no phases, files, approvals), for
 * `maxTurns` more agent turns.
 */
export async function openGroomingSession(
  ctx: TeamContext,
  deps: SessionDependencies,
  options: { topic: string; maxTurns: number; withCoach: boolean },
): Promise<{ slug: string; dir: string; stores: TeamStores; events: AsyncGenerator<TeamEvent, void> }> {
  const slug = slugOf(options.topic);
  const dir = join(ctx.teamDir, 'grooming', slug);
  const stores: TeamStores = {
    conversation: createConversationStore(dir, ctx.redact),
    debug: createDebugStore(dir, ctx.redact),
    approvals: null,
  };
  const policy = groomingPolicy({
    config: ctx.config,
    slug,
    topic: options.topic,
    // Grooming the same topic again goes on from where it stopped: `maxTurns` more turns.
    maxTurns:
      countAgentTurns(
        await stores.conversation.readFull(),
        ctx.config.agents.map((agent) => agent.name),
      ) + options.maxTurns,
    withCoach: options.withCoach,
  });
  const ports: SessionPorts = {
    conversation: stores.conversation,
    modelFor: deps.modelFor,
    files: null,
    ...(deps.signal === undefined ? {} : { signal: deps.signal }),
    ...(deps.onTextDelta === undefined ? {} : { onTextDelta: deps.onTextDelta }),
  };
  return { slug, dir, stores, events: runSession(ctx, policy, ports) };
}
