/**
 * Preflight checks of the Claude Code CLI (seed 002, section 21): the binary runs, and a trivial
 * headless query gets through authentication. Both fail early with what to do next.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import { CLAUDE_INSTALL_HINT, apiFailureOf, errorsText, excerpt } from './result.js';
import { runClaude, runClaudeCommand, withBaseUrl, type ClaudeProcessOptions } from './run-claude.js';

export interface ClaudeCheckOptions extends ClaudeProcessOptions {
  /** Working directory of `claude -v` (default: the system temporary directory). */
  cwd?: string;
  /** Default 30 s for `-v`, 120 s for the authentication query. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * The endpoint the runs will use (`--base-url`), passed to the CLI as `ANTHROPIC_BASE_URL`
   * exactly as the runtime passes it, so the authentication check asks the same server.
   */
  baseUrl?: string;
}

export interface ClaudeAuthCheck {
  /** The model's answer to the trivial query. */
  result: string;
  costUsd: number;
}

/** `claude -v` prints `<version> (Claude Code)`. */
const VERSION_LINE = /^(\S+) \(Claude Code\)\s*$/m;

/** Runs `claude -v`; throws `config` (with the install command) when the CLI cannot run. */
export async function checkClaudeCode(options: ClaudeCheckOptions): Promise<{ version: string }> {
  const outcome = await runClaudeCommand({
    ...options,
    args: ['-v'],
    cwd: options.cwd ?? tmpdir(),
    timeoutMs: options.timeoutMs ?? 30_000,
    purpose: '`claude -v`',
  });
  const version = VERSION_LINE.exec(outcome.stdout)?.[1];
  if (outcome.exitCode !== 0 || version === undefined) {
    throw new RatchetError(
      'config',
      `'${options.binary} -v' did not report a Claude Code version (exit code ${outcome.exitCode ?? 'none'}): ${excerpt(outcome.output) || '(no output)'}`,
      { hint: CLAUDE_INSTALL_HINT, details: { binary: options.binary } },
    );
  }
  return { version };
}

/**
 * Runs `claude -p "Respond with OK" --output-format json --tools "" --restricted` in a fresh,
 * empty temporary directory (removed afterwards): the model gets no tool at all, and the CLI no
 * working directory with anything in it. Pass the runner every call of the CLI gets
 * (`createClaudeRunner`: sandboxed, credentials through the API proxy). Throws `auth` with the
 * /login instructions when the CLI is not authenticated, the other API codes (`rate-limit`,
 * `overloaded`, `network`, `provider`) when the query fails for another reason.
 */
export async function checkClaudeAuth(options: ClaudeCheckOptions): Promise<ClaudeAuthCheck> {
  const cwd = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-claude-check-')));
  let outcome: Awaited<ReturnType<typeof runClaude>>;
  try {
    outcome = await runClaude({
      ...options,
      env: withBaseUrl(options.env, options.baseUrl),
      args: ['-p', 'Respond with OK', '--output-format', 'json', '--tools', '', '--restricted'],
      cwd,
      timeoutMs: options.timeoutMs ?? 120_000,
      purpose: 'the authentication check',
    });
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
  const { result } = outcome;
  const failure = apiFailureOf(result);
  if (failure !== undefined) throw failure;
  if (result.is_error) {
    throw new RatchetError(
      'provider',
      `The Claude Code authentication check failed (${result.subtype}): ${errorsText(result) || result.result || 'no details'}`,
      {
        details: { sessionId: result.session_id },
      },
    );
  }
  return { result: result.result ?? '', costUsd: result.total_cost_usd };
}
