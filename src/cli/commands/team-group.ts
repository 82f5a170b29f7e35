import type { Command } from 'commander';

/**
 * The `ratchet team` group, made by whichever team command file registers first: the
 * conversation's commands (init, run, continue, ...), `team worktrees` and `team ui` are in
 * files of their own and each adds its commands to the one group.
 */
export function teamGroup(program: Command): Command {
  return (
    program.commands.find((command) => command.name() === 'team') ??
    program
      .command('team')
      .description(
        'A team of agents and a coach talks an iteration through its phases, with approvals and per-task worktrees',
      )
  );
}
