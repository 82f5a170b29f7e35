import { RatchetError } from '../../core/errors.js';
import type { CommandResult, ProcessRunner } from '../../process/types.js';
import { CLAUDE_INSTALL_HINT, excerpt, parseClaudeResult, type ClaudeResult } from './result.js';

/** How to reach the `claude` executable; shared by the runtime and the checks. */
export interface ClaudeProcessOptions {
  /** The executable: a name looked up on the environment's PATH, or a path. */
  binary: string;
  runner: ProcessRunner;
  /**
   * The complete environment of the CLI (nothing else is inherited): pass `process.env` plus
   * overrides in production; tests pass a temporary HOME and a loopback ANTHROPIC_BASE_URL.
   */
  env: Record<string, string | undefined>;
}

/**
 * The CLI's environment with `baseUrl` (`--base-url`, `[provider] base_url`) as its
 * `ANTHROPIC_BASE_URL`, which the CLI wants without `/v1` (it adds it): the runtime's calls and
 * the preflight checks must reach the same endpoint. Without a base URL, `env` as it is.
 */
export function withBaseUrl(
  env: Record<string, string | undefined>,
  baseUrl: string | undefined,
): Record<string, string | undefined> {
  if (baseUrl === undefined) return env;
  return { ...env, ANTHROPIC_BASE_URL: baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '') };
}

interface ClaudeCall extends ClaudeProcessOptions {
  args: string[];
  cwd: string;
  /** Written to the CLI's stdin (the prompt, for `-p` without a prompt argument). */
  input?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Names the call in error messages, e.g. `stage RED`. */
  purpose: string;
}

/** A finished CLI call whose stdout held a result. */
interface ClaudeRun {
  result: ClaudeResult;
  exitCode: number | null;
  durationMs: number;
}

/** Room for a long final text: a cut-off JSON result would be unreadable. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** Runs the CLI once and returns the process result; throws for failures to run it at all. */
export async function runClaudeCommand(call: ClaudeCall): Promise<CommandResult> {
  // An empty name cannot be spawned at all (Node throws a TypeError, not ENOENT).
  if (call.binary.trim() === '') {
    throw new RatchetError('config', 'The path of the Claude Code CLI is empty.', {
      hint: `Set [refactor.claude] binary (or "claude": {"binary": ...} in .refactor-bot.config.json) to the \`claude\` executable, or remove it to use \`claude\` from PATH. ${CLAUDE_INSTALL_HINT}`,
      details: { binary: call.binary },
    });
  }
  const outcome = await call.runner.run({
    command: call.binary,
    args: call.args,
    cwd: call.cwd,
    env: call.env,
    extendEnv: false,
    timeoutMs: call.timeoutMs,
    maxOutputBytes: MAX_OUTPUT_BYTES,
    ...(call.input === undefined ? {} : { input: call.input }),
    ...(call.signal === undefined ? {} : { signal: call.signal }),
  });
  if (outcome.aborted) throw new RatchetError('interrupted', 'Interrupted', { details: { purpose: call.purpose } });
  if (outcome.timedOut) {
    throw new RatchetError(
      'timeout',
      `Claude Code did not finish ${call.purpose} within ${call.timeoutMs} ms; its process group was killed.`,
      { hint: 'Raise the stage timeout, or lower --max-turns for this stage.', details: { purpose: call.purpose } },
    );
  }
  // The runner reports a process that could not be started (ENOENT, EACCES) as exit code 127,
  // like a shell would; the real CLI never exits 127 after printing nothing.
  if (outcome.exitCode === 127 && outcome.stdout.trim() === '') {
    throw new RatchetError(
      'config',
      `Cannot run the Claude Code CLI '${call.binary}': ${excerpt(outcome.stderr) || 'not found'}`,
      { hint: CLAUDE_INSTALL_HINT, details: { binary: call.binary } },
    );
  }
  return outcome;
}

/** Runs the CLI once with `--output-format json` and parses its result. */
export async function runClaude(call: ClaudeCall): Promise<ClaudeRun> {
  const outcome = await runClaudeCommand(call);
  const result = parseClaudeResult(outcome.stdout, outcome.stderr, outcome.exitCode);
  return { result, exitCode: outcome.exitCode, durationMs: outcome.durationMs };
}
