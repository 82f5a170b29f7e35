import type { Command } from 'commander';
import { createLiveTeamUiPorts } from '../tui/team-ui-live.js';
import { repositoryRoot, type ProviderFlags } from '../context.js';
import type { CliSetup } from './cli-setup.js';
import { addProviderOptions } from './provider-options.js';
import { teamGroup } from './team-group.js';

/** `ratchet team ui`: the Ink TUI over the current iteration (see `tui/team-app.tsx`). */
export function registerTeamUiCommand(program: Command, cli: CliSetup): void {
  addProviderOptions(
    teamGroup(program)
      .command('ui')
      .description(
        'The team in a terminal UI: the conversation live, approvals inline, phase changes and the worktree review of the current layer without leaving',
      ),
  ).action(async (flags: ProviderFlags & { record?: string }, command: Command) => {
    const controller = new AbortController();
    try {
      const ports = await createLiveTeamUiPorts({
        repoRoot: await repositoryRoot(command),
        flags,
        signal: controller.signal,
      });
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
      // Quitting stops what still runs (a session between two model calls, a verifier).
      controller.abort(new Error('the TUI was closed'));
    }
  });
}
