import type { AgentRuntime, StageRequest } from '../core/agent.js';
import { RatchetError } from '../core/errors.js';
import type { Clock } from '../core/effects.js';
import type { ModelClient, ModelRequest } from '../core/model.js';
import type { AgentStageName } from '../core/stages.js';
import type { ResolvedConfig } from '../config/resolved.js';
import { stageSettings } from '../config/resolved.js';
import type { ProcessRunner } from '../process/types.js';
import { createModelClient } from '../llm/providers.js';
import { createRecordingModelClient } from '../llm/cassette.js';
import { createRedactor, secretsFromEnv } from '../core/redact.js';
import { createReplayModelClient } from '../llm/replay.js';
import { withRetry } from '../llm/retry.js';
import { createToolLoopRuntime } from '../agent/tool-loop-runtime.js';
import { createClaudeCodeRuntime } from '../agent/claude-code-runtime.js';

export interface RuntimeFactoryOptions {
  config: ResolvedConfig;
  env: Record<string, string | undefined>;
  runner: ProcessRunner;
  /** Runs the agent's Bash commands (a sandboxed runner, see `toolSandbox`); default `runner`. */
  toolRunner?: ProcessRunner;
  clock: Clock;
  /** Append every model call to this cassette (`--record FILE`). */
  recordPath?: string;
  fetch?: typeof fetch;
  /**
   * For `--provider claude-code`: how to run the CLI (each stage is one headless call); `runner`
   * runs the CLI itself, tools and all (sandboxed, see `toolSandbox`), default `runner` above.
   */
  claude?: { binary: string; promptDir: string; uuid: () => string; timeoutMs: number; runner?: ProcessRunner };
}

/**
 * Builds one agent runtime per stage. Model clients are created once per model id (a replay
 * cassette is one shared, ordered stream) and wrapped, per stage run, in the retry policy, so
 * retries are reported as `model-retry` events of the stage that waits for them.
 */
export function createRuntimeFactory(options: RuntimeFactoryOptions): (stage: AgentStageName) => AgentRuntime {
  const { config } = options;
  const clients = new Map<string, ModelClient>();
  const clientFor = (model: string): ModelClient => {
    const key = config.provider.name === 'replay' ? 'replay' : model;
    const cached = clients.get(key);
    if (cached) return cached;
    let client: ModelClient;
    if (config.provider.name === 'replay') {
      if (!config.provider.cassette) {
        throw new RatchetError('config', 'The replay provider needs a cassette.', { hint: 'Pass --cassette FILE or set [provider] cassette in .ratchet/config.toml.' });
      }
      client = createReplayModelClient({ cassettePath: config.provider.cassette, modelId: model });
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
    if (options.recordPath) client = createRecordingModelClient(client, options.recordPath, { redact: createRedactor(secretsFromEnv(options.env)) });
    clients.set(key, client);
    return client;
  };

  return (stage) => {
    const { model, timeoutMs } = stageSettings(config, stage);
    if (config.provider.name === 'claude-code') {
      const claude = options.claude;
      if (!claude) throw new RatchetError('config', 'The claude-code provider needs the Claude Code CLI settings.');
      return createClaudeCodeRuntime({
        binary: claude.binary,
        runner: claude.runner ?? options.runner,
        env: options.env,
        ...(config.provider.baseUrl ? { baseUrl: config.provider.baseUrl } : {}),
        ...(config.origins['provider.model'] || config.stages[stage]?.model ? { model } : {}),
        allowedTools: 'Read,Write,Edit,Bash,Glob,Grep',
        promptDir: claude.promptDir,
        // The stage's own limit ([stages.<name>] timeout, else [tdd] stage_timeout).
        timeoutMs: Math.min(claude.timeoutMs, timeoutMs),
        uuid: claude.uuid,
      });
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
          onRetry: ({ attempt, delayMs, error }) => {
            if (attemptStart) {
              const latencyMs = options.clock.now().getTime() - attemptStart.at;
              request.emit({ type: 'model-call', stage: request.stage, provider: base.provider, model: base.modelId, request: attemptStart.request, response: null, error: { code: error.code, message: error.message }, latencyMs });
            }
            request.emit({ type: 'model-retry', provider: base.provider, model: base.modelId, attempt, delayMs, reason: `${error.code}: ${error.message}` });
          },
        });
        return createToolLoopRuntime({ model: client, runner: options.toolRunner ?? options.runner }).runStage(request);
      },
    };
  };
}

