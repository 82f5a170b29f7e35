/**
 * Runs the BUILT Ratchet CLI on a pseudo-terminal, to test its questions: util-linux `script`
 * (`script -qefc <command> /dev/null`) gives the child a pty for stdin, stdout and stderr, copies
 * what we write to its stdin into the terminal and what the child prints back to its stdout.
 * The test waits for a question to appear, then types the answer (`expect`-style), so answers
 * never reach the child before it asks.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CLI, cliEnv } from './run-cli.js';

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** Terminal output without colours, cursor movements and carriage returns. */
export function plainTerminalText(text: string): string {
  return text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
}

export interface PtyCli {
  /** Everything the terminal showed so far, as plain text. */
  text(): string;
  /** Everything the terminal received so far, byte for byte (escape sequences included). */
  raw(): string;
  /** Resolves once `prompt` appears after the previous match; rejects when the CLI exits first. */
  waitFor(prompt: string): Promise<void>;
  /** Types `answer` and Enter. */
  type(answer: string): void;
  /** Waits for the CLI to exit; its exit code. */
  exit(): Promise<number>;
  /** Kills `script` and the CLI (after a failed expectation), unless they have exited. */
  kill(): void;
  /** Sends `signal` to the CLI process itself (as `kill` from another shell would), not to `script`. */
  signalCli(signal: NodeJS.Signals): void;
}

/** The pid of the process under `root` (a descendant) whose program argument (argv[1]) is `script`. */
function findProcess(root: number, script: string): number | null {
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() ?? root;
    let argv: string[] = [];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    // Not the shell `script` starts (`sh -c '<node> <cli> ...'`), whose command line names the CLI too.
    if (pid !== root && argv[1] === script) return pid;
    let children = '';
    try {
      children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
    } catch {
      // Gone meanwhile.
    }
    queue.push(...children.split(' ').filter(Boolean).map(Number));
  }
  return null;
}

/** Starts `ratchet ...args` on a pty, in `cwd`, with the clean CLI environment plus `env`. */
export function startPtyCli(args: readonly string[], options: { cwd: string; env: Record<string, string> }): PtyCli {
  // `exec`: the CLI replaces the shell that `script` runs the command with ($SHELL, or sh), so
  // signals and the exit status are the CLI's whatever the shell.
  const command = `exec ${[process.execPath, CLI, ...args].map(shellQuote).join(' ')}`;
  const child: ChildProcessWithoutNullStreams = spawn('script', ['-qefc', command, '/dev/null'], {
    cwd: options.cwd,
    env: cliEnv({ TERM: 'dumb', ...options.env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let raw = '';
  let searchFrom = 0;
  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const listener of [...listeners]) listener();
  };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    raw += chunk;
    notify();
  });
  child.stderr.on('data', (chunk: string) => {
    raw += chunk;
    notify();
  });
  const exited = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      resolve(code ?? (signal ? 128 : -1));
      notify();
    });
  });
  let closed = false;
  void exited.then(() => {
    closed = true;
    notify();
  });

  return {
    text: () => plainTerminalText(raw),
    raw: () => raw,
    waitFor(prompt: string): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        const check = (): void => {
          const text = plainTerminalText(raw);
          const at = text.indexOf(prompt, searchFrom);
          if (at >= 0) {
            searchFrom = at + prompt.length;
            listeners.delete(check);
            resolve();
          } else if (closed) {
            listeners.delete(check);
            reject(new Error(`the CLI exited before asking "${prompt}"; the terminal showed:\n${text.slice(-4000)}`));
          }
        };
        listeners.add(check);
        check();
      });
    },
    type(answer: string): void {
      child.stdin.write(`${answer}\n`);
    },
    async exit(): Promise<number> {
      const code = await exited;
      child.stdin.end();
      return code;
    },
    kill(): void {
      if (!closed) child.kill('SIGKILL');
    },
    signalCli(signal: NodeJS.Signals): void {
      const pid = child.pid === undefined ? null : findProcess(child.pid, CLI);
      if (pid === null) throw new Error('the CLI process is not running');
      process.kill(pid, signal);
    },
  };
}
