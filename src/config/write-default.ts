/**
 * The commented `.ratchet/config.toml` written by `ratchet init`. It is generated from the schema
 * (descriptions become comments, defaults become commented values), so it cannot drift from what
 * the loader accepts.
 */
import { join } from 'node:path';
import { stringify } from 'smol-toml';
import { z } from 'zod';
import { describeSchema, objectFields, unwrapSchema } from './internal/schema-walk.js';
import { ConfigFileSchema, DEFAULT_MODEL, defaultConfigFile, STAGE_KEYS, type ProviderName } from './schema.js';

/** Path of a repository's config file. */
export function configPath(repoRoot: string): string {
  return join(repoRoot, '.ratchet', 'config.toml');
}

export interface DefaultConfigOptions {
  /** Written as an active `[test] command` (e.g. from framework detection). */
  testCommand?: string;
  /** Written as active `[lint] command` / `[typecheck] command` (detected from the project). */
  lintCommand?: string;
  typecheckCommand?: string;
  provider?: ProviderName;
  /** Written as an active `[provider] model`; otherwise the default is shown commented. */
  model?: string;
}

/** Example values for keys that have no default. */
const EXAMPLES: Record<string, unknown> = {
  'provider.base_url': 'http://127.0.0.1:8000/v1',
  'provider.cassette': '.ratchet/cassettes/session.ndjson',
  'provider.max_output_tokens': 8192,
  'test.command': 'npm test',
  'lint.command': 'npm run lint',
  'typecheck.command': 'npx tsc --noEmit',
  'bash.env': ['DATABASE_URL'],
  'refactor.max_runtime_minutes': 120,
  'bash.max_memory_mb': 8192,
  'budget.context_window': 32768,
  'stages.model': DEFAULT_MODEL,
  'stages.timeout': 300,
  'stages.max_attempts': 3,
  'stages.max_turns': 60,
  'stages.max_output_tokens': 32000,
};

const HEADER = `# Ratchet configuration. Precedence per key: command-line flags > environment
# (TDD_MODEL, TDD_MAX_RETRIES) > this file > built-in defaults.
# Commented lines show defaults or examples; uncomment a line to change it. Unknown keys are errors.
# Durations are in seconds.`;

/** A commented config.toml that validates against the schema. */
export function renderDefaultConfig(options: DefaultConfigOptions = {}): string {
  const active: Record<string, unknown> = {
    'provider.name': options.provider ?? 'anthropic',
  };
  if (options.model !== undefined) active['provider.model'] = options.model;
  if (options.testCommand !== undefined) active['test.command'] = options.testCommand;
  if (options.lintCommand !== undefined) active['lint.command'] = options.lintCommand;
  if (options.typecheckCommand !== undefined) active['typecheck.command'] = options.typecheckCommand;
  const defaults = defaultConfigFile() as unknown as Record<string, unknown>;
  const blocks = [HEADER];
  for (const [section, schema] of Object.entries(objectFields(ConfigFileSchema))) {
    if (schema === undefined) continue;
    if (section === 'stages') blocks.push(renderStagesExample(schema));
    else if (section === 'team') blocks.push(renderTeamExample(schema));
    else blocks.push(...renderTable([section], schema, defaults[section], active));
  }
  return `${blocks.join('\n\n')}\n`;
}

function renderTable(path: string[], schema: z.ZodType, defaults: unknown, active: Record<string, unknown>): string[] {
  const table = unwrapSchema(schema);
  if (!(table instanceof z.ZodObject)) return [];
  const lines = [...comment(describeSchema(schema)), `[${path.join('.')}]`];
  const subtables: string[] = [];
  for (const [key, field] of Object.entries(objectFields(table))) {
    if (field === undefined) continue;
    const keyPath = [...path, key];
    const fallback = isRecord(defaults) ? defaults[key] : undefined;
    if (unwrapSchema(field) instanceof z.ZodObject) {
      subtables.push(...renderTable(keyPath, field, fallback, active));
      continue;
    }
    lines.push(...comment(describeField(field)));
    const dotted = keyPath.join('.');
    if (dotted in active) lines.push(assignment(key, active[dotted]));
    else lines.push(`# ${assignment(key, shown(fallback, EXAMPLES[dotted]))}`);
  }
  return [lines.join('\n'), ...subtables];
}

/** The value a commented line shows: the default, or an example where the default is empty or unset. */
function shown(fallback: unknown, example: unknown): unknown {
  if (Array.isArray(fallback) && fallback.length === 0 && example !== undefined) return example;
  return fallback ?? example ?? '';
}

function renderStagesExample(schema: z.ZodType): string {
  const override = unwrapSchema(objectFields(unwrapSchema(schema) as z.ZodObject).refactor ?? z.object({}));
  const lines = [
    ...comment(describeSchema(schema)),
    `# Stages: ${STAGE_KEYS.join(', ')}. Unset keys fall back to [provider] and [tdd].`,
    '# [stages.refactor]',
  ];
  if (override instanceof z.ZodObject) {
    for (const [key, field] of Object.entries(objectFields(override))) {
      lines.push(
        ...comment(field === undefined ? undefined : describeSchema(field)),
        `# ${assignment(key, EXAMPLES[`stages.${key}`] ?? '')}`,
      );
    }
  }
  return lines.join('\n');
}

/**
 * `[team]` is a whole team or none (its agents have no default), so it is shown as an example to
 * copy, indented apart from the commented defaults of the other tables.
 */
function renderTeamExample(schema: z.ZodType): string {
  const example = [
    '[team]',
    'max_turns = 30',
    '[[team.agents]]',
    'name = "agent-1"',
    '[[team.agents]]',
    'name = "agent-2"',
    '[team.coach]',
    'name = "coach"',
    '[team.file_access]',
    'writable_paths = ["docs/**", "src/**", "test/**", "tests/**"]',
  ];
  return [...comment(describeSchema(schema)), '# For example:', ...example.map((line) => `#   ${line}`)].join('\n');
}

function describeField(field: z.ZodType): string | undefined {
  const inner = unwrapSchema(field);
  const choices = inner instanceof z.ZodEnum ? ` One of: ${inner.options.join(', ')}.` : '';
  const description = describeSchema(field);
  return description === undefined ? undefined : `${description}${choices}`;
}

function comment(text: string | undefined): string[] {
  return text === undefined ? [] : [`# ${text}`];
}

/** `key = value` in TOML syntax. */
function assignment(key: string, value: unknown): string {
  return stringify({ [key]: value }).trim();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
