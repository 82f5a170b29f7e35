/** How `ratchet team` shows the team engine's events (plain text, or NDJSON with `--json`). */
import pc from 'picocolors';
import type { TeamEvent } from '../../workflows/team/events.js';
import type { Approval, TeamMessage } from '../../workflows/team/types.js';
import type { Output } from '../output.js';

function sender(msg: TeamMessage): string {
  if (msg.from === 'system') return pc.dim('[system]');
  if (msg.from === 'pm') return pc.magenta('[pm]');
  return pc.cyan(`[${msg.from}]`);
}

export function renderMessage(msg: TeamMessage): string {
  const body = msg.from === 'system' ? pc.dim(msg.content) : msg.content;
  return `${sender(msg)} ${body}`;
}

/** Shows one event; every type is handled (a missed one would be silent data loss). */
export function renderTeamEvent(event: TeamEvent, output: Output): void {
  if (output.json) {
    output.out(JSON.stringify(event));
    return;
  }
  switch (event.type) {
    case 'SessionStarted': {
      const phase = event.phase === null ? 'grooming' : event.phase;
      const layer = event.currentLayer === null ? '' : ` · layer ${event.currentLayer}`;
      output.out(
        pc.bold(
          `${event.sessionId} · ${phase}${layer} · turn ${event.turn}/${event.maxTurns} · ${event.agents.join(', ')}` +
            `${event.coach === null ? '' : ` + ${event.coach}`}${event.parallel ? ' · parallel' : ''}`,
        ),
      );
      return;
    }
    case 'AppendMessage':
      output.out(renderMessage(event.msg));
      output.out('');
      return;
    case 'ApprovalRequested':
      output.out(
        pc.yellow(`Approval ${event.approval.id}: ${event.approval.agent} wants to write ${event.approval.path}`),
      );
      return;
    case 'PauseForApprovals':
      output.out('---');
      output.out(
        `Paused: ${event.pendingCount} write(s) wait for approval. ${pc.cyan('ratchet team approvals')}, then ` +
          `${pc.cyan('ratchet team approve <id>')} or ${pc.cyan('ratchet team deny <id> -m "why"')}, then ${pc.cyan('ratchet team continue')}.`,
      );
      return;
    case 'PhaseCompleteSignaled':
      output.out('---');
      output.out(
        `The coach signals ${event.phase ?? 'the session'} complete${event.summary === '' ? '' : `: ${event.summary}`}`,
      );
      output.out(`Next: ${pc.cyan('ratchet team advance')} (or ${pc.cyan('ratchet team continue')} to keep talking).`);
      return;
    case 'CoachAskedPM':
      output.out('---');
      output.out(`${pc.magenta('Coach asks:')} ${event.question}`);
      output.out(`Reply with: ${pc.cyan(`ratchet team continue -m "your answer"`)}`);
      return;
    case 'SessionComplete':
      output.out('---');
      output.out(
        // The count is the phase's, not this session's: a `continue` at the limit takes no turn at all.
        `The phase's ${event.totalTurns} agent turn(s) are used up. ${pc.cyan('ratchet team continue --max-turns N')} allows N more.`,
      );
      return;
    case 'KickoffInjected':
    case 'AgentTurnStarted':
    case 'AppendDebug':
    case 'AgentPassed':
    case 'FileOperationLogged':
    case 'CoachTurnStarted':
    case 'ParallelRoundStarted':
      // Shown through their AppendMessage, or progress only.
      return;
  }
}

export function renderApproval(approval: Approval): string {
  const status =
    approval.status === 'pending'
      ? pc.yellow('pending')
      : approval.status === 'approved'
        ? pc.green('approved')
        : pc.red('denied');
  const reason = approval.reason === undefined ? '' : pc.dim(` (${approval.reason})`);
  const size = `${approval.content.length} chars`;
  return `${pc.bold(approval.id.padEnd(5))} ${status.padEnd(8)} ${approval.agent}: ${approval.path} ${pc.dim(size)}${reason}`;
}
