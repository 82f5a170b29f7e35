import { render } from 'ink';
import { RatchetError } from '../../core/errors.js';
import { TeamApp } from './team-app.js';
import type { TeamUiPorts } from './team-ui-ports.js';

/** Shows the TUI until the user quits (q, or Ctrl-C); refuses without a terminal to draw on. */
export async function runTeamUi(ports: TeamUiPorts): Promise<void> {
  if (!process.stdin.isTTY || !process.stdout.isTTY)
    throw new RatchetError('usage', '`ratchet team ui` needs a terminal (stdin and stdout a TTY).', {
      hint: 'Use the team commands instead: team continue, team approvals, team advance, team worktrees review.',
    });
  const app = render(<TeamApp ports={ports} />, { exitOnCtrlC: false });
  await app.waitUntilExit();
}
