import { join } from 'node:path';
import type { AgentRuntime } from '../core/agent.js';
import type { Clock, IdGenerator } from '../core/effects.js';
import type { ResolvedConfig } from '../config/resolved.js';
import { createClaudeCodeRuntime } from '../agent/claude-code-runtime.js';
import type { ProcessRunner } from '../process/types.js';
import { createRuntimeFactory, type ModelPool } from './model-factory.js';
import { redactingRuntime } from './prompt-redaction.js';
import { createRedactor, secretsFromEnv } from '../core/redact.js';

export interface RoleRuntimeOptions {
  config: ResolvedConfig;
  env: Record<string, string | undefined>;
  runner: ProcessRunner;
  /** Runs the agent's Bash commands (sandboxed, see `toolSandbox`); default `runner`. */
  toolRunner?: ProcessRunner;
  /** The environment the agent's Bash commands start from (see `commandEnvironment`). */
  environment?: Readonly<Record<string, string>>;
  /** Runs the Claude Code CLI, whose tools are its own (sandboxed, see `toolSandbox`); default `runner`. */
  claudeRunner?: ProcessRunner;
  clock: Clock;
  ids: IdGenerator;
  /** Where versioned system-prompt files for the Claude Code CLI are written. */
  promptDir: string;
  /** Tools the Claude Code CLI may use (`--allowedTools`). */
  claudeAllowedTools: string;
  /** Tools it offers the model (`--tools`; default: the allowed ones). */
  claudeTools?: string;
  claudeBinary: string;
  timeoutMs: number;
  recordPath?: string;
  fetch?: typeof fetch;
  /** The run's model clients, shared by all its roles (one cassette position; see `createModelPool`). */
  models?: ModelPool;
}

/**
 * One agent runtime for the configured provider: the Claude Code CLI for `claude-code`, our own
 * tool loop over a model client otherwise. Used by workflows that are not staged like TDD.
 */
export function createProviderRuntime(options: RoleRuntimeOptions): AgentRuntime {
  const { config } = options;
  if (config.provider.name === 'claude-code') {
    const runtime = createClaudeCodeRuntime({
      binary: options.claudeBinary,
      runner: options.claudeRunner ?? options.runner,
      env: options.env,
      ...(config.origins['provider.model'] ? { model: config.provider.model } : {}),
      allowedTools: options.claudeAllowedTools,
      ...(options.claudeTools ? { tools: options.claudeTools } : {}),
      ...(config.provider.baseUrl ? { baseUrl: config.provider.baseUrl } : {}),
      promptDir: options.promptDir,
      timeoutMs: options.timeoutMs,
      uuid: () => options.ids.uuid(),
    });
    return redactingRuntime(runtime, createRedactor(secretsFromEnv(options.env), { shapes: 'none' }));
  }
  // The configured model (a [stages.refactor] override applies here too).
  return createRuntimeFactory({
    config,
    env: options.env,
    runner: options.runner,
    ...(options.toolRunner ? { toolRunner: options.toolRunner } : {}),
    ...(options.environment ? { environment: options.environment } : {}),
    clock: options.clock,
    ...(options.recordPath ? { recordPath: options.recordPath } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.models ? { models: options.models } : {}),
  })('REFACTOR');
}

export function promptDirectory(runDirectory: string): string {
  return join(runDirectory, 'prompts');
}
