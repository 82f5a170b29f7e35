/**
 * The config pipeline: read `.ratchet/config.toml` -> validate against the schema (defaults
 * filled) -> layer env, then flags, over it -> named cross-field rules -> `ResolvedConfig`.
 * Precedence per key: flags > env > file > defaults. Per-stage tables (`[stages.red]`) beat the
 * global value from the file or env; a command-line `--model` / `--max-attempts` is the most
 * explicit instruction and applies to every stage. The stage models `--model` overrides are kept
 * in `overriddenStageModels`, for the run to warn about (`stageModelOverrideNotice`).
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { RatchetError } from '../core/errors.js';
import { closest, parseToml, schemaIssueError } from './internal/issues.js';
import { toResolvedConfig, type ConfigOrigin, type ResolvedConfig } from './resolved.js';
import { checkConfigRules } from './rules.js';
import {
  ConfigFileSchema,
  ProviderNameSchema,
  RefactorModeSchema,
  STAGE_KEYS,
  type ConfigFile,
  type StageKey,
} from './schema.js';
import { configPath } from './write-default.js';

/** Environment as read by Ratchet (pass `process.env` from the CLI; a plain object in tests). */
export type ConfigEnv = Readonly<Record<string, string | undefined>>;

/** Command-line settings, as the CLI parsed them (validated here). */
export interface ConfigFlags {
  provider?: string;
  model?: string;
  baseUrl?: string;
  /** Cassette path; relative paths resolve against the repository root. */
  cassette?: string;
  refactor?: string;
  maxAttempts?: number;
  /** `--no-sandbox`: the user's explicit opt-in to run model-written commands without a sandbox. */
  noSandbox?: boolean;
}

export interface LoadConfigOptions {
  /** Absolute repository root (see `resolveProjectRoot`). */
  repoRoot: string;
  env: ConfigEnv;
  flags?: ConfigFlags;
  /** Cross-field rules (`ConfigProblem.rule`) not to enforce: `ratchet doctor` reports them as checks of its own. */
  skipRules?: readonly string[];
}

/** Loads and resolves the configuration of a repository. Throws RatchetError `config` / `usage`. */
export async function loadConfig({
  repoRoot,
  env,
  flags = {},
  skipRules = [],
}: LoadConfigOptions): Promise<ResolvedConfig> {
  const file = configPath(repoRoot);
  const text = await readOptional(file);
  const origins: Record<string, ConfigOrigin> = {};
  let config: ConfigFile;
  if (text === undefined) {
    config = ConfigFileSchema.parse({});
  } else {
    const parsed = parseConfigText(text, file);
    config = parsed.config;
    for (const key of parsed.keys) origins[key] = 'file';
  }
  applyEnv(config, env, origins);
  const overriddenStageModels = applyFlags(config, flags, origins);
  // An OpenAI-compatible server may be named by OPENAI_BASE_URL, as the OpenAI clients do.
  const openAiBaseUrl = env.OPENAI_BASE_URL?.trim();
  if (config.provider.name === 'openai-compatible' && config.provider.base_url === undefined && openAiBaseUrl) {
    config.provider.base_url = openAiBaseUrl;
    origins['provider.base_url'] = 'env';
  }
  const problems = checkConfigRules(config, origins).filter((each) => !skipRules.includes(each.rule));
  const [problem] = problems;
  if (problem !== undefined) {
    const where = text === undefined ? '' : ` (${file})`;
    const details = { file, keyPath: problem.keyPath, rule: problem.rule, rules: problems.map((each) => each.rule) };
    if (problems.length === 1)
      throw new RatchetError('config', `${problem.message}${where}.`, { hint: problem.hint, details });
    // Every problem is said at once, each with its fix: fixing one should not only reveal the next.
    const lines = problems.map((each) => `  - ${each.message}. ${each.hint}`);
    throw new RatchetError('config', `${problems.length} problems in the configuration${where}:\n${lines.join('\n')}`, {
      hint: 'Fix each of them; `ratchet doctor` checks the configuration again.',
      details,
    });
  }
  return toResolvedConfig({
    file: config,
    repoRoot,
    home: resolveRatchetHome(env),
    configFile: text === undefined ? null : file,
    origins,
    overriddenStageModels,
  });
}

/**
 * Validates config text (the contents of `file`, named in errors). Returns the config with
 * defaults filled and the dotted key paths the text sets.
 */
export function parseConfigText(text: string, file: string): { config: ConfigFile; keys: string[] } {
  const raw = parseToml(text, file);
  const result = ConfigFileSchema.safeParse(raw);
  if (!result.success) throw schemaIssueError(result.error.issues, file, text, ConfigFileSchema, raw);
  return { config: result.data, keys: leafKeys(raw) };
}

/** `--cwd` when given, else `$TDD_PROJECT_ROOT`, else the process directory; always absolute. */
export function resolveProjectRoot({
  cwdFlag,
  env,
  processCwd,
}: {
  cwdFlag?: string | undefined;
  env: ConfigEnv;
  processCwd: string;
}): string {
  const chosen = nonEmpty(cwdFlag) ?? nonEmpty(env.TDD_PROJECT_ROOT);
  return chosen === undefined ? resolve(processCwd) : resolve(processCwd, expandHome(chosen, env));
}

/** `$RATCHET_HOME` (a leading `~` is expanded), default `~/.ratchet`; always absolute. */
export function resolveRatchetHome(env: ConfigEnv): string {
  const configured = nonEmpty(env.RATCHET_HOME);
  if (configured === undefined) return join(userHome(env), '.ratchet');
  const expanded = expandHome(configured, env);
  return isAbsolute(expanded) ? resolve(expanded) : resolve(userHome(env), expanded);
}

function applyEnv(config: ConfigFile, env: ConfigEnv, origins: Record<string, ConfigOrigin>): void {
  const model = nonEmpty(env.TDD_MODEL);
  if (model !== undefined) set(origins, 'provider.model', 'env', () => (config.provider.model = model));
  const retries = nonEmpty(env.TDD_MAX_RETRIES);
  if (retries !== undefined) {
    if (!/^\d+$/.test(retries) || Number(retries) < 1) {
      throw new RatchetError('config', `TDD_MAX_RETRIES must be a positive integer, got "${retries}"`, {
        hint: 'Set TDD_MAX_RETRIES to the number of attempts per stage (e.g. 3), or unset it.',
        details: { env: 'TDD_MAX_RETRIES' },
      });
    }
    set(origins, 'tdd.max_attempts', 'env', () => (config.tdd.max_attempts = Number(retries)));
  }
}

/** Applies the flags; returns the `[stages.*] model` settings `--model` overrode with another model. */
function applyFlags(
  config: ConfigFile,
  flags: ConfigFlags,
  origins: Record<string, ConfigOrigin>,
): Array<{ stage: StageKey; model: string }> {
  const overridden: Array<{ stage: StageKey; model: string }> = [];
  if (flags.provider !== undefined) {
    const name = flag('--provider', ProviderNameSchema, flags.provider);
    set(origins, 'provider.name', 'flag', () => (config.provider.name = name));
  }
  if (flags.model !== undefined) {
    const model = flag('--model', z.string().min(1), flags.model);
    set(origins, 'provider.model', 'flag', () => (config.provider.model = model));
    for (const key of STAGE_KEYS) {
      const stageModel = config.stages[key]?.model;
      if (stageModel !== undefined && stageModel !== model) overridden.push({ stage: key, model: stageModel });
      delete config.stages[key]?.model;
    }
  }
  if (flags.baseUrl !== undefined) {
    const baseUrl = flag('--base-url', z.url(), flags.baseUrl);
    set(origins, 'provider.base_url', 'flag', () => (config.provider.base_url = baseUrl));
  }
  if (flags.cassette !== undefined) {
    const cassette = flag('--cassette', z.string().min(1), flags.cassette);
    set(origins, 'provider.cassette', 'flag', () => (config.provider.cassette = cassette));
  }
  if (flags.refactor !== undefined) {
    const mode = flag('--refactor', RefactorModeSchema, flags.refactor);
    set(origins, 'tdd.refactor', 'flag', () => (config.tdd.refactor = mode));
  }
  if (flags.maxAttempts !== undefined) {
    const attempts = flag('--max-attempts', z.number().int().positive(), flags.maxAttempts);
    set(origins, 'tdd.max_attempts', 'flag', () => (config.tdd.max_attempts = attempts));
    for (const key of STAGE_KEYS) delete config.stages[key]?.max_attempts;
  }
  if (flags.noSandbox === true) set(origins, 'bash.sandbox', 'flag', () => (config.bash.sandbox = 'off'));
  return overridden;
}

function flag<T>(name: string, schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const nearest =
    issue?.code === 'invalid_value' && typeof value === 'string'
      ? closest(
          value,
          issue.values.filter((candidate): candidate is string => typeof candidate === 'string'),
        )
      : undefined;
  throw new RatchetError('usage', `Invalid ${name} "${String(value)}": ${issue?.message ?? 'invalid'}`, {
    hint: `${nearest === undefined ? '' : `Did you mean ${name} ${nearest}? `}Run with --help to see the accepted values of ${name}.`,
    details: { flag: name },
  });
}

function set(origins: Record<string, ConfigOrigin>, key: string, origin: ConfigOrigin, apply: () => void): void {
  apply();
  origins[key] = origin;
}

/** Dotted paths of the values (not tables) a parsed TOML document sets. */
function leafKeys(table: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(table).flatMap(([key, value]) =>
    value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)
      ? leafKeys(value as Record<string, unknown>, `${prefix}${key}.`)
      : [`${prefix}${key}`],
  );
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return undefined;
    throw new RatchetError('config', `Cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
      hint: 'Check the file permissions.',
      details: { file },
    });
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function userHome(env: ConfigEnv): string {
  return nonEmpty(env.HOME) ?? homedir();
}

function expandHome(path: string, env: ConfigEnv): string {
  return path === '~' || path.startsWith('~/') ? join(userHome(env), path.slice(1)) : path;
}
