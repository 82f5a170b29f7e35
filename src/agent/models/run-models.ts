/**
 * A run's models as the engine sees them: one value it stores with the run and hands back on
 * `resume`, and what a process of the run does with it. Which provider, model and endpoint a run
 * uses, which cassette it replays and how far, where it records, and how the Claude Code CLI is
 * run are this module's business: the engine never looks inside (DESIGN.md, Layers: engine).
 */
import { z } from 'zod';
import type { AgentRuntime } from '../../core/agent.js';
import type { ModelClient } from '../../core/model.js';
import type { Clock, IdGenerator } from '../../core/effects.js';
import { RatchetError } from '../../core/errors.js';
import type { EventInput, EventMap, EventType, RatchetEvent } from '../../core/events.js';
import { createRedactor, secretsFromEnv } from '../../core/redact.js';
import { AGENT_STAGES, type AgentStageName } from '../../core/stages.js';
import type { ConfigFlags } from '../../config/load.js';
import { stageSettings, type ResolvedConfig } from '../../config/resolved.js';
import { endpointChecks } from '../../llm/endpoint-checks.js';
import type { ProcessRunner } from '../../process/types.js';
import {
  CASSETTE_POSITION_EVENTS,
  cassettePositionAfterFailure,
  cassettePositionAt,
} from '../../llm/cassette-position.js';
import { checkClaudeAuth, checkClaudeCode } from '../claude-code/checks.js';
import {
  createModelPool,
  createRuntimeFactory,
  endpointVariable,
  runEndpoint,
  runModel,
  stageModelClient,
  type ModelPool,
} from './model-factory.js';

/** The flags that choose a run's models: `--provider`, `--model`, `--base-url`, `--cassette`. */
export type ModelFlags = Pick<ConfigFlags, 'provider' | 'model' | 'baseUrl' | 'cassette'>;

/**
 * What a run stores of its models beside the ledger's `provider` and `model` columns (its keys
 * sit in `runs.config` beside the workflow's settings): the endpoint it reaches the provider at
 * however it was named (`--base-url`, `ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, `OLLAMA_HOST`, the
 * provider's default; never with credentials, which are refused), so a shell without the
 * variable does not send the resumed run elsewhere; the replay cassette; whether `--model` named
 * the model (it then applies to every stage, `[stages.*]` models included); and the cassette
 * `--record` appends to.
 */
const StoredModelsSchema = z.object({
  baseUrl: z.string().optional(),
  cassette: z.string().optional(),
  modelFlag: z.boolean().optional(),
  record: z.string().optional(),
});

/** The stored value: JSON, opaque to everything but this module. */
type StoredModels = z.infer<typeof StoredModelsSchema>;

/** The run, as far as its models go: its ledger row's columns and stored configuration. */
interface RunOfModels {
  id: string;
  status: string;
  baseCommit: string;
  provider: string | null;
  model: string | null;
  /** `runs.config`, which holds the stored value's keys. */
  config: unknown;
}

/** Reads what a run stored of its models (see `StoredModelsSchema`), with its provider and model. */
function storedModelsOf(
  run: Pick<RunOfModels, 'provider' | 'model' | 'config'>,
): StoredModels & { provider?: string; model?: string } {
  const stored = StoredModelsSchema.safeParse(run.config ?? {}).data ?? {};
  return {
    ...stored,
    ...(run.provider !== null ? { provider: run.provider } : {}),
    ...(run.model !== null ? { model: run.model } : {}),
  };
}

/** The effects a run's models need. */
export interface ModelEnvironment {
  env: Record<string, string | undefined>;
  runner: ProcessRunner;
  clock: Clock;
  ids: IdGenerator;
  fetch?: typeof fetch;
}

/** Tool lists for a runtime that delegates to a CLI with tools of its own (Claude Code's names). */
export interface CliTools {
  /** The tools it may use without asking (`--allowedTools`). */
  allowed: string;
  /** The tools it offers the model (`--tools`; default: the allowed ones). */
  offered?: string;
}

/** The agents of one process of a run, over one set of model clients (one cassette stream, one recording). */
export interface RunAgents {
  /** The runtime of a stage: its model and limits (`[stages.<name>]`), every tool unless `tools` narrows them. */
  forStage(stage: AgentStageName, tools?: CliTools): AgentRuntime;
  /**
   * The plain model client of a stage (no tools, retries included; see `stageModelClient`), for
   * workflows that make their own calls; retried failures are reported through `emit`.
   */
  modelFor(stage: AgentStageName, emit: (event: EventInput) => void): ModelClient;
  /** What a `checkpoint-create` this process records says of the models (how far a replayed cassette got). */
  checkpointFields(): Pick<EventMap['checkpoint-create'], 'cassette'>;
}

/** Where the agents of a process run their commands (the run's sandbox) and keep their prompt files. */
interface AgentPlaces {
  /** Runs the agent's Bash commands. */
  toolRunner: ProcessRunner;
  /** Runs a CLI that brings its own tools (Claude Code), tools and all. */
  cliRunner: ProcessRunner;
  /** The environment the agent's commands start from (see `commandEnvironment`). */
  environment: Readonly<Record<string, string>>;
  /** Where versioned system-prompt files for a CLI runtime are written. */
  promptDir: string;
}

/** The models of a run, as one process of it uses them. */
export interface RunModels {
  /** The value to store with the run, in `runs.config` (`resumeModels` reads it back). */
  readonly stored: StoredModels;
  /** The provider and model the ledger's columns show (null: the provider's own default). */
  readonly provider: string;
  readonly model: string | null;
  /** What the run says of its models as this process starts (after its checkpoints are recorded). */
  readonly notices: readonly EventInput[];
  /** What the `run-start` of this process says of the models, the run standing at `commit`. */
  startFields(commit: string): Pick<EventMap['run-start'], 'cassette'>;
  /** What a `checkpoint-create` recorded now for `commit`, the checkpoint this process started from, says. */
  resumedCheckpointFields(): Pick<EventMap['checkpoint-create'], 'cassette'>;
  /** The agents of this process. */
  open(places: AgentPlaces): RunAgents;
}

/**
 * What can be known to fail about the models before a run is created or touched: the provider
 * and its key (building a client checks them), a replay cassette that cannot be read, the Claude
 * Code binary, and, with `login`, whether the Claude Code CLI is logged in (a trivial query, run
 * as the run's calls will be: `loginRunner` sandboxes it). An HTTP provider is asked for its
 * model list (see `endpointChecks`, which `ratchet doctor` shows): an endpoint that does not
 * answer, a key it rejects or a model it does not have refuses the run (`provider` / `auth`)
 * before its baseline, branch or worktree cost anything. `recordPath` may not be the cassette
 * being replayed. Returns what to tell the user (e.g. `Claude Code 2.1.3: authenticated`).
 */
export async function checkModels(
  config: ResolvedConfig,
  environment: ModelEnvironment,
  options: { recordPath?: string; login?: () => Promise<ProcessRunner> } = {},
): Promise<string[]> {
  const { env, runner } = environment;
  if (options.recordPath !== undefined && config.provider.cassette === options.recordPath) {
    throw new RatchetError('usage', `--record ${options.recordPath} is the cassette being replayed.`, {
      hint: 'Record into another file.',
    });
  }
  const binary = config.refactor.claude.binary;
  const notices: string[] = [];
  if (config.provider.name === 'claude-code' && options.login) {
    // The same endpoint the run's calls will use, and the same way there: sandboxed, through the
    // API proxy, but with no tools in an empty directory.
    const { version } = await checkClaudeCode({ binary, runner, env });
    await checkClaudeAuth({
      binary,
      runner: await options.login(),
      env,
      ...(config.provider.baseUrl ? { baseUrl: config.provider.baseUrl } : {}),
    });
    notices.push(`Claude Code ${version}: authenticated`);
  }
  // A missing key, a bad endpoint or an unreadable cassette fails here, before any run exists.
  stageRuntimes(config, environment, undefined, undefined)('PLAN');
  recordedModel(config);
  if (config.provider.name === 'claude-code' && !options.login) await checkClaudeCode({ binary, runner, env });
  await probeEndpoint(config, environment);
  return notices;
}

/** The distinct models a run's stages call: the configured one and the `[stages.*]` ones. */
export function configuredModels(config: ResolvedConfig): string[] {
  return [...new Set(AGENT_STAGES.map((stage) => stageSettings(config, stage).model))];
}

/** Long enough for a distant API, short enough not to hold up a run that cannot work anyway. */
const PROBE_TIMEOUT_MS = 5_000;

/** The HTTP provider's endpoint checks; the first that fails refuses the run. */
async function probeEndpoint(config: ResolvedConfig, environment: ModelEnvironment): Promise<void> {
  const provider = config.provider.name;
  if (provider === 'replay' || provider === 'claude-code') return;
  const checks = await endpointChecks({
    provider,
    models: configuredModels(config),
    baseUrl: config.provider.baseUrl,
    env: environment.env,
    fetch: environment.fetch ?? fetch,
    timeoutMs: PROBE_TIMEOUT_MS,
  });
  const failed = checks.find((check) => check.status === 'fail');
  if (failed === undefined) return;
  throw new RatchetError(failed.name === 'key' ? 'auth' : 'provider', `${provider}: ${failed.detail}.`, {
    hint: `${failed.hint === undefined ? '' : `${failed.hint} `}Nothing was started (\`ratchet doctor\` checks the provider).`,
    details: { check: failed.name },
  });
}

/** The models of a new run, as configured; `recordPath` (`--record`) records every call. */
export function startModels(
  config: ResolvedConfig,
  environment: ModelEnvironment,
  options: { recordPath?: string } = {},
): RunModels {
  const endpoint = runEndpoint(config, environment.env);
  const stored: StoredModels = {
    ...(endpoint ? { baseUrl: endpoint } : {}),
    ...(config.provider.name === 'replay' && config.provider.cassette ? { cassette: config.provider.cassette } : {}),
    // `--model` applies to every stage, [stages.*] models included (see `resumeFlags`).
    ...(config.origins['provider.model'] === 'flag' ? { modelFlag: true } : {}),
    // `--record FILE` (absolute): `resume` keeps appending to it (see `resumeModels`).
    ...(options.recordPath ? { record: options.recordPath } : {}),
  };
  return runModels(config, environment, stored, recordedModel(config), { ...options, cassetteStart: 0, notices: [] });
}

/**
 * The flags that choose the models of a resumed run: those it started with (provider, model,
 * endpoint, cassette), so a resumed run keeps the model it was started on (it is never swapped
 * silently; the endpoint too, when only the environment named it), with the flags given to
 * `resume` winning; another provider given brings its own model and endpoint. `configuredModel`
 * says which model the configuration chooses given some flags: a model the run did not get from
 * `--model` goes in as one only when the configuration no longer names it, so the `[stages.*]`
 * models it started with still apply. `notice` says which models the run resumes on.
 */
export async function resumeFlags(
  run: Pick<RunOfModels, 'id' | 'provider' | 'model' | 'config'>,
  given: ModelFlags,
  configuredModel: (flags: ModelFlags) => Promise<string>,
): Promise<{ flags: ModelFlags; notice: string | null }> {
  const stored = storedModelsOf(run);
  const recorded: ModelFlags = {
    ...(stored.provider ? { provider: stored.provider } : {}),
    ...(stored.model ? { model: stored.model } : {}),
    ...(stored.baseUrl ? { baseUrl: stored.baseUrl } : {}),
    ...(stored.cassette ? { cassette: stored.cassette } : {}),
  };
  if (given.provider !== undefined && given.provider !== recorded.provider) return { flags: given, notice: null };
  const chosen: ModelFlags = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  const model = chosen.model ?? recorded.model;
  const how =
    chosen.model === undefined ? 'as it started (--provider and --model choose another)' : 'with the model given';
  const notice =
    recorded.provider === undefined
      ? null
      : `Resuming ${run.id} on ${recorded.provider}${model ? ` / ${model}` : ''}, ${how}.`;
  const resumed: ModelFlags = { ...recorded, ...chosen };
  if (
    chosen.model === undefined &&
    recorded.model !== undefined &&
    recorded.provider !== 'replay' &&
    stored.modelFlag !== true
  ) {
    const { model: _recorded, ...withoutModel } = resumed;
    if ((await configuredModel(withoutModel)) === recorded.model) return { flags: withoutModel, notice };
  }
  return { flags: resumed, notice };
}

/**
 * The models of a resumed run on `config` (see `resumeFlags`), the run continuing from `commit`.
 * A replayed cassette continues where the run stood at `commit` (see `resumeCassettePosition`);
 * the calls are recorded into `recordPath` when given, else into the cassette the run was being
 * recorded into (appended to, so that it holds the whole run; not when this stretch is
 * replayed, which may replay that very cassette). `events` reads the run's ledger events.
 */
export async function resumeModels(
  run: RunOfModels,
  config: ResolvedConfig,
  environment: ModelEnvironment,
  options: {
    recordPath?: string;
    commit: string;
    events: (types: readonly EventType[]) => Promise<RatchetEvent[]>;
  },
): Promise<RunModels> {
  const before = storedModelsOf(run);
  const recordPath =
    options.recordPath ??
    (before.record === undefined || config.provider.name === 'replay' ? undefined : before.record);
  const cassetteStart = await resumeCassettePosition(run, options.commit, config, options.events);
  const notices: EventInput[] = [];
  if (recordPath !== undefined && recordPath !== options.recordPath) {
    notices.push({ type: 'log', message: `Recording continues in ${recordPath} (the run was started with --record).` });
  }
  const ignored = ignoredEndpointNotice(run, before, config, environment.env);
  if (ignored !== null) notices.push({ type: 'warning', message: ignored });
  const started = startModels(config, environment, recordPath === undefined ? {} : { recordPath });
  return runModels(config, environment, started.stored, started.model, {
    ...(recordPath === undefined ? {} : { recordPath }),
    cassetteStart: cassetteStart ?? 0,
    notices,
  });
}

function runModels(
  config: ResolvedConfig,
  environment: ModelEnvironment,
  stored: StoredModels,
  model: string | null,
  options: { recordPath?: string; cassetteStart: number; notices: EventInput[] },
): RunModels {
  const cassette = config.provider.name === 'replay' ? config.provider.cassette : undefined;
  return {
    stored,
    provider: config.provider.name,
    model,
    notices: options.notices,
    startFields: (commit) =>
      cassette === undefined ? {} : { cassette: { file: cassette, commit, position: options.cassetteStart } },
    resumedCheckpointFields: () =>
      cassette === undefined ? {} : { cassette: { file: cassette, position: options.cassetteStart } },
    open(places) {
      // One pool for every stage and role: a replay cassette is one ordered stream (continued from
      // `cassetteStart` on resume), a recorded one is written in call order.
      const models = createModelPool({
        config,
        env: environment.env,
        ...(options.recordPath ? { recordPath: options.recordPath } : {}),
        ...(environment.fetch ? { fetch: environment.fetch } : {}),
        ...(options.cassetteStart ? { cassetteStart: options.cassetteStart } : {}),
      });
      return {
        forStage: (stage, tools) => stageRuntimes(config, environment, models, places, tools)(stage),
        modelFor: (stage, emit) => stageModelClient(config, models, environment.clock, stage, emit),
        checkpointFields() {
          const position = models.cassettePosition();
          return position === null || cassette === undefined ? {} : { cassette: { file: cassette, position } };
        },
      };
    },
  };
}

/** The per-stage runtimes over `models` (a pool of their own when none is given, for the checks). */
function stageRuntimes(
  config: ResolvedConfig,
  environment: ModelEnvironment,
  models: ModelPool | undefined,
  places: AgentPlaces | undefined,
  tools: CliTools = { allowed: 'Read,Write,Edit,Bash,Glob,Grep' },
): ReturnType<typeof createRuntimeFactory> {
  return createRuntimeFactory({
    config,
    env: environment.env,
    runner: environment.runner,
    ...(places ? { toolRunner: places.toolRunner, environment: places.environment } : {}),
    clock: environment.clock,
    ...(models ? { models } : {}),
    ...(environment.fetch ? { fetch: environment.fetch } : {}),
    claude: {
      binary: config.refactor.claude.binary,
      promptDir: places?.promptDir ?? config.home,
      uuid: () => environment.ids.uuid(),
      timeoutMs: config.tdd.stageTimeoutMs,
      allowedTools: tools.allowed,
      ...(tools.offered ? { tools: tools.offered } : {}),
      ...(places ? { runner: places.cliRunner } : {}),
    },
  });
}

/**
 * The model the ledger records for a run (status, history, report, cost): the configured one;
 * null for the Claude Code CLI when none was configured (it picks its own default); a replay
 * run answers with its cassette's model (its header's `model`, else `replay`) unless `--model`
 * names another. Throws `config` when the replay cassette cannot be read.
 */
function recordedModel(config: ResolvedConfig): string | null {
  if (config.provider.name === 'claude-code' && !config.origins['provider.model']) return null;
  return runModel(config);
}

/**
 * Where a resumed replay run's cassette continues: after a run that failed (and was not rolled
 * back since), after the entries its last process played, which its failure used (see
 * `cassettePositionAfterFailure`); otherwise (killed, interrupted, rolled back) at the entries
 * played when `commit` (the checkpoint the run resumes from) was made. Undefined for other
 * providers.
 */
async function resumeCassettePosition(
  run: RunOfModels,
  commit: string,
  config: ResolvedConfig,
  readEvents: (types: readonly EventType[]) => Promise<RatchetEvent[]>,
): Promise<number | undefined> {
  const file = config.provider.name === 'replay' ? config.provider.cassette : undefined;
  if (file === undefined) return undefined;
  const events = await readEvents(CASSETTE_POSITION_EVENTS);
  // `ratchet rollback` sets a failed run's status to `interrupted`: it re-does from its checkpoint.
  const afterFailure = run.status === 'failed' ? cassettePositionAfterFailure(events, file) : null;
  if (afterFailure !== null && afterFailure.commit === commit) return afterFailure.position;
  const position = cassettePositionAt(events, commit, file, run.baseCommit);
  if (position === null) {
    throw new RatchetError(
      'config',
      `Cannot tell where cassette ${file} stood at checkpoint ${commit.slice(0, 8)} of run ${run.id}: that checkpoint was not made by replaying it.`,
      {
        hint: `Roll the run back to a checkpoint made while replaying it (\`ratchet history ${run.id}\`, then \`ratchet rollback <commit>\`), or resume with another provider or a cassette that starts at this checkpoint (--cassette).`,
      },
    );
  }
  return position;
}

/**
 * The one-line notice of a resume that keeps the run's recorded endpoint although the
 * environment names another (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, `OLLAMA_HOST`): the
 * variable does not silently send the run elsewhere; `--base-url` does, when given.
 */
function ignoredEndpointNotice(
  run: Pick<RunOfModels, 'id' | 'provider'>,
  stored: StoredModels,
  config: ResolvedConfig,
  env: Record<string, string | undefined>,
): string | null {
  const recorded = stored.baseUrl;
  const variable = endpointVariable(config.provider.name);
  const value = variable === undefined ? undefined : env[variable]?.trim();
  if (
    recorded === undefined ||
    variable === undefined ||
    !value ||
    run.provider !== config.provider.name ||
    config.provider.baseUrl !== recorded
  )
    return null;
  const fromEnvironment = runEndpoint({ ...config, provider: { ...config.provider, baseUrl: undefined } }, env);
  if (fromEnvironment === recorded) return null;
  const redact = createRedactor(secretsFromEnv(env));
  return redact(
    `${variable} (${value}) is not used: run ${run.id} continues at ${recorded}, the endpoint it started with (--base-url chooses another).`,
  );
}
