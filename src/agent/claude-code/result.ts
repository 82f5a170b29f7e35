/**
 * The JSON result the Claude Code CLI prints with `--output-format json` (see PROTOCOLS.md,
 * "Claude Code CLI, headless"), validated with zod, and the mapping of its API failures to
 * `RatchetError`s. The codes come from the fields the CLI sets (`api_error_status`, `api_error`);
 * the only text looked at is the CLI's fixed "Not logged in" answer, which carries no status.
 */
import { z } from 'zod';
import { RatchetError } from '../../core/errors.js';

/** What to do when Claude Code is not authenticated. */
export const CLAUDE_AUTH_HINT =
  'Run `claude` once interactively and use /login, or set ANTHROPIC_API_KEY in the environment.';

/** What to do when the `claude` executable cannot be run. */
export const CLAUDE_INSTALL_HINT =
  'Install Claude Code with `npm install -g @anthropic-ai/claude-code`, or set the path of the `claude` executable in .ratchet/config.toml: [refactor.claude] binary = "/path/to/claude".';

/** The answer of a CLI that has no credentials at all (no API key, never logged in). */
const NOT_LOGGED_IN = 'Not logged in';

const usageSchema = z.looseObject({
  input_tokens: z.number().default(0),
  output_tokens: z.number().default(0),
});

/** The fields Ratchet reads; the CLI adds many more (`modelUsage`, `permission_denials`, ...). */
const claudeResultSchema = z.looseObject({
  type: z.literal('result'),
  /** `success`, `error_max_turns`, `error_max_budget_usd`, `error_during_execution`, `error_max_structured_output_retries`. */
  subtype: z.string(),
  /** True for every error subtype, and for `success` when the turn ended on an API or auth error. */
  is_error: z.boolean(),
  /** The final text; absent for error subtypes. With `--json-schema`, the output as JSON text. */
  result: z.string().optional(),
  session_id: z.string(),
  total_cost_usd: z.number(),
  usage: usageSchema.default({ input_tokens: 0, output_tokens: 0 }),
  /** Keyed by the model ids the CLI actually used. */
  modelUsage: z.record(z.string(), z.unknown()).optional(),
  num_turns: z.number(),
  duration_ms: z.number(),
  duration_api_ms: z.number().optional(),
  /** Present only when `--json-schema` was given and the model called `StructuredOutput` validly. */
  structured_output: z.unknown().optional(),
  /** Messages of the error subtypes (strings in the CLI versions seen so far). */
  errors: z.array(z.unknown()).optional(),
  /** HTTP status of the API error that ended the turn, or null. */
  api_error_status: z.number().nullable().optional(),
  /** Connection-level failure that ended the turn, e.g. `connection_failed`. */
  api_error: z.string().optional(),
  terminal_reason: z.string().optional(),
});

export type ClaudeResult = z.infer<typeof claudeResultSchema>;

/** The first `length` characters of a text, for error messages about unexpected output. */
export function excerpt(text: string, length = 200): string {
  const trimmed = text.trim();
  return trimmed.length <= length ? trimmed : `${trimmed.slice(0, length)}...`;
}

/**
 * Parses what the CLI printed on stdout. The result is one JSON object; should anything be
 * printed before it, the last line that parses is used. Throws `provider` otherwise.
 */
export function parseClaudeResult(stdout: string, stderr: string, exitCode: number | null): ClaudeResult {
  const text = stdout.trim();
  if (text === '') {
    throw new RatchetError(
      'provider',
      `Claude Code printed no result (exit code ${exitCode ?? 'none'}): ${excerpt(stderr) || '(no output)'}`,
      { details: { exitCode } },
    );
  }
  const candidates = [
    text,
    ...text
      .split('\n')
      .reverse()
      .map((line) => line.trim())
      .filter((line) => line.startsWith('{')),
  ];
  let json: unknown;
  for (const candidate of candidates) {
    json = parseJson(candidate);
    if (json !== undefined) break;
  }
  if (json === undefined) {
    throw new RatchetError('provider', `Claude Code printed output that is not JSON: ${excerpt(text)}`, {
      details: { exitCode },
    });
  }
  const parsed = claudeResultSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '' : ` at ${issue.path.map(String).join('.')}`;
    throw new RatchetError(
      'provider',
      `Claude Code printed JSON that is not a result${where}: ${issue?.message ?? 'invalid'} (${excerpt(text)})`,
      { details: { exitCode } },
    );
  }
  return parsed.data;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The error messages of an error subtype, one per line. */
export function errorsText(result: ClaudeResult): string {
  return (result.errors ?? []).map((entry) => (typeof entry === 'string' ? entry : JSON.stringify(entry))).join('\n');
}

/**
 * The `RatchetError` for a result that ended on an API, connection or authentication failure,
 * or undefined when the run itself went through (successfully or not).
 */
export function apiFailureOf(result: ClaudeResult): RatchetError | undefined {
  if (!result.is_error || result.subtype !== 'success') return undefined;
  const message = result.result ?? (errorsText(result) || 'Claude Code reported an error');
  const status = result.api_error_status ?? undefined;
  const details = { sessionId: result.session_id, status, terminalReason: result.terminal_reason };
  if (status === 401 || status === 403 || (status === undefined && message.startsWith(NOT_LOGGED_IN))) {
    return new RatchetError('auth', `Claude Code is not authenticated: ${message}`, {
      hint: CLAUDE_AUTH_HINT,
      details,
    });
  }
  if (status === 429) {
    return new RatchetError('rate-limit', `Claude Code was rate limited: ${message}`, { retryable: true, details });
  }
  if (status !== undefined && (status >= 500 || status === 408 || status === 409)) {
    return new RatchetError('overloaded', `Claude Code's API is unavailable (${status}): ${message}`, {
      retryable: true,
      details,
    });
  }
  if (status === undefined && result.api_error !== undefined) {
    return new RatchetError('network', `Claude Code could not reach the API (${result.api_error}): ${message}`, {
      retryable: true,
      details,
    });
  }
  return new RatchetError('provider', `Claude Code failed: ${message}`, { details });
}
