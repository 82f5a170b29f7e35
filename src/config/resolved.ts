/**
 * The resolved configuration: camelCase, every default filled, durations in milliseconds, paths
 * absolute. It is what the rest of Ratchet reads; the written (file) type stays in `schema.ts`.
 */
import { totalmem } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import type { AgentStageName } from '../core/stages.js';
import type { ConfigFile, ProviderName, RefactorMode, StageKey } from './schema.js';

/** Where a setting came from; settings absent from `ResolvedConfig.origins` are defaults. */
export type ConfigOrigin = 'file' | 'env' | 'flag';

interface StageOverride {
  model?: string;
  timeoutMs?: number;
  maxAttempts?: number;
  maxTurns?: number;
  maxOutputTokens?: number;
}

/** What one agent stage runs with, after per-stage overrides. */
export interface StageSettings {
  model: string;
  timeoutMs: number;
  maxAttempts: number;
  maxTurns: number;
  /** Configured output tokens per model call; undefined: the default for the model (`maxOutputTokensFor`). */
  maxOutputTokens: number | undefined;
}

/** The limits of one sandboxed command (`[bash] max_*`, `min_free_disk_mb`). */
export interface SandboxLimitSettings {
  processes: number;
  fileSizeMb: number;
  memoryMb: number;
  /** 0: no floor. */
  minFreeDiskMb: number;
}

/** `[bash] max_memory_mb` by default: three quarters of the machine's memory, kept between 2 and 16 GiB. */
function defaultMemoryMb(totalBytes: number): number {
  return Math.min(16_384, Math.max(2048, Math.floor((totalBytes * 0.75) / 2 ** 20)));
}

export interface ResolvedConfig {
  /** Absolute path of the repository the config belongs to. */
  repoRoot: string;
  /** Absolute `$RATCHET_HOME` (default `~/.ratchet`): worktrees and backups. */
  home: string;
  /** Absolute path of the config file that was read, or null when none exists. */
  configFile: string | null;
  provider: {
    name: ProviderName;
    model: string;
    baseUrl: string | undefined;
    /** Absolute path of the replay cassette. */
    cassette: string | undefined;
    maxRetries: number;
    stream: boolean;
    /** `max_output_tokens`; undefined: the default for the model (see `llm/model-limits.ts`). */
    maxOutputTokens: number | undefined;
  };
  test: { command: string | undefined; timeoutMs: number; patterns: string[] };
  lint: { command: string | undefined };
  typecheck: { command: string | undefined };
  bash: {
    timeoutMs: number;
    sandbox: 'auto' | 'required' | 'off';
    /** Variables passed to commands besides the default set (see `commandEnvironment`). */
    env: string[];
    network: 'off' | 'on';
    limits: SandboxLimitSettings;
  };
  tdd: {
    refactor: RefactorMode;
    maxAttempts: number;
    maxTurns: number;
    stageTimeoutMs: number;
    /** The static review of test quality after RED (seed 000). */
    reviewTests: boolean;
    /** Internal failures in a row after which the review is not run again in the run (its circuit breaker). */
    reviewFailureLimit: number;
  };
  /** Per-stage overrides as configured; read them through `stageSettings`. */
  stages: Partial<Record<AgentStageName, StageOverride>>;
  refactorCheck: {
    splitThreshold: number;
    hardLimit: number;
    maxFunctionLength: number;
    maxClassMethods: number;
  };
  refactor: {
    diffBudgetLoc: number;
    maxBatches: number;
    retryPerBatch: number;
    runFullVerifierEvery: number;
    fastVerifier: string[];
    fullVerifier: string[];
    /** What any batch may change at most (a batch's own `scope_globs` only narrow it). */
    scopeGlobs: string[];
    scopeExcludes: string[];
    allowPublicApiChanges: boolean;
    /** Formatter commands of the formatting-only batch (seed 002, 17.3); empty: no such batch. */
    formatter: string[];
    /** Null: no limit. */
    maxRuntimeMinutes: number | null;
    claude: {
      binary: string;
      allowedTools: string;
      tools: string;
      maxTurnsPatcher: number;
      maxTurnsPlanner: number;
    };
  };
  /** Token budget of plan and solve passes; read the window through `contextWindowFor` (llm/). */
  budget: { contextWindow: number | undefined; reservedTokens: number };
  solve: {
    stages: Array<'scope' | 'precision'>;
    maxRetriesPerStep: number;
    maxFullFiles: number;
    context: 'pack' | 'whole-files';
  };
  /** Dotted snake_case key paths (`provider.model`) set by the file, env or flags. */
  origins: Record<string, ConfigOrigin>;
  /**
   * `[stages.<stage>] model` settings a command-line `--model` overrode (it applies to every
   * stage), with a model other than the flag's; see `stageModelOverrideNotice`.
   */
  overriddenStageModels?: Array<{ stage: StageKey; model: string }>;
}

const STAGE_KEY_OF: Record<AgentStageName, StageKey> = {
  PLAN: 'plan',
  RED: 'red',
  RED_FIX: 'red_fix',
  GREEN: 'green',
  FIX: 'fix',
  REFACTOR: 'refactor',
};

/** The `[stages.<key>]` table name of an agent stage. */
export function stageKey(stage: AgentStageName): StageKey {
  return STAGE_KEY_OF[stage];
}

/** Settings for one agent stage: its override where set, else the global value. */
export function stageSettings(config: ResolvedConfig, stage: AgentStageName): StageSettings {
  const override = config.stages[stage] ?? {};
  return {
    model: override.model ?? config.provider.model,
    timeoutMs: override.timeoutMs ?? config.tdd.stageTimeoutMs,
    maxAttempts: override.maxAttempts ?? config.tdd.maxAttempts,
    maxTurns: override.maxTurns ?? config.tdd.maxTurns,
    maxOutputTokens: override.maxOutputTokens ?? config.provider.maxOutputTokens,
  };
}

/**
 * The warning a run gives when `--model` overrides stage models of the configuration (flags win
 * over the file, and `--model` applies to every stage; the model is never swapped silently), e.g.
 * `--model gpt-4o applies to every stage: the stage models of .ratchet/config.toml are not used
 * ([stages.red] model = "claude-x").`; null when it overrides none.
 */
export function stageModelOverrideNotice(
  config: ResolvedConfig,
  /** The stages the run has (default: all); a refactor run has only `refactor`. */
  stages: readonly StageKey[] = Object.values(STAGE_KEY_OF),
): string | null {
  const overridden = (config.overriddenStageModels ?? []).filter(({ stage }) => stages.includes(stage));
  if (overridden.length === 0) return null;
  const settings = overridden.map(({ stage, model }) => `[stages.${stage}] model = ${JSON.stringify(model)}`);
  return (
    `--model ${config.provider.model} applies to every stage: the stage models of .ratchet/config.toml are not used ` +
    `(${settings.join(', ')}). Leave out --model to use them.`
  );
}

export interface ToResolvedInput {
  file: ConfigFile;
  repoRoot: string;
  home: string;
  configFile: string | null;
  origins: Record<string, ConfigOrigin>;
  overriddenStageModels?: Array<{ stage: StageKey; model: string }>;
}

const seconds = (value: number): number => value * 1000;

/** Converts the validated file type (defaults filled, layers applied) to the resolved type. */
export function toResolvedConfig({
  file,
  repoRoot,
  home,
  configFile,
  origins,
  overriddenStageModels,
}: ToResolvedInput): ResolvedConfig {
  const stages: Partial<Record<AgentStageName, StageOverride>> = {};
  for (const [stage, key] of Object.entries(STAGE_KEY_OF) as [AgentStageName, StageKey][]) {
    const override = file.stages[key];
    if (override === undefined) continue;
    stages[stage] = withoutUndefined({
      model: override.model,
      timeoutMs: override.timeout === undefined ? undefined : seconds(override.timeout),
      maxAttempts: override.max_attempts,
      maxTurns: override.max_turns,
      maxOutputTokens: override.max_output_tokens,
    });
  }
  const { provider, refactor } = file;
  return {
    repoRoot,
    home,
    configFile,
    provider: {
      name: provider.name,
      model: provider.model,
      baseUrl: provider.base_url,
      cassette: provider.cassette === undefined ? undefined : absolute(repoRoot, provider.cassette),
      maxRetries: provider.max_retries,
      stream: provider.stream,
      maxOutputTokens: provider.max_output_tokens,
    },
    test: {
      command: file.test.command,
      timeoutMs: seconds(file.test.timeout),
      patterns: file.test.patterns,
    },
    lint: { command: file.lint.command },
    typecheck: { command: file.typecheck.command },
    bash: {
      timeoutMs: seconds(file.bash.timeout),
      sandbox: file.bash.sandbox,
      env: file.bash.env,
      network: file.bash.network,
      limits: {
        processes: file.bash.max_processes,
        fileSizeMb: file.bash.max_file_size_mb,
        memoryMb: file.bash.max_memory_mb ?? defaultMemoryMb(totalmem()),
        minFreeDiskMb: file.bash.min_free_disk_mb,
      },
    },
    tdd: {
      refactor: file.tdd.refactor,
      maxAttempts: file.tdd.max_attempts,
      maxTurns: file.tdd.max_turns,
      stageTimeoutMs: seconds(file.tdd.stage_timeout),
      reviewTests: file.tdd.review_tests,
      reviewFailureLimit: file.tdd.review_failure_limit,
    },
    stages,
    refactorCheck: {
      splitThreshold: file.refactor_check.split_threshold,
      hardLimit: file.refactor_check.hard_limit,
      maxFunctionLength: file.refactor_check.max_function_length,
      maxClassMethods: file.refactor_check.max_class_methods,
    },
    refactor: {
      diffBudgetLoc: refactor.diff_budget_loc,
      maxBatches: refactor.max_batches,
      retryPerBatch: refactor.retry_per_batch,
      runFullVerifierEvery: refactor.run_full_verifier_every,
      fastVerifier: refactor.fast_verifier,
      fullVerifier: refactor.full_verifier,
      scopeGlobs: refactor.scope_globs,
      scopeExcludes: refactor.scope_excludes,
      allowPublicApiChanges: refactor.allow_public_api_changes,
      formatter: refactor.formatter,
      maxRuntimeMinutes: refactor.max_runtime_minutes ?? null,
      claude: {
        binary: refactor.claude.binary,
        allowedTools: refactor.claude.allowed_tools,
        tools: refactor.claude.tools,
        maxTurnsPatcher: refactor.claude.max_turns_patcher,
        maxTurnsPlanner: refactor.claude.max_turns_planner,
      },
    },
    budget: { contextWindow: file.budget.context_window, reservedTokens: file.budget.reserved_tokens },
    solve: {
      stages: file.solve.stages,
      maxRetriesPerStep: file.solve.max_retries_per_step,
      maxFullFiles: file.solve.max_full_files,
      context: file.solve.context,
    },
    origins,
    ...(overriddenStageModels !== undefined && overriddenStageModels.length > 0 ? { overriddenStageModels } : {}),
  };
}

function absolute(root: string, path: string): string {
  return isAbsolute(path) ? path : resolve(root, path);
}

function withoutUndefined(override: StageOverride): StageOverride {
  return Object.fromEntries(Object.entries(override).filter(([, value]) => value !== undefined));
}
