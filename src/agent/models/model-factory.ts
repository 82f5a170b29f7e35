import type { AgentRuntime, StageRequest } from '../../core/agent.js';
import { RatchetError } from '../../core/errors.js';
import type { Clock } from '../../core/effects.js';
import type { ModelClient, ModelRequest } from '../../core/model.js';
import type { AgentStageName } from '../../core/stages.js';
import type { ResolvedConfig } from '../../config/resolved.js';
import { stageSettings } from '../../config/resolved.js';
import type { ProcessRunner } from '../../process/types.js';
import { createModelClient, endpointOf } from '../../llm/providers.js';
import { createRecordingModelClient } from '../../llm/cassette.js';
import { createRedactor, secretsFromEnv } from '../../core/redact.js';
import { createReplayModelClient, type ReplayModelClient } from '../../llm/replay.js';
import { retryCapNote, withRetry } from '../../llm/retry.js';
import { createToolLoopRuntime } from '../tool-loop-runtime.js';
import { createClaudeCodeRuntime } from '../claude-code-runtime.js';
import { redactingModelClient, redactingRuntime } from './prompt-redaction.js';

export interface RuntimeFactoryOptions {
  config: ResolvedConfig;
  env: Record<string, string | undefined>;
  runner: ProcessRunner;
  /** Runs the agent's Bash commands (a sandboxed runner, see `toolSandbox`); default `runner`. */
  toolRunner?: ProcessRunner;
  /** The environment the agent's Bash commands start from (see `commandEnvironment`). */
  environment?: Readonly<Record<string, string>>;
  clock: Clock;
  /** Append every model call to this cassette (`--record FILE`); ignored with `models`. */
  recordPath?: string;
  fetch?: typeof fetch;
  /** The run's model clients, shared with its other stages or roles (see `createModelPool`). */
  models?: ModelPool;
  /**
   * For `--provider claude-code`: how to run the CLI (each stage is one headless call); `runner`
   * runs the CLI itself, tools and all (sandboxed, see `toolSandbox`), default `runner` above.
   */
  claude?: {
    binary: string;
    promptDir: string;
    uuid: () => string;
    timeoutMs: number;
    runner?: ProcessRunner;
    /** The tools the CLI may use (`--allowedTools`); default every tool of a stage. */
    allowedTools?: string;
    /** The tools it offers the model (`--tools`; default: the allowed ones). */
    tools?: string;
  };
}

/** The model clients of one run, shared by all its stages and roles. */
export interface ModelPool {
  /** The client for `model`: one per model id; with `replay`, the one cassette client for every model. */
  clientFor(model: string): ModelClient;
  /** Cassette entries played so far (`replay`), counting those of earlier processes; null for other providers. */
  cassettePosition(): number | null;
}

export interface ModelPoolOptions {
  config: ResolvedConfig;
  env: Record<string, string | undefined>;
  /** Append every model call to this cassette (`--record FILE`), in call order. */
  recordPath?: string;
  fetch?: typeof fetch;
  /** `replay`: entries an earlier process of the run already played (`ratchet resume`). */
  cassetteStart?: number;
}

/**
 * Creates the model clients of a run lazily, once per model id. A replay cassette is one
 * shared, ordered stream, and a recorded one is appended to in call order: every stage and role
 * of a run must use the same pool (one cassette position, one recorder).
 */
export function createModelPool(options: ModelPoolOptions): ModelPool {
  const { config } = options;
  const clients = new Map<string, ModelClient>();
  let replay: ReplayModelClient | undefined;
  return {
    clientFor(model) {
      const key = config.provider.name === 'replay' ? 'replay' : model;
      const cached = clients.get(key);
      if (cached) return cached;
      let client: ModelClient;
      if (config.provider.name === 'replay') {
        // Named by the cassette (its header's model, else `replay`) unless --model names it.
        replay = createReplayModelClient({
          cassettePath: requireCassette(config),
          ...(config.origins['provider.model'] === 'flag' ? { modelId: config.provider.model } : {}),
          ...(options.cassetteStart ? { startAt: options.cassetteStart } : {}),
        });
        client = replay;
      } else if (config.provider.name === 'claude-code') {
        throw new RatchetError('internal', 'claude-code has no model client: it is an agent runtime.');
      } else {
        client = createModelClient({
          provider: config.provider.name,
          model,
          ...(config.provider.baseUrl ? { baseUrl: config.provider.baseUrl } : {}),
          env: options.env,
          stream: config.provider.stream,
          ...(options.fetch ? { fetch: options.fetch } : {}),
        });
      }
      // What the run withholds from commands never reaches the provider (nor the cassette).
      client = redactingModelClient(client, createRedactor(secretsFromEnv(options.env), { shapes: 'none' }));
      if (options.recordPath)
        client = createRecordingModelClient(client, options.recordPath, {
          redact: createRedactor(secretsFromEnv(options.env)),
        });
      clients.set(key, client);
      return client;
    },
    cassettePosition: () =>
      config.provider.name === 'replay' ? (replay?.position() ?? options.cassetteStart ?? 0) : null,
  };
}

function requireCassette(config: ResolvedConfig): string {
  if (!config.provider.cassette) {
    throw new RatchetError('config', 'The replay provider needs a cassette.', {
      hint: 'Pass --cassette FILE or set [provider] cassette in .ratchet/config.toml.',
    });
  }
  return config.provider.cassette;
}

/**
 * The model a run is recorded with (ledger, status, report): the configured one, except that a
 * replay run answers with its cassette's model (the header's `model`, else `replay`) unless
 * `--model` names another. Throws `config` when the replay cassette cannot be read.
 */
export function runModel(config: ResolvedConfig): string {
  if (config.provider.name !== 'replay' || config.origins['provider.model'] === 'flag') return config.provider.model;
  return createReplayModelClient({ cassettePath: requireCassette(config) }).modelId;
}

/**
 * The endpoint a run reaches its provider at, as the provider resolves it from `--base-url` or
 * the environment (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, `OLLAMA_HOST`, else the provider's
 * default), so `resume` can keep it. Undefined for replay, and for claude-code when neither
 * `--base-url` nor `ANTHROPIC_BASE_URL` names one (the CLI then uses its own settings).
 */
export function runEndpoint(config: ResolvedConfig, env: Record<string, string | undefined>): string | undefined {
  const { name, baseUrl } = config.provider;
  if (name === 'replay') return undefined;
  if (name === 'claude-code') return baseUrl ?? (env.ANTHROPIC_BASE_URL?.trim() || undefined);
  return endpointOf(name, baseUrl, env) ?? undefined;
}

/** The environment variable that names a provider's endpoint when `--base-url` does not. */
export function endpointVariable(provider: ResolvedConfig['provider']['name']): string | undefined {
  switch (provider) {
    case 'anthropic':
    case 'claude-code':
      return 'ANTHROPIC_BASE_URL';
    case 'openai':
    case 'openai-compatible':
      return 'OPENAI_BASE_URL';
    case 'ollama':
      return 'OLLAMA_HOST';
    case 'replay':
      return undefined;
  }
}

/**
 * Builds one agent runtime per stage. Model clients come from `models` (default: a pool of this
 * factory's own) and are wrapped, per stage run, in the retry policy, so retries are reported as
 * `model-retry` events of the stage that waits for them.
 */
export function createRuntimeFactory(options: RuntimeFactoryOptions): (stage: AgentStageName) => AgentRuntime {
  const { config } = options;
  const models = options.models ?? createModelPool(options);
  const clientFor = (model: string): ModelClient => models.clientFor(model);

  return (stage) => {
    const { model, timeoutMs, maxOutputTokens } = stageSettings(config, stage);
    if (config.provider.name === 'claude-code') {
      const claude = options.claude;
      if (!claude) throw new RatchetError('config', 'The claude-code provider needs the Claude Code CLI settings.');
      const runtime = createClaudeCodeRuntime({
        binary: claude.binary,
        runner: claude.runner ?? options.runner,
        env: options.env,
        ...(config.provider.baseUrl ? { baseUrl: config.provider.baseUrl } : {}),
        ...(config.origins['provider.model'] || config.stages[stage]?.model ? { model } : {}),
        allowedTools: claude.allowedTools ?? 'Read,Write,Edit,Bash,Glob,Grep',
        ...(claude.tools ? { tools: claude.tools } : {}),
        promptDir: claude.promptDir,
        // The stage's own limit ([stages.<name>] timeout, else [tdd] stage_timeout).
        timeoutMs: Math.min(claude.timeoutMs, timeoutMs),
        uuid: claude.uuid,
      });
      return redactingRuntime(runtime, createRedactor(secretsFromEnv(options.env), { shapes: 'none' }));
    }
    const base = clientFor(model);
    return {
      name: 'tool-loop',
      guardsWrites: true,
      runStage<T>(request: StageRequest<T>) {
        // A failed call that is retried never reaches the tool loop, which records the final
        // outcome only: record it here, as a model call with its error, before the retry event.
        let attemptStart: { request: ModelRequest; at: number } | undefined;
        const tracked: ModelClient = {
          specificationVersion: base.specificationVersion,
          provider: base.provider,
          modelId: base.modelId,
          generate: (modelRequest, generateOptions) => {
            attemptStart = { request: modelRequest, at: options.clock.now().getTime() };
            return base.generate(modelRequest, generateOptions);
          },
        };
        const client = withRetry(tracked, {
          maxRetries: config.provider.maxRetries,
          sleep: (ms, signal) => options.clock.sleep(ms, signal),
          onRetry: (info) => {
            const { attempt, delayMs, error } = info;
            if (attemptStart) {
              const latencyMs = options.clock.now().getTime() - attemptStart.at;
              request.emit({
                type: 'model-call',
                stage: request.stage,
                provider: base.provider,
                model: base.modelId,
                request: attemptStart.request,
                response: null,
                error: { code: error.code, message: error.message },
                latencyMs,
              });
            }
            request.emit({
              type: 'model-retry',
              provider: base.provider,
              model: base.modelId,
              attempt,
              delayMs,
              reason: `${error.code}: ${error.message}${retryCapNote(info)}`,
            });
          },
        });
        return createToolLoopRuntime({
          model: client,
          runner: options.toolRunner ?? options.runner,
          ...(options.environment ? { environment: options.environment } : {}),
          // `max_output_tokens` as configured; else the default for the model (llm/model-limits.ts).
          ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
        }).runStage(request);
      },
    };
  };
}
