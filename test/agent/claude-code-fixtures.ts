/**
 * What the claude-code runtime suites (against a fake `claude` and against the real one) build
 * their per-test harness from: the runtime with their fixed options, the stage request they send,
 * and readers of what the runtime emitted or threw.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { createClaudeCodeRuntime, type ClaudeCodeRuntimeOptions } from '../../src/agent/claude-code-runtime.js';
import type { AgentRuntime, StageRequest } from '../../src/core/agent.js';
import { RatchetError } from '../../src/core/errors.js';
import type { EventInput, EventOf } from '../../src/core/events.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { OPEN_POLICY } from './agent-fixtures.js';

/** What differs between the suites' runtimes; `uuids` collects the session ids handed out. */
export interface RuntimeBase {
  binary: string;
  env: ClaudeCodeRuntimeOptions['env'];
  promptDir: string;
  timeoutMs: number;
  uuids: string[];
}

/** Builds runtimes on `base` (allowing Read, Edit, Bash, Grep and Glob), with per-test overrides. */
export function runtimeFactory(base: RuntimeBase): (overrides?: Partial<ClaudeCodeRuntimeOptions>) => AgentRuntime {
  const { uuids, ...options } = base;
  return (overrides = {}) =>
    createClaudeCodeRuntime({
      ...options,
      runner: createProcessRunner(),
      allowedTools: 'Read,Edit,Bash,Grep,Glob',
      uuid: () => {
        const uuid = randomUUID();
        uuids.push(uuid);
        return uuid;
      },
      ...overrides,
    });
}

/** What differs between the suites' stage requests. */
export type StageRequestBase = Pick<
  StageRequest<unknown>,
  'stage' | 'worktree' | 'systemPrompt' | 'prompt' | 'maxTurns'
>;

/** Builds stage requests on `base` (open paths, a 10 s Bash timeout) that emit into `events`. */
export function stageRequestFactory(
  base: StageRequestBase,
  events: EventInput[],
): <T>(overrides?: Partial<StageRequest<T>>) => StageRequest<T> {
  return (overrides = {}) => ({
    ...base,
    paths: OPEN_POLICY,
    bashTimeoutMs: 10_000,
    emit: (event) => events.push(event),
    ...overrides,
  });
}

/** The `model-call` events among `events`. */
export function modelCallsOf(events: readonly EventInput[]): Array<EventOf<'model-call'>> {
  return events.filter((event): event is EventOf<'model-call'> => event.type === 'model-call');
}

/** The error `promise` rejects with, which must be a RatchetError. */
export async function rejection(promise: Promise<unknown>): Promise<RatchetError> {
  const error: unknown = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(RatchetError);
  return error as RatchetError;
}
