import pc from 'picocolors';

/** Where the CLI writes. Injected so tests and `--json` can redirect it. */
export interface Output {
  out(line: string): void;
  err(line: string): void;
  json: boolean;
  /** Partial line for streaming progress (no newline); ignored when not a TTY. */
  progress(text: string): void;
}

export function createOutput(json: boolean): Output {
  const tty = Boolean(process.stderr.isTTY);
  return {
    json,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    progress: (text) => {
      if (tty && !json) process.stderr.write(pc.dim(text));
    },
  };
}
