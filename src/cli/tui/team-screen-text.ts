/**
 * The TUI's own lines: the status line for what the session does or waits for, the label of a
 * typed line, and the help line of each view naming its keys. Text from the model or the files
 * (a question, a summary) passes through `stripControl`.
 */
import { stripControl } from '../terminal-text.js';
import type { Prompt, TeamUiState } from './team-ui-state.js';

/** The status line: what the session does, or what it waits for (and the key that answers). */
export function statusText(state: TeamUiState): { text: string; colour: string } {
  const { status } = state;
  switch (status.kind) {
    case 'idle':
      return state.hasIteration || state.mode.kind === 'grooming'
        ? { text: 'Ready: c to continue the conversation.', colour: 'gray' }
        : { text: 'No iteration yet: r starts one (you describe it), g grooms a topic first.', colour: 'gray' };
    case 'running':
      return {
        text:
          status.speakers.length === 0
            ? 'Starting…'
            : `${stripControl(status.speakers.join(', '))} ${status.speakers.length === 1 ? 'is' : 'are'} speaking…`,
        colour: 'cyan',
      };
    case 'asked':
      return { text: `Coach asks: ${stripControl(status.question)}  (m to answer)`, colour: 'magenta' };
    case 'approvals':
      return {
        text: `Paused: ${status.pending} write(s) wait for approval (a approve, d deny, then c).`,
        colour: 'yellow',
      };
    case 'phase-complete':
      return { text: `Phase complete: ${stripControl(status.summary)}  (n to advance)`, colour: 'green' };
    case 'complete':
      return state.mode.kind === 'grooming'
        ? { text: `Grooming paused after ${status.turns} turns (c to go on, Esc back).`, colour: 'gray' }
        : { text: `Conversation paused after ${status.turns} turns (c to go on, n to advance).`, colour: 'gray' };
    case 'busy':
      return { text: `${status.what}…`, colour: 'cyan' };
    case 'failed':
      return { text: stripControl(status.message), colour: 'red' };
  }
}

const PROMPTS: Record<Prompt['for'], string> = {
  answer: 'Answer the coach: ',
  deny: 'Why deny? ',
  turns: 'More agent turns in this phase: ',
  start: 'Describe the new iteration: ',
  groom: 'Groom which topic? ',
  checkpoint: 'Describe the checkpoint: ',
  force: 'Advance --force: leave implementation although layers of tasks.json were never merged? Type yes: ',
};

/** The keys of the current view. */
export function helpLines(state: TeamUiState): string[] {
  const { mode } = state;
  switch (mode.kind) {
    case 'input':
      return [];
    case 'review':
      return ['↑↓ task · j/k scroll · s setup · M merge · r refresh · Esc back'];
    case 'checkpoints':
      return ['↑↓ select · c create · r restore · Esc back'];
    case 'grooming':
      return ['c groom on · Esc back · Ctrl-C quit'];
    case 'approvals':
      return ['Esc back'];
    case 'conversation':
      return state.hasIteration
        ? [
            'c continue · m answer · t more turns · ↑↓ select · a approve · d deny · n advance (N --force) · q quit',
            'w worktrees · p checkpoints · l approvals · r new iteration · g groom a topic (G with the coach)',
          ]
        : ['r start an iteration · g groom a topic (G with the coach) · q quit'];
  }
}

/** The label before a typed line. */
export function promptText(prompt: Prompt): string {
  return prompt.for === 'deny' ? `Why deny ${prompt.approvalId}? ` : PROMPTS[prompt.for];
}
