import pc from 'picocolors';
import { escapeJsonControl, keepColoursOnly } from './terminal-text.js';

/** Where the CLI writes. Injected so tests and `--json` can redirect it. */
export interface Output {
  out(line: string): void;
  err(line: string): void;
  json: boolean;
  /** Partial line for streaming progress (no newline); ignored when not a TTY. */
  progress(text: string): void;
}

/** The streams an `Output` writes to (the process's own by default). */
export interface OutputStreams {
  stdout: Pick<NodeJS.WriteStream, 'write'>;
  stderr: Pick<NodeJS.WriteStream, 'write' | 'isTTY'>;
}

/**
 * The CLI's output. Whatever a line holds (test names, notes, tool input and replies a model
 * wrote), no control sequence but Ratchet's own colours reaches the terminal (see
 * terminal-text.ts); `--json` lines get their raw DEL and C1 characters escaped.
 */
export function createOutput(
  json: boolean,
  streams: OutputStreams = { stdout: process.stdout, stderr: process.stderr },
): Output {
  const tty = Boolean(streams.stderr.isTTY);
  const safe = json ? escapeJsonControl : keepColoursOnly;
  return {
    json,
    out: (line) => streams.stdout.write(`${safe(line)}\n`),
    err: (line) => streams.stderr.write(`${safe(line)}\n`),
    progress: (text) => {
      if (tty && !json) streams.stderr.write(pc.dim(keepColoursOnly(text)));
    },
  };
}
