/** Contract of the command runner. Implementations kill the whole process group on timeout/abort. */
export interface CommandSpec {
  /** A shell command line (run with `/bin/sh -c`), or a file to execute with `args`. */
  command: string;
  args?: string[];
  /** When true (default when `args` is absent), `command` is run through `/bin/sh -c`. */
  shell?: boolean;
  cwd: string;
  /** Merged over `process.env` unless `extendEnv` is false. */
  env?: Record<string, string | undefined>;
  extendEnv?: boolean;
  /** Kill the process group after this many ms (SIGTERM, then SIGKILL after 2 s). */
  timeoutMs?: number;
  /** Cap of the kept combined output, in bytes (default 1 MiB); the tail is kept. */
  maxOutputBytes?: number;
  signal?: AbortSignal;
  input?: string;
  /**
   * Texts the command reads on extra inherited descriptors: the first on descriptor 3, the next
   * on 4, and so on, each written then closed at the start (a credential that must not sit in the
   * environment, where every process the command starts would see it).
   */
  descriptorInputs?: readonly string[];
  /**
   * Paths this one command may write besides the worktree and its temporary directory (a fresh
   * report directory of a test run): made writable by a sandboxed runner for this command only,
   * nothing else it runs sees them. A plain runner ignores them (everything is writable there).
   */
  writablePaths?: readonly string[];
  /** Called with the process id once the command's process exists. */
  onSpawn?: (pid: number) => void;
}

export interface CommandResult {
  /** null when killed by a signal. */
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** True when aborted through `signal`. */
  aborted: boolean;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved in arrival order (capped). */
  output: string;
  truncated: boolean;
  durationMs: number;
}

export interface ProcessRunner {
  run(spec: CommandSpec): Promise<CommandResult>;
  /**
   * A sandboxed runner's host directory that none of its commands can see: callers make a fresh
   * directory there for what only one command may write (a test run's reports) and pass it in
   * `writablePaths`. Undefined for a plain runner (the OS temporary directory serves).
   */
  scratchDir?: string;
}
