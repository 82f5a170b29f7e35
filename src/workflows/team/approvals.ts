/**
 * Resolving pending writes (`team approve` / `team deny`). Either way the decision is injected
 * into the conversation as a system message, so the agents learn it on their next turn.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ProcessRunner } from '../../process/types.js';
import type { TeamContext } from './context.js';
import { applyApprovedWrite } from './file-tools.js';
import { lockIteration } from './iteration-lock.js';
import type { IterationStores } from './iteration-session.js';
import { SYSTEM_SENDER, type Approval, type Iteration, type TeamMessage, type TeamTask } from './types.js';
import { agentWorkspaces, isIterationWorktree } from './layers/agent-workspaces.js';
import { recordedWorkspace, type IterationWorkspace } from './workspace.js';
import { RatchetError } from '../../core/errors.js';

export interface ApprovalDecision {
  approval: Approval;
  /** The message injected into the conversation. */
  msg: TeamMessage;
  /** Approved but the guard refused the write now (the workspace changed): why. */
  writeError: string | null;
}

/**
 * Where `agent` may write now, as its file tools would let it (agent-workspaces.ts): the
 * iteration's workspace while all agents share it, else the worktrees of its tasks of the current
 * layer; or why it may write nowhere. An approval is judged by the iteration as it is when it is
 * approved, not when it was asked: a write asked for in a task's worktree whose layer has been
 * merged since, or in the workspace before the last layer merged, would otherwise reach the
 * iteration's branch without the verifier (the next `merge` would never see it).
 */
async function writableNow(
  ctx: TeamContext,
  input: { iteration: Iteration; workspace: IterationWorkspace; tasks: TeamTask[] | null; agent: string },
): Promise<{ targets: string[] } | { why: string }> {
  const spaces = await agentWorkspaces({
    phase: input.iteration.phase,
    layer: input.iteration.current_layer ?? 0,
    workspace: input.workspace,
    tasks: input.tasks,
    agents: ctx.config.agents.map((agent) => agent.name),
  });
  if (spaces === null) return { targets: [input.workspace.workspace] };
  const space = spaces.get(input.agent);
  if (space === undefined) return { why: `${input.agent} is not an agent of the team, and only they write files.` };
  if (space.kind === 'read-only') return { why: space.why };
  const targets = space.tasks.flatMap((task) => (task.readOnly === undefined ? [task.worktree] : []));
  if (targets.length > 0) return { targets };
  return { why: space.tasks.map((task) => task.readOnly).join(' ') };
}

/**
 * Writes an approved file into the worktree it was asked for (the iteration's workspace, or a
 * task's worktree in the implementation phase), provided that is still one of this iteration's
 * worktrees and one the agent may write in now (`writableNow`): the approval file names its
 * target, and a path edited into it is not followed.
 */
async function writeApproved(
  ctx: TeamContext,
  input: {
    approval: Approval;
    iteration: Iteration;
    workspace: IterationWorkspace;
    stores: IterationStores;
    runner: ProcessRunner;
  },
): Promise<{ ok: true } | { ok: false; error: string }> {
  const target = input.approval.worktree ?? input.workspace.workspace;
  const tasks = await input.stores.artifacts.readTasks();
  if (!isIterationWorktree(target, input.workspace, tasks))
    return { ok: false, error: `${target} is not a worktree of this iteration.` };
  const now = await writableNow(ctx, {
    iteration: input.iteration,
    workspace: input.workspace,
    tasks,
    agent: input.approval.agent,
  });
  const layer = input.iteration.current_layer ?? 0;
  if ('why' in now)
    return {
      ok: false,
      error: `it was asked for in ${target}, and in the ${input.iteration.phase} phase at layer ${layer} ${input.approval.agent} may write nowhere: ${now.why}`,
    };
  if (!now.targets.includes(target))
    return {
      ok: false,
      error:
        `it was asked for in ${target}, where nothing may be written now (phase ${input.iteration.phase}, layer ${layer}: ` +
        `its layer was merged, or the agents work elsewhere since), so it would skip the layer's verifier. ` +
        `${input.approval.agent} writes in ${now.targets.join(', ')} now: ask for the change again there.`,
    };
  if (!existsSync(join(target, '.git')))
    return { ok: false, error: `its worktree ${target} is gone (its layer was merged, or it was removed).` };
  return applyApprovedWrite({
    workspace: target,
    access: ctx.config.file_access,
    approval: input.approval,
    runner: input.runner,
  });
}

/** Approves a pending write and writes it into the worktree it was asked for, through the guard. */
export async function approveWrite(
  ctx: TeamContext,
  input: { iteration: Iteration; stores: IterationStores; id: string; runner: ProcessRunner },
): Promise<ApprovalDecision> {
  const workspace = recordedWorkspace(input.iteration);
  if (workspace === null)
    throw new RatchetError('usage', `The iteration ${input.iteration.id} has no workspace to write into.`, {
      hint: 'Its worktree was removed; deny the approval instead (ratchet team deny <id>).',
    });
  await using _lock = await lockIteration(ctx.teamDir, input.iteration.id);
  // The phase and layer as they are now that the lock is held (a merge may have run since).
  const current = await input.stores.iterations.findCurrent();
  const iteration = current?.iteration.id === input.iteration.id ? current.iteration : input.iteration;
  const approval = await input.stores.approvals.resolve(input.id, { status: 'approved' });
  const written = await writeApproved(ctx, { ...input, iteration, approval, workspace });
  const msg: TeamMessage = {
    from: SYSTEM_SENDER,
    iteration: input.iteration.id,
    content: written.ok
      ? `(The PM approved ${approval.agent}'s write to ${approval.path}; it is written.)`
      : `(The PM approved ${approval.agent}'s write to ${approval.path}, but it could not be written: ${written.error})`,
  };
  await input.stores.conversation.append(msg);
  return { approval, msg, writeError: written.ok ? null : written.error };
}

/** Denies a pending write; the reason goes into the conversation. */
export async function denyWrite(input: {
  iteration: Iteration;
  stores: IterationStores;
  id: string;
  reason: string | undefined;
}): Promise<ApprovalDecision> {
  const reason = input.reason?.trim();
  const approval = await input.stores.approvals.resolve(input.id, {
    status: 'denied',
    ...(reason ? { reason } : {}),
  });
  const msg: TeamMessage = {
    from: SYSTEM_SENDER,
    iteration: input.iteration.id,
    content: `(The PM denied ${approval.agent}'s write to ${approval.path}${reason ? `: ${reason}` : '.'} The file was not written.)`,
  };
  await input.stores.conversation.append(msg);
  return { approval, msg, writeError: null };
}
