import { open } from 'node:fs/promises';

/** What `readWindow` found. */
export interface ReadWindow {
  /** The lines of the window (without their line ends), each cut at `maxLineLength` characters. */
  lines: string[];
  /** The 1-based number of the window's first line. */
  start: number;
  /** How many of `lines` were longer than `maxLineLength` and cut. */
  cutLines: number;
  /** The window stopped early at `maxChars` characters of output: `lines` has fewer than asked. */
  charLimitReached: boolean;
  /** The file's line count when it was read to the end (see `countUpTo`), else null. */
  totalLines: number | null;
  /** Whether anything follows the window. */
  more: boolean;
  /** Whether the file's first bytes hold a NUL byte (a binary file). */
  binary: boolean;
}

export interface ReadWindowOptions {
  /** 1-based first line. */
  start: number;
  /** Lines wanted. */
  limit: number;
  maxLineLength: number;
  /** Characters of line text returned at most (the lines after are left for another call). */
  maxChars: number;
  /** Files up to this size are read to their end to count their lines; larger ones are not. */
  countUpTo: number;
  size: number;
}

const CHUNK = 64 * 1024;
const BINARY_PROBE = 8000;
const NEWLINE = 0x0a;

/**
 * Reads lines `start`..`start + limit - 1` of a file without loading it: chunk by chunk, keeping
 * only the window's lines (each at most `maxLineLength` characters: the rest of a long line is
 * skipped, not collected) and stopping after the window, or once `maxChars` characters of it were
 * collected. Memory stays at a chunk and a line whatever the file's size, also for a file that is
 * one long line. A file of at most `countUpTo` bytes is read to its end to count its lines (a
 * newline count: nothing decoded); a larger one is not.
 */
export async function readWindow(path: string, options: ReadWindowOptions): Promise<ReadWindow> {
  const { start, limit, maxLineLength, maxChars, size } = options;
  const end = start + limit - 1;
  // A character is at most 4 bytes of UTF-8: this many bytes always hold `maxLineLength` of them.
  const maxLineBytes = maxLineLength * 4 + 4;
  const lines: string[] = [];
  let cutLines = 0;
  let chars = 0;
  let charLimitReached = false;
  /** The window is complete, or was cut at `maxChars`: only newlines are counted from here. */
  let windowDone = false;
  /** The byte offset after the newline of the window's last line. */
  let afterWindow = 0;
  let line = 1;
  let parts: Buffer[] = [];
  let partBytes = 0;
  let tooLong = false;
  let newlines = 0;
  let lastByte = -1;
  let binary = false;

  const collect = (bytes: Buffer): void => {
    const room = maxLineBytes - partBytes;
    if (bytes.length > room) tooLong = true;
    if (room <= 0 || bytes.length === 0) return;
    // A copy: the read buffer is reused for the next chunk.
    const kept = Buffer.from(bytes.subarray(0, room));
    parts.push(kept);
    partBytes += kept.length;
  };
  /** Ends the current line, which is in the window; returns whether it was kept. */
  const finishLine = (): boolean => {
    let text = Buffer.concat(parts, partBytes).toString('utf8');
    if (text.endsWith('\r') && !tooLong) text = text.slice(0, -1);
    if (tooLong || text.length > maxLineLength) {
      text = text.slice(0, maxLineLength);
      cutLines += 1;
    }
    if (lines.length > 0 && chars + text.length > maxChars) {
      charLimitReached = true;
      windowDone = true;
      return false;
    }
    lines.push(text);
    chars += text.length;
    if (lines.length === limit) windowDone = true;
    return true;
  };

  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(CHUNK);
    let position = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, position);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      if (position === 0 && chunk.subarray(0, BINARY_PROBE).includes(0)) {
        binary = true;
        break;
      }
      let from = 0;
      while (from <= chunk.length) {
        const at = chunk.indexOf(NEWLINE, from);
        const inWindow = !windowDone && line >= start && line <= end;
        if (inWindow) collect(chunk.subarray(from, at === -1 ? chunk.length : at));
        if (at === -1) break;
        newlines += 1;
        if (inWindow && finishLine()) afterWindow = position + at + 1;
        line += 1;
        parts = [];
        partBytes = 0;
        tooLong = false;
        from = at + 1;
      }
      position += bytesRead;
      lastByte = chunk[bytesRead - 1] ?? lastByte;
      if (windowDone && size > options.countUpTo) break;
    }
  } finally {
    await handle.close();
  }
  // The last line, when the file does not end with a newline.
  const unterminated = lastByte !== -1 && lastByte !== NEWLINE;
  if (!binary && !windowDone && unterminated && line >= start && line <= end && finishLine()) afterWindow = size;
  const readToEnd = !binary && (!windowDone || size <= options.countUpTo);
  return {
    lines,
    start,
    cutLines,
    charLimitReached,
    totalLines: readToEnd ? newlines + (unterminated ? 1 : 0) : null,
    more: charLimitReached || (windowDone && afterWindow < size),
    binary,
  };
}
