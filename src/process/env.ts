import { isSecretVariable } from '../core/redact.js';

/**
 * An environment overlay that unsets every variable named like a secret in `env` (for the agent's
 * shell, which needs none of them; the project's own commands lose only the provider keys).
 */
export function withoutSecretVariables(env: Readonly<Record<string, string | undefined>>): Record<string, undefined> {
  return Object.fromEntries(
    Object.keys(env)
      .filter((name) => isSecretVariable(name))
      .map((name) => [name, undefined]),
  );
}

/**
 * Model provider credentials that Ratchet itself uses. The project's own commands (tests, lint,
 * typecheck, verifiers) never need them, and a command that prints its environment would
 * otherwise put them in logs, reports and the next prompt.
 */
const PROVIDER_SECRETS = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'OPENAI_API_KEY',
] as const;

/** An environment overlay (for `CommandSpec.env`) that unsets the provider credentials. */
export function withoutProviderSecrets(): Record<string, undefined> {
  return Object.fromEntries(PROVIDER_SECRETS.map((name) => [name, undefined]));
}
