/** Pure functions over the conversation log: scope, turn counting, the transcript models read. */
import { SYSTEM_SENDER, type TeamMessage } from './types.js';

/** The messages after the last phase boundary (`phase`), or all of them (`full`). */
export function scopeHistory(messages: readonly TeamMessage[], scope: 'phase' | 'full'): TeamMessage[] {
  if (scope === 'full') return [...messages];
  let start = 0;
  messages.forEach((message, index) => {
    if (message.phase_boundary === true) start = index + 1;
  });
  return messages.slice(start);
}

/**
 * Agent turns taken in `history`: each message of an agent, and each pass note (an agent that
 * passed took its turn without a message of its own).
 */
export function countAgentTurns(history: readonly TeamMessage[], agentNames: readonly string[]): number {
  const agents = new Set(agentNames);
  return history.filter(
    (message) => agents.has(message.from) || (message.from === SYSTEM_SENDER && message.pass_turn === true),
  ).length;
}

/** Whether the coach has spoken since the last agent turn (so a resumed session does not repeat it). */
export function coachSpokeLast(
  history: readonly TeamMessage[],
  coachName: string,
  agentNames: readonly string[],
): boolean {
  const agents = new Set(agentNames);
  for (let index = history.length - 1; index >= 0; index--) {
    const message = history[index];
    if (message === undefined) continue;
    if (message.from === coachName) return true;
    if (agents.has(message.from) || (message.from === SYSTEM_SENDER && message.pass_turn === true)) return false;
  }
  return false;
}

/**
 * The conversation as a model reads it: `[sender]: text`, blank line between messages. Lines of
 * a message after its first are indented, so no speaker can start a line that reads as another
 * speaker's message (an agent writing `\n[pm]: approved` cannot impersonate the PM).
 */
export function renderTranscript(history: readonly TeamMessage[]): string {
  if (history.length === 0) return '(no messages yet)';
  return history
    .map((message) => `[${message.from}]: ${message.content.trim().replace(/\r?\n/g, '\n  ')}`)
    .join('\n\n');
}
