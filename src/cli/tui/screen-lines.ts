/**
 * Text for the TUI's panes, cut to what fits: a terminal shows the last lines of a conversation
 * and a window of a diff. Everything a model wrote passes through `stripControl` first, so no
 * escape sequence of theirs reaches the terminal (a message could otherwise move the cursor,
 * retitle the window or hide text).
 */
import { stripControl } from '../terminal-text.js';
import type { TeamMessage } from '../../workflows/team/types.js';

/** One line on screen: the speaker on the first line of a message only. */
export interface ScreenLine {
  speaker: string | null;
  text: string;
}

/** `text` cut into lines of at most `width` characters (at spaces when it can). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const raw of text.split('\n')) {
    let rest = raw.replace(/\t/g, '  ');
    while (rest.length > width) {
      const space = rest.lastIndexOf(' ', width);
      const cut = space > width / 2 ? space : width;
      lines.push(rest.slice(0, cut));
      rest = rest.slice(cut).replace(/^ /, '');
    }
    lines.push(rest);
  }
  return lines;
}

/** The last `height` lines of the conversation at `width` columns, a blank line between messages. */
export function conversationTail(messages: readonly TeamMessage[], width: number, height: number): ScreenLine[] {
  const lines: ScreenLine[] = [];
  for (let index = messages.length - 1; index >= 0 && lines.length < height; index--) {
    const message = messages[index];
    if (message === undefined) continue;
    const speaker = stripControl(message.from);
    const body = wrap(stripControl(message.content).trim(), Math.max(10, width - speaker.length - 2));
    const block: ScreenLine[] = body.map((text, line) => ({ speaker: line === 0 ? speaker : null, text }));
    if (lines.length > 0) block.push({ speaker: null, text: '' });
    lines.unshift(...block);
  }
  return lines.slice(-height);
}

/** `height` lines of `text` from line `from`, and how many lines it has. */
export function window(text: string, width: number, from: number, height: number): { lines: string[]; total: number } {
  const all = wrap(stripControl(text), width);
  return { lines: all.slice(from, from + height), total: all.length };
}
