import { describeUnsafeEntries } from '../../core/unsafe-entry.js';
import type { LayerMerge, LayerSetup } from '../../engine/team/layer-worktrees.js';

/** What `team worktrees setup` made, in lines (the TUI's notice). */
export function describeSetup(setup: LayerSetup): string[] {
  return [
    `Worktrees of the layer from ${setup.iterationBranch} at ${setup.base.slice(0, 8)}:`,
    ...setup.tasks.map((task) => `  ${task.id}: ${task.worktree} (${task.made})`),
    ...describeUnassigned(setup.unassigned),
  ];
}

/** The warning about the layer's tasks no agent implements (setup's, the CLI's and the TUI's). */
export function describeUnassigned(unassigned: readonly string[]): string[] {
  if (unassigned.length === 0) return [];
  return [
    `Assigned to no agent of the team: ${unassigned.join(', ')}. Nobody's file tools write there, so merge refuses the layer while they are empty: set assigned_to in tasks.json, implement them in their worktrees yourself, or merge with --allow-empty.`,
  ];
}

/** How `team worktrees merge` ended, in lines (the CLI's and the TUI's). */
export function describeMerge(result: LayerMerge): string[] {
  switch (result.outcome) {
    case 'merged':
      return [
        ...result.verification.notices,
        `Merged ${result.merged.join(', ') || 'nothing new'}: ${result.verification.decision.accepted ? result.verification.decision.summary : ''}${result.verification.sandboxed ? '' : ' (not sandboxed)'}.`,
        result.done
          ? 'Every layer is merged: the iteration branch holds the work; merge it into yours with git.'
          : `Layer ${result.nextLayer} is next: setup starts it from the merged result.`,
      ];
    case 'conflict':
      return [
        `Merging task ${result.task} conflicts in ${result.files.join(', ')}: nothing was merged, the iteration branch is as it was.`,
        `Resolve it on the task's branch (${result.branch}, worktree ${result.worktree}): merge the layer's other task branches into it and commit, then merge again.`,
      ];
    case 'unsafe':
      return [
        `Task ${result.task} holds what no branch may take in; nothing was merged:`,
        describeUnsafeEntries(result.entries),
      ];
    case 'empty':
      return [
        `Nothing was merged: ${result.tasks.join(', ')} ${result.tasks.length === 1 ? 'has' : 'have'} no change since the layer's base${result.unassigned.length > 0 ? ` (assigned to no agent: ${result.unassigned.join(', ')})` : ''}.`,
        'Implement them (set assigned_to in tasks.json for an agent to do it), or merge with --allow-empty if they need no change.',
      ];
    case 'red':
      return [
        ...result.verification.notices,
        'The merged layer fails verification: nothing was merged, the iteration branch is as it was.',
        ...(result.verification.decision.accepted
          ? []
          : result.verification.decision.feedback.split('\n').slice(0, 12)),
        'Fix it on the task branches (their worktrees are kept), then merge again.',
      ];
  }
}
