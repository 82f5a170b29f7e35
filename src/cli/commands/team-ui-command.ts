import type { Command } from 'commander';
import { createLiveTeamUiPorts } from '../tui/team-ui-live.js';
import { repositoryRoot, type ProviderFlags } from '../context.js';
import type { CliSetup } from './cli-setup.js';
import { addProviderOptions } from './provider-options.js';
import { positive } from './team-commands.js';
import { teamGroup } from './team-group.js';

/** `ratchet team ui`: the Ink TUI over the current iteration (see `tui/team-app.tsx`). */
export function registerTeamUiCommand(program: Command, cli: CliSetup): void {
  addProviderOptions(
    teamGroup(program)
      .command('ui')
      .description(
        'Everything `ratchet team` does, in a terminal UI: start an iteration, the conversation live, approvals inline, answers to the coach, phase changes, the worktrees of the current layer (setup, review with diffs, merge), checkpoints and grooming, without leaving',
      ),
  )
    .option(
      '--max-turns <n>',
      'agent turns per phase of an iteration started here (default: max_turns of the team), and of each grooming session (default: two rounds)',
    )
    .action(async (flags: ProviderFlags & { record?: string; maxTurns?: string }, command: Command) => {
      const ports = await createLiveTeamUiPorts({
        repoRoot: await repositoryRoot(command),
        flags,
        maxTurns: positive(flags.maxTurns, '--max-turns'),
      });
      try {
        // Ink (and React) load only here, not with every other command. Ink decides once, when it
        // loads, whether it runs "in CI" (CI or CONTINUOUS_INTEGRATION set), and then draws nothing
        // until it exits: wrong for a terminal a user is looking at, so on a TTY those are cleared first.
        if (process.stdout.isTTY) {
          delete process.env.CI;
          delete process.env.CONTINUOUS_INTEGRATION;
        }
        const { runTeamUi } = await import('../tui/run-team-ui.js');
        await runTeamUi(ports);
        cli.setExit(0);
      } finally {
        // The TUI stopped what ran before it returned; this covers a failure to start it.
        ports.stop();
      }
    });
}
