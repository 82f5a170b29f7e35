import type { AgentRuntime, StageOutcome, StageRequest } from '../core/agent.js';
import { RatchetError, throwIfAborted, toRatchetError } from '../core/errors.js';
import type {
  ModelClient,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  TokenUsage,
  ToolCall,
  ToolResult,
} from '../core/model.js';
import type { ProcessRunner } from '../process/types.js';
import { createFileGuard } from './file-guard.js';
import { STRUCTURED_OUTPUT_TOOL, createStructuredOutput, type StructuredOutput } from './structured-output.js';
import {
  executeTool,
  toToolDefinition,
  type AgentTool,
  type ToolContext,
  type ToolExecution,
} from './tools/agent-tool.js';
import { BUILTIN_TOOLS } from './tools/builtin-tools.js';

/** Dependencies of the built-in runtime, all injected. */
export interface ToolLoopRuntimeOptions {
  /** The model to drive; wrap it with retries before passing it in. */
  model: ModelClient;
  /** Runs Bash commands and ripgrep. */
  runner: ProcessRunner;
  /** Milliseconds clock for latencies and durations (default `Date.now`). */
  now?: () => number;
  /** Tools offered to the model (default `BUILTIN_TOOLS`: Read, Write, Edit, Bash, Glob, Grep). */
  tools?: readonly AgentTool[];
}

/** Running totals of one stage. */
interface Totals {
  turns: number;
  usage: TokenUsage;
  /** Null as soon as one call had an unknown price: a partial sum would understate the cost. */
  costUsd: number | null;
}

/** One stage's fixed inputs, shared by the helpers below. */
interface Stage<T> {
  request: StageRequest<T>;
  model: ModelClient;
  now: () => number;
  system: string;
  tools: ReadonlyMap<string, AgentTool>;
  definitions: ModelRequest['tools'];
  structured: StructuredOutput<T> | undefined;
  context: ToolContext;
}

/** What one round of tool calls produced: the results and, maybe, the accepted output. */
interface ToolRound<T> {
  results: ToolResult[];
  output: { value: T } | undefined;
}

/**
 * The built-in agent runtime: our own tool loop over a `ModelClient`.
 *
 * The conversation starts with the stage prompt as the only user message. Each turn sends the
 * system prompt, the whole conversation and the tool declarations to the model (streamed text
 * goes out as `model-delta` events, the finished call as a `model-call` event). When the reply
 * holds tool calls, they run one after another, in order, each emitting a `tool-call` event;
 * the assistant message and one tool message with every result are appended, and the next turn
 * begins. Invalid input, refused paths and failed commands come back to the model as results
 * with `isError`, so it can correct itself.
 *
 * With an `outputSchema`, the model is also offered a `StructuredOutput` tool whose input
 * schema is the output schema (non-object schemas are wrapped as `{ value }`), and the system
 * prompt says to call it at the end. A call that validates ends the stage after the rest of
 * that turn's calls have run; one that does not gets an error result listing the zod issues.
 *
 * The loop ends, checked in this order, when:
 * 1. `maxTurns` model calls have been made without finishing -> status `turn-limit`;
 * 2. the signal is aborted (checked before every model call and every tool) -> throws
 *    `RatchetError('interrupted')`; a model error also propagates as a `RatchetError` (retries
 *    belong to a wrapper around the `ModelClient`, not to this loop);
 * 3. a `StructuredOutput` call validates -> `completed` with `output`;
 * 4. a reply has no tool calls: without an output schema -> `completed`; with one, JSON is
 *    looked for in the reply text (a ```json fence, else the last balanced `{...}`) -> if it
 *    validates, `completed`; otherwise, the first time, one corrective user message asks for a
 *    `StructuredOutput` call and the loop goes on; the second time -> `invalid-output`.
 *
 * `finalText` is the text of the last model reply. `usage` sums every call; `costUsd` is the
 * sum of the calls' costs, or null when any call had an unknown (null) cost.
 */
/** Output tokens per model call: room for a whole file written through a tool call. */
const MAX_OUTPUT_TOKENS = 16_000;

export function createToolLoopRuntime(options: ToolLoopRuntimeOptions): AgentRuntime {
  return {
    name: 'builtin',
    // Read, Write, Edit, Glob and Grep resolve every path through the guard.
    guardsWrites: options.tools === undefined,
    runStage: <T>(request: StageRequest<T>) => runToolLoop(options, request),
  };
}

async function runToolLoop<T>(options: ToolLoopRuntimeOptions, request: StageRequest<T>): Promise<StageOutcome<T>> {
  const tools = options.tools ?? BUILTIN_TOOLS;
  const structured = request.outputSchema === undefined ? undefined : createStructuredOutput(request.outputSchema);
  const stage: Stage<T> = {
    request,
    model: options.model,
    now: options.now ?? Date.now,
    system: request.systemPrompt + (structured?.systemSuffix ?? ''),
    tools: new Map(tools.map((tool) => [tool.name, tool])),
    definitions: [...tools.map(toToolDefinition), ...(structured === undefined ? [] : [structured.definition])],
    structured,
    context: {
      guard: createFileGuard(request.worktree, request.paths),
      runner: options.runner,
      bashTimeoutMs: request.bashTimeoutMs,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    },
  };
  const messages: ModelMessage[] = [{ role: 'user', content: request.prompt }];
  const totals: Totals = { turns: 0, usage: { inputTokens: 0, outputTokens: 0 }, costUsd: 0 };
  let finalText = '';
  let corrected = false;

  const stop = (status: 'turn-limit' | 'invalid-output', message: string): StageOutcome<T> => ({
    status,
    finalText,
    output: undefined,
    turns: totals.turns,
    usage: totals.usage,
    costUsd: totals.costUsd,
    message,
  });
  const complete = (output: T | undefined): StageOutcome<T> => ({
    status: 'completed',
    finalText,
    output,
    turns: totals.turns,
    usage: totals.usage,
    costUsd: totals.costUsd,
  });

  for (;;) {
    if (totals.turns >= request.maxTurns) {
      return stop(
        'turn-limit',
        `Stopped after ${totals.turns} model turn${totals.turns === 1 ? '' : 's'}, the limit for stage ${request.stage}, before the agent finished.`,
      );
    }
    throwIfAborted(request.signal);
    const response = await callModel(stage, messages);
    addTurn(totals, response);
    finalText = response.text;
    messages.push({ role: 'assistant', text: response.text, toolCalls: response.toolCalls });

    if (response.toolCalls.length > 0) {
      const round = await runToolCalls(stage, response.toolCalls);
      messages.push({ role: 'tool', results: round.results });
      if (round.output !== undefined) return complete(round.output.value);
      continue;
    }
    if (structured === undefined) return complete(undefined);
    const parsed = structured.fromText(response.text);
    if (parsed.ok) return complete(parsed.value);
    if (corrected) {
      return stop('invalid-output', `The agent finished without a valid structured result. ${parsed.problem}`);
    }
    corrected = true;
    messages.push({
      role: 'user',
      content:
        `${parsed.problem}\nCall the ${STRUCTURED_OUTPUT_TOOL} tool now with your final result; ` +
        'its input must match the tool schema.',
    });
  }
}

function addTurn(totals: Totals, response: ModelResponse): void {
  totals.turns += 1;
  totals.usage = {
    inputTokens: totals.usage.inputTokens + response.usage.inputTokens,
    outputTokens: totals.usage.outputTokens + response.usage.outputTokens,
  };
  totals.costUsd = totals.costUsd === null || response.costUsd === null ? null : totals.costUsd + response.costUsd;
}

/** One model call, reported as a `model-call` event whether it succeeds or throws. */
async function callModel<T>(stage: Stage<T>, messages: readonly ModelMessage[]): Promise<ModelResponse> {
  const { request, model } = stage;
  // A snapshot: the conversation keeps growing after the event has been emitted.
  // Always bounded: SDKs otherwise pick the model's maximum, which gateways may refuse.
  const modelRequest: ModelRequest = {
    system: stage.system,
    messages: [...messages],
    tools: stage.definitions,
    maxOutputTokens: MAX_OUTPUT_TOKENS,
  };
  const base = {
    type: 'model-call',
    stage: request.stage,
    provider: model.provider,
    model: model.modelId,
    request: modelRequest,
  } as const;
  const started = stage.now();
  try {
    const response = await model.generate(modelRequest, {
      ...(request.signal === undefined ? {} : { signal: request.signal }),
      onTextDelta: (text) => request.emit({ type: 'model-delta', text }),
    });
    request.emit({ ...base, response, error: null, latencyMs: stage.now() - started });
    return response;
  } catch (error) {
    const failure = request.signal?.aborted
      ? new RatchetError('interrupted', 'Interrupted', { cause: error })
      : toRatchetError(error);
    request.emit({
      ...base,
      response: null,
      error: { code: failure.code, message: failure.message },
      latencyMs: stage.now() - started,
    });
    throw failure;
  }
}

/** Runs one turn's tool calls in order; each emits a `tool-call` event. */
async function runToolCalls<T>(stage: Stage<T>, calls: readonly ToolCall[]): Promise<ToolRound<T>> {
  const round: ToolRound<T> = { results: [], output: undefined };
  for (const call of calls) {
    throwIfAborted(stage.request.signal);
    const started = stage.now();
    let execution: ToolExecution;
    if (call.name === STRUCTURED_OUTPUT_TOOL && stage.structured !== undefined) {
      const parsed = stage.structured.fromToolInput(call.input);
      if (parsed.ok) round.output ??= { value: parsed.value };
      execution = parsed.ok
        ? { output: 'Structured output accepted.', isError: false }
        : {
            output: `Invalid ${STRUCTURED_OUTPUT_TOOL} input:\n${parsed.problem}\nFix it and call ${STRUCTURED_OUTPUT_TOOL} again.`,
            isError: true,
          };
    } else {
      const tool = stage.tools.get(call.name);
      execution =
        tool === undefined
          ? {
              output: `Unknown tool '${call.name}'. Available tools: ${stage.definitions.map((d) => d.name).join(', ')}.`,
              isError: true,
            }
          : await executeTool(tool, call.input, stage.context);
    }
    stage.request.emit({
      type: 'tool-call',
      stage: stage.request.stage,
      tool: call.name,
      input: call.input,
      output: execution.output,
      isError: execution.isError,
      durationMs: stage.now() - started,
    });
    round.results.push({
      toolCallId: call.id,
      toolName: call.name,
      output: execution.output,
      isError: execution.isError,
    });
  }
  return round;
}
