/**
 * Named cross-field rules, checked after the file, env and flags are layered. Each rule is a pure
 * predicate over the layered config; a violation is data (`ConfigProblem`), and the loader turns
 * the first one into a `config` error.
 */
import type { ConfigOrigin } from './resolved.js';
import type { ConfigFile, ProviderName } from './schema.js';

export interface ConfigProblem {
  rule: string;
  /** Dotted snake_case key the problem is about. */
  keyPath: string;
  message: string;
  hint: string;
}

export interface ConfigRule {
  name: string;
  check(config: ConfigFile, origins: Readonly<Record<string, ConfigOrigin>>): Omit<ConfigProblem, 'rule'> | undefined;
}

/** Providers whose default model (a Claude id) cannot be right: the user must name one. */
const PROVIDERS_WITHOUT_DEFAULT_MODEL: readonly ProviderName[] = ['openai', 'openai-compatible', 'ollama'];

const CONFIG_RULES: readonly ConfigRule[] = [
  {
    name: 'hard-limit-above-split-threshold',
    check: ({ refactor_check: check }) =>
      check.hard_limit > check.split_threshold
        ? undefined
        : {
            keyPath: 'refactor_check.hard_limit',
            message: `refactor_check.hard_limit (${check.hard_limit}) must be greater than split_threshold (${check.split_threshold})`,
            hint: 'Raise [refactor_check] hard_limit or lower split_threshold.',
          },
  },
  {
    name: 'replay-needs-cassette',
    check: ({ provider }) =>
      provider.name !== 'replay' || provider.cassette !== undefined
        ? undefined
        : {
            keyPath: 'provider.cassette',
            message: 'The replay provider needs a cassette',
            hint: 'Pass --cassette <file.ndjson> or set [provider] cassette in .ratchet/config.toml.',
          },
  },
  {
    name: 'openai-compatible-needs-base-url',
    check: ({ provider }) =>
      provider.name !== 'openai-compatible' || provider.base_url !== undefined
        ? undefined
        : {
            keyPath: 'provider.base_url',
            message: 'The openai-compatible provider needs a base URL',
            hint: 'Pass --base-url http://host:port/v1, set OPENAI_BASE_URL, or set [provider] base_url in .ratchet/config.toml.',
          },
  },
  {
    name: 'provider-needs-explicit-model',
    check: ({ provider }, origins) =>
      !PROVIDERS_WITHOUT_DEFAULT_MODEL.includes(provider.name) || origins['provider.model'] !== undefined
        ? undefined
        : {
            keyPath: 'provider.model',
            message: `Provider "${provider.name}" has no default model`,
            hint: 'Pass --model <id>, set TDD_MODEL, or set [provider] model in .ratchet/config.toml.',
          },
  },
];

/** Every rule violation of a layered config, in rule order. */
export function checkConfigRules(
  config: ConfigFile,
  origins: Readonly<Record<string, ConfigOrigin>>,
  rules: readonly ConfigRule[] = CONFIG_RULES,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const rule of rules) {
    const problem = rule.check(config, origins);
    if (problem !== undefined) problems.push({ rule: rule.name, ...problem });
  }
  return problems;
}
