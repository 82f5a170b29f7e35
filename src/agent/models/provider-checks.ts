/**
 * `ratchet doctor`'s checks of the configured provider: what each provider needs before a run
 * (a key, a cassette, the Claude Code CLI) and, for the HTTP providers, its endpoint (see
 * `endpointChecks`). The CLI prints them; only this module and `llm/` know the providers apart.
 */
import { existsSync } from 'node:fs';
import { toRatchetError } from '../../core/errors.js';
import type { ResolvedConfig } from '../../config/resolved.js';
import type { ProcessRunner } from '../../process/types.js';
import { endpointChecks, type EndpointCheck } from '../../llm/endpoint-checks.js';
import { isHttpProvider, replaysCassette } from '../../llm/provider-kinds.js';
import { checkClaudeCode } from '../claude-code-runtime.js';
import { configuredModels } from './run-models.js';

const KEY_VARS: Record<string, string | undefined> = { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY' };

/** Whether the provider's agent is a CLI that brings its own tools (Claude Code) rather than our tool loop. */
function runsOwnTools(provider: string): boolean {
  return provider === 'claude-code';
}

/** What runs the model's commands with this provider, for sentences such as "... run without a sandbox". */
export function agentCommandsText(provider: string): string {
  // With claude-code the CLI itself runs in the sandbox: its Bash, Write and Edit are the agent's tools.
  return runsOwnTools(provider) ? 'the Claude Code CLI with its tools' : "the agent's Bash";
}

/** The `provider` check, then (HTTP providers) `endpoint`, `key` and `model`: no token is spent. */
export async function providerChecks(
  config: ResolvedConfig,
  effects: { env: Record<string, string | undefined>; runner: ProcessRunner; fetch: typeof fetch },
  options: { modelMissing?: boolean } = {},
): Promise<EndpointCheck[]> {
  const checks: EndpointCheck[] = [];
  const provider = config.provider.name;
  // Without a model (doctor reports that as its own check), the default is only a placeholder.
  const model = options.modelMissing ? '(no model)' : config.provider.model;
  const keyVar = KEY_VARS[provider];
  if (keyVar) {
    checks.push(
      effects.env[keyVar]
        ? { name: 'provider', status: 'ok', detail: `${provider} ${model}, ${keyVar} is set` }
        : {
            name: 'provider',
            status: 'fail',
            detail: `${provider}: ${keyVar} is not set`,
            hint: `export ${keyVar}=... (or choose another --provider)`,
          },
    );
  }
  if (replaysCassette(provider)) {
    const cassette = config.provider.cassette;
    checks.push(
      cassette && existsSync(cassette)
        ? { name: 'provider', status: 'ok', detail: `replay ${cassette}` }
        : {
            name: 'provider',
            status: 'fail',
            detail: cassette ? `replay: the cassette ${cassette} does not exist` : 'replay: no cassette',
            hint: cassette
              ? 'Check the path (--cassette is relative to the current directory, [provider] cassette to the repository), or record one with --record FILE.'
              : 'Pass --cassette FILE or set [provider] cassette.',
          },
    );
  } else if (runsOwnTools(provider)) {
    try {
      const { version } = await checkClaudeCode({
        binary: config.refactor.claude.binary,
        runner: effects.runner,
        env: effects.env,
      });
      checks.push({
        name: 'provider',
        status: 'ok',
        detail: `claude-code ${version} (${config.refactor.claude.binary}); run \`claude\` then /login if a run reports it is not logged in`,
      });
    } catch (error) {
      const failure = toRatchetError(error);
      checks.push({
        name: 'provider',
        status: 'fail',
        detail: failure.message,
        ...(failure.hint ? { hint: failure.hint } : {}),
      });
    }
  } else if (!keyVar) {
    checks.push({
      name: 'provider',
      status: 'ok',
      detail: `${provider} ${model}${config.provider.baseUrl ? ` at ${config.provider.baseUrl}` : ''}`,
    });
  }
  if (isHttpProvider(provider)) {
    // Lists the models: proves endpoint and key without spending tokens.
    checks.push(
      ...(await endpointChecks({
        provider,
        models: options.modelMissing ? [] : configuredModels(config),
        baseUrl: config.provider.baseUrl,
        env: effects.env,
        fetch: effects.fetch,
        timeoutMs: 5_000,
      })),
    );
  }
  return checks;
}
