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
import { SYSTEM_SENDER, type Approval, type Iteration, type TeamMessage } from './types.js';
import { isIterationWorktree } from './layers/agent-workspaces.js';
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
 * Writes an approved file into the worktree it was asked for (the iteration's workspace, or a
 * task's worktree in the implementation phase), provided that is still one of this iteration's
 * worktrees: the approval file names its target, and a path edited into it is not followed.
 */
async function writeApproved(
  ctx: TeamContext,
  input: { approval: Approval; workspace: IterationWorkspace; stores: IterationStores; runner: ProcessRunner },
): Promise<{ ok: true } | { ok: false; error: string }> {
  const target = input.approval.worktree ?? input.workspace.workspace;
  if (!isIterationWorktree(target, input.workspace, await input.stores.artifacts.readTasks()))
    return { ok: false, error: `${target} is not a worktree of this iteration.` };
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
  const approval = await input.stores.approvals.resolve(input.id, { status: 'approved' });
  const written = await writeApproved(ctx, { ...input, approval, workspace });
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
