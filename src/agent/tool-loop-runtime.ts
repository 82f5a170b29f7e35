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
import { maxOutputTokensFor } from '../llm/model-limits.js';
import { commandEnvironment } from '../process/env.js';
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
  /**
   * The environment Bash commands start from (see `commandEnvironment`); default: the
   * allowlisted variables of Ratchet's own environment.
   */
  environment?: Readonly<Record<string, string>>;
  /** Milliseconds clock for latencies and durations (default `Date.now`). */
  now?: () => number;
  /** Tools offered to the model (default `BUILTIN_TOOLS`: Read, Write, Edit, Bash, Glob, Grep). */
  tools?: readonly AgentTool[];
  /**
   * Output tokens per model call, as configured (`max_output_tokens`); default 16 000, or less
   * when the model is known to allow less (`maxOutputTokensFor`).
   */
  maxOutputTokens?: number;
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
  /** Output tokens asked for per call (`max_tokens`). */
  maxOutputTokens: number;
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
 * The finish reason of each reply is heeded:
 * - `length` (cut off at the output limit, `maxOutputTokens`): the reply is incomplete. Its last
 *   tool call (the one being written) is not run: its result says the input was cut off and asks
 *   for smaller steps; the calls before it run. A reply without tool calls gets a user message
 *   saying so (instead of passing for the agent's final answer); after 3 cut-off replies in a
 *   row -> `invalid-output`, naming the output limit and the setting that raises it.
 * - `content-filter` (the provider's filter, or a refusal): throws `RatchetError('provider')`
 *   "The model refused ..." — the stage stops, and the refusal is not repeated.
 *
 * `finalText` is the text of the last model reply. `usage` sums every call (calls whose usage the
 * server did not report count 0); `costUsd` is the sum of the calls' costs, or null when any call
 * had an unknown (null) cost.
 */
/** Cut-off replies in a row after which a stage stops (`invalid-output`). */
const MAX_TRUNCATED_REPLIES = 3;

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
      environment: options.environment ?? commandEnvironment(process.env),
      bashTimeoutMs: request.bashTimeoutMs,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    },
    maxOutputTokens: maxOutputTokensFor(options.model.modelId, options.maxOutputTokens),
  };
  const messages: ModelMessage[] = [{ role: 'user', content: request.prompt }];
  const totals: Totals = { turns: 0, usage: { inputTokens: 0, outputTokens: 0 }, costUsd: 0 };
  let finalText = '';
  let corrected = false;
  let truncatedInARow = 0;

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
    if (response.finishReason === 'content-filter') throw refusal(stage, response);
    messages.push({ role: 'assistant', text: response.text, toolCalls: response.toolCalls });
    const truncated = response.finishReason === 'length';
    truncatedInARow = truncated ? truncatedInARow + 1 : 0;
    const tooManyCutOff = (): StageOutcome<T> =>
      stop(
        'invalid-output',
        `The model's replies were cut off at the output limit (${stage.maxOutputTokens} tokens per reply) ${truncatedInARow} times in a row. ` +
          `Raise max_output_tokens ([provider], or [stages.<stage>] for ${request.stage}) if the model allows more, or ask for smaller steps.`,
      );

    if (response.toolCalls.length > 0) {
      const round = await runToolCalls(stage, response.toolCalls, truncated);
      messages.push({ role: 'tool', results: round.results });
      if (round.output !== undefined) return complete(round.output.value);
      if (truncatedInARow >= MAX_TRUNCATED_REPLIES) return tooManyCutOff();
      continue;
    }
    if (truncated) {
      // A reply cut off mid-way is not the agent's final answer (unless it already holds the result).
      const parsed = structured?.fromText(response.text);
      if (parsed?.ok === true) return complete(parsed.value);
      if (truncatedInARow >= MAX_TRUNCATED_REPLIES) return tooManyCutOff();
      messages.push({
        role: 'user',
        content:
          `${cutOffNotice(stage.maxOutputTokens)} Continue in smaller steps.` +
          (structured === undefined
            ? ''
            : ` When you are done, call the ${STRUCTURED_OUTPUT_TOOL} tool with your final result.`),
      });
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
    inputTokens: totals.usage.inputTokens + (response.usage.inputTokens ?? 0),
    outputTokens: totals.usage.outputTokens + (response.usage.outputTokens ?? 0),
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
    maxOutputTokens: stage.maxOutputTokens,
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
    // The attempt that answered, without the retries (and their waits) before it.
    request.emit({ ...base, response, error: null, latencyMs: response.latencyMs });
    return response;
  } catch (error) {
    const failure = request.signal?.aborted
      ? new RatchetError('interrupted', 'Interrupted', { cause: error })
      : toRatchetError(error);
    // The last attempt's duration when the client measured it (`details.latencyMs`).
    const attempt = failure.details?.latencyMs;
    request.emit({
      ...base,
      response: null,
      error: { code: failure.code, message: failure.message },
      latencyMs: typeof attempt === 'number' ? attempt : stage.now() - started,
    });
    throw failure;
  }
}

/** What the model is told about a reply cut off at the output limit. */
function cutOffNotice(maxOutputTokens: number): string {
  return (
    `Your reply was cut off at the output limit (${maxOutputTokens} tokens per reply) before it was complete. ` +
    'Keep each reply short, and write a long file in parts (Write the first part, then add the rest with Edit).'
  );
}

/** The stage stops when the provider filtered the reply or the model refused to answer. */
function refusal<T>(stage: Stage<T>, response: ModelResponse): RatchetError {
  const said = response.text.trim().split('\n', 1)[0]?.slice(0, 200) ?? '';
  return new RatchetError(
    'provider',
    `The model refused: ${response.provider} ended the reply of model "${response.model}" in stage ${stage.request.stage} ` +
      `with a refusal or content filter${said === '' ? '' : ` ("${said}")`}.`,
    {
      hint: 'A refusal is not retried. Check the feature request and the prompts for what may have caused it, then `ratchet resume`.',
      details: { provider: response.provider, model: response.model, finishReason: response.finishReason },
    },
  );
}

/**
 * Runs one turn's tool calls in order; each emits a `tool-call` event. In a reply cut off at the
 * output limit (`truncated`), the last call is the one that was being written: it is not run.
 */
async function runToolCalls<T>(stage: Stage<T>, calls: readonly ToolCall[], truncated: boolean): Promise<ToolRound<T>> {
  const round: ToolRound<T> = { results: [], output: undefined };
  for (const [index, call] of calls.entries()) {
    throwIfAborted(stage.request.signal);
    const started = stage.now();
    let execution: ToolExecution;
    if (truncated && index === calls.length - 1) {
      execution = {
        output:
          `Not run: your reply was cut off at the output limit (${stage.maxOutputTokens} tokens per reply) while this ${call.name} call was being written, so its input is incomplete. ` +
          'Work in smaller steps: keep each reply short, and write a long file in parts (Write the first part, then add the rest with Edit).',
        isError: true,
      };
    } else if (call.name === STRUCTURED_OUTPUT_TOOL && stage.structured !== undefined) {
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
