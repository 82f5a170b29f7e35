/**
 * The environment the Claude Code CLI starts from when Ratchet runs it for an agent: an
 * allowlist, never inherited, because the CLI's tools (its Bash and what that runs) inherit it.
 * `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, provider keys, `SSH_AUTH_SOCK`, proxies and everything
 * else not named here stay with Ratchet; the CLI's own credential reaches it through the API
 * proxy (see `claude-runner.ts`).
 *
 * The base is the allowlist every command Ratchet runs for a project or an agent starts from
 * (`commandEnvironment`, with the names `[bash] env` adds), plus the CLI's own settings below.
 */
import { commandEnvironment } from '../../process/env.js';

/**
 * Settings of the CLI itself the user may have made (models, output and thinking budgets, its
 * retries and timeouts, what it reports home), none of them a credential, and the Bash limits
 * the runtime sets for each stage.
 */
const CLAUDE_SETTINGS = [
  'ANTHROPIC_MODEL',
  'ANTHROPIC_SMALL_FAST_MODEL',
  'ANTHROPIC_DEFAULT_OPUS_MODEL',
  'ANTHROPIC_DEFAULT_SONNET_MODEL',
  'ANTHROPIC_DEFAULT_HAIKU_MODEL',
  'CLAUDE_CODE_SUBAGENT_MODEL',
  'CLAUDE_CODE_MAX_OUTPUT_TOKENS',
  'MAX_THINKING_TOKENS',
  'CLAUDE_CODE_EFFORT_LEVEL',
  'CLAUDE_CODE_MAX_RETRIES',
  'API_TIMEOUT_MS',
  'BASH_DEFAULT_TIMEOUT_MS',
  'BASH_MAX_TIMEOUT_MS',
  'BASH_MAX_OUTPUT_LENGTH',
  'CLAUDE_CODE_DISABLE_BACKGROUND_TASKS',
  'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
  'DISABLE_TELEMETRY',
  'DISABLE_ERROR_REPORTING',
  'DISABLE_PROMPT_CACHING',
];

/**
 * The variables of `source` that every command gets (see `commandEnvironment`), the CLI's own
 * settings above, and those named in `pass` (`[bash] env`), and nothing else.
 */
export function claudeEnvironment(
  source: Readonly<Record<string, string | undefined>>,
  pass: readonly string[] = [],
): Record<string, string> {
  return commandEnvironment(source, [...CLAUDE_SETTINGS, ...pass]);
}
