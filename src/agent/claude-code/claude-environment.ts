/**
 * The environment the Claude Code CLI starts from when Ratchet runs it for an agent: an
 * allowlist, never inherited, because the CLI's tools (its Bash and what that runs) inherit it.
 * `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, provider keys, `SSH_AUTH_SOCK`, proxies and everything
 * else not named here stay with Ratchet; the CLI's own credential reaches it through the API
 * proxy (see `claude-runner.ts`).
 *
 * The base list is the one every command Ratchet runs gets; `src/process/env.ts` is growing the
 * same allowlist for the agent's Bash and the project's commands (`commandEnvironment`, with
 * `[bash] env` adding names): the two are to become one.
 */

/**
 * What any command needs (finding programs and toolchains, temporary files, text encoding and
 * time zone, which change test results) and toolchain locations, which hold no credentials.
 */
const BASE_VARIABLES = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TMPDIR',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TERM',
  'CI',
  'GOROOT',
  'GOPATH',
  'GOFLAGS',
  'GOCACHE',
  'GOMODCACHE',
  'GOTOOLCHAIN',
  'CARGO_HOME',
  'RUSTUP_HOME',
  'RUSTUP_TOOLCHAIN',
  'PYENV_ROOT',
  'PYENV_VERSION',
  'VIRTUAL_ENV',
  'CONDA_PREFIX',
  'JAVA_HOME',
  'GRADLE_USER_HOME',
  'MAVEN_HOME',
  'M2_HOME',
  'NVM_DIR',
  'NVM_BIN',
  'VOLTA_HOME',
  'PNPM_HOME',
  'COREPACK_HOME',
  'XDG_CACHE_HOME',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
];

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

const PREFIXES = ['LC_'];

/**
 * The variables of `source` that are in the lists above, start with `LC_`, or are named in
 * `pass` (`[bash] env`, once the configuration has it), and nothing else.
 */
export function claudeEnvironment(
  source: Readonly<Record<string, string | undefined>>,
  pass: readonly string[] = [],
): Record<string, string> {
  const allowed = new Set([...BASE_VARIABLES, ...CLAUDE_SETTINGS, ...pass]);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if (allowed.has(name) || PREFIXES.some((prefix) => name.startsWith(prefix))) env[name] = value;
  }
  return env;
}
