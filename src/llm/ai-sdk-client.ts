/**
 * `ModelClient` over a Vercel AI SDK language model (Anthropic, OpenAI chat, OpenAI-compatible).
 *
 * One `generate` call is exactly one model step: tools are declared without `execute`, so the SDK
 * returns the model's tool calls instead of running them — Ratchet's agent runtime runs the tool
 * loop. SDK retries are off (`maxRetries: 0`); `withRetry` (retry.ts) decides from the
 * `RatchetError` this adapter throws, classified where the HTTP status is seen (provider-errors.ts).
 */
import {
  generateText,
  jsonSchema,
  streamText,
  tool,
  type FinishReason as SdkFinishReason,
  type JSONSchema7,
  type LanguageModel,
  type LanguageModelUsage,
  type ModelMessage as SdkModelMessage,
  type ToolSet,
} from 'ai';
import { RatchetError, throwIfAborted } from '../core/errors.js';
import type {
  CallUsage,
  FinishReason,
  GenerateOptions,
  ModelClient,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  ToolCall,
  ToolDefinition,
} from '../core/model.js';
import { costUsd } from './pricing.js';
import { toProviderError, type ProviderErrorContext } from './provider-errors.js';
import { toolCallsInText } from './text-tool-calls.js';

/** An AI SDK model object (a plain model-id string would route through the AI Gateway). */
export type AiSdkLanguageModel = Exclude<LanguageModel, string>;

export interface AiSdkModelClientOptions {
  /** Name reported in responses and errors: `anthropic`, `openai`, `ollama`, ... */
  provider: string;
  /** The model id as configured; reported back unchanged. */
  modelId: string;
  /** The model, or what makes it on the first call (its provider's SDK is loaded only then). */
  languageModel: AiSdkLanguageModel | (() => Promise<AiSdkLanguageModel>);
  /** Stream the response (default true); false makes one non-streaming request. */
  stream?: boolean;
  /** Milliseconds clock for latency and HTTP-date `retry-after`; default `Date.now`. */
  now?: () => number;
  /** Environment variable named in the hint of authentication errors, e.g. `ANTHROPIC_API_KEY`. */
  keyVar?: string;
  /** True when `keyVar` is not set (a keyless OpenAI-compatible server): the hint says to set it. */
  keyMissing?: boolean;
  /** Strings (API keys) redacted from every error message. */
  secrets?: readonly string[];
  /**
   * Read `<tool_call>` blocks in a reply that has no tool call as its tool calls (open models on a
   * server without a tool-call parser; see `toolCallsInText`).
   */
  textToolCalls?: boolean;
}

interface StepOutcome {
  text: string;
  toolCalls: ToolCall[];
  finishReason: SdkFinishReason;
  usage: LanguageModelUsage | undefined;
}

/** Creates a `ModelClient` that makes one AI SDK call per `generate`. */
export function createAiSdkModelClient(options: AiSdkModelClientOptions): ModelClient {
  const now = options.now ?? Date.now;
  const stream = options.stream ?? true;
  const { languageModel } = options;
  let made: Promise<AiSdkLanguageModel> | undefined;
  const model = (): Promise<AiSdkLanguageModel> => {
    if (typeof languageModel !== 'function') return Promise.resolve(languageModel);
    const making = (made ??= languageModel());
    // A failed load is tried again by the next call.
    making.catch(() => {
      if (made === making) made = undefined;
    });
    return making;
  };
  return {
    specificationVersion: 'ratchet-model-v1',
    provider: options.provider,
    modelId: options.modelId,
    async generate(request: ModelRequest, generateOptions: GenerateOptions = {}): Promise<ModelResponse> {
      throwIfAborted(generateOptions.signal);
      const started = now();
      const context: ProviderErrorContext = {
        provider: options.provider,
        modelId: options.modelId,
        keyVar: options.keyVar,
        ...(options.keyMissing === true ? { keyMissing: true } : {}),
        secrets: options.secrets,
        now,
        signal: generateOptions.signal,
        startedAt: started,
        streaming: stream,
      };
      const call = {
        model: await model(),
        instructions: request.system === '' ? undefined : request.system,
        messages: toSdkMessages(request.messages),
        tools: toSdkTools(request.tools),
        maxOutputTokens: request.maxOutputTokens,
        temperature: request.temperature,
        maxRetries: 0,
        abortSignal: generateOptions.signal,
      };
      let outcome: StepOutcome;
      try {
        outcome = stream ? await runStreaming(call, generateOptions.onTextDelta) : await runOnce(call);
        throwIfAborted(generateOptions.signal);
      } catch (error) {
        throw toProviderError(error, context);
      }
      if (outcome.finishReason === 'interrupted') {
        // The SDK's verdict for a stream that ended without the provider's finish event
        // (connection cut mid-body): the partial text must not pass for a complete answer.
        throw new RatchetError('network', `The response stream from ${options.provider} ended before it was complete`, {
          retryable: true,
          details: {
            provider: options.provider,
            model: options.modelId,
            partialTextLength: outcome.text.length,
            latencyMs: Math.max(0, now() - started),
          },
        });
      }
      const usage = toUsage(outcome.usage);
      const fromText =
        options.textToolCalls === true &&
        outcome.toolCalls.length === 0 &&
        request.tools.length > 0 &&
        // A reply cut off at the token limit is not a finished call, whatever it holds.
        outcome.finishReason !== 'length'
          ? toolCallsInText(
              outcome.text,
              new Set(request.tools.map((definition) => definition.name)),
              `text_call_${started}`,
            )
          : undefined;
      return {
        text: fromText?.text ?? outcome.text,
        toolCalls: fromText?.toolCalls ?? outcome.toolCalls,
        finishReason: fromText === undefined ? toFinishReason(outcome.finishReason) : 'tool-calls',
        usage,
        costUsd: costUsd(options.modelId, usage),
        model: options.modelId,
        provider: options.provider,
        latencyMs: Math.max(0, now() - started),
      };
    },
  };
}

type CallSettings = Parameters<typeof generateText<ToolSet>>[0] & {
  messages: SdkModelMessage[];
  tools: ToolSet;
};

async function runOnce(call: CallSettings): Promise<StepOutcome> {
  const result = await generateText(call);
  return {
    text: result.text,
    toolCalls: result.toolCalls.map((part) => ({
      id: part.toolCallId,
      name: part.toolName,
      input: part.input as unknown,
    })),
    finishReason: result.finishReason,
    usage: result.usage,
  };
}

async function runStreaming(
  call: CallSettings,
  onTextDelta: ((delta: string) => void) | undefined,
): Promise<StepOutcome> {
  // `onError` replaces the SDK's default error logging; errors arrive as `error` parts below.
  const result = streamText({ ...call, onError: () => undefined });
  let text = '';
  const toolCalls: ToolCall[] = [];
  let finishReason: SdkFinishReason = 'other';
  let usage: LanguageModelUsage | undefined;
  for await (const part of result.fullStream) {
    switch (part.type) {
      case 'text-delta':
        text += part.text;
        if (part.text.length > 0) onTextDelta?.(part.text);
        break;
      case 'tool-call':
        toolCalls.push({ id: part.toolCallId, name: part.toolName, input: part.input });
        break;
      case 'finish-step':
        finishReason = part.finishReason;
        usage = part.usage;
        break;
      case 'finish':
        finishReason = part.finishReason;
        usage = part.totalUsage;
        break;
      case 'error':
        throw part.error;
      case 'abort':
        throw new RatchetError('interrupted', 'Interrupted', { details: { reason: part.reason } });
      default:
        break;
    }
  }
  return { text, toolCalls, finishReason, usage };
}

/** Our messages -> AI SDK messages (assistant text + tool-call parts, tool-result parts). */
function toSdkMessages(messages: readonly ModelMessage[]): SdkModelMessage[] {
  return messages.map((message): SdkModelMessage => {
    switch (message.role) {
      case 'user':
        return { role: 'user', content: message.content };
      case 'assistant':
        return {
          role: 'assistant',
          content: [
            ...(message.text.length > 0 ? [{ type: 'text' as const, text: message.text }] : []),
            ...message.toolCalls.map((call) => ({
              type: 'tool-call' as const,
              toolCallId: call.id,
              toolName: call.name,
              input: call.input,
            })),
          ],
        };
      case 'tool':
        return {
          role: 'tool',
          content: message.results.map((result) => ({
            type: 'tool-result' as const,
            toolCallId: result.toolCallId,
            toolName: result.toolName,
            output: result.isError
              ? { type: 'error-text' as const, value: result.output }
              : { type: 'text' as const, value: result.output },
          })),
        };
    }
  });
}

/** Tool declarations without `execute`: the SDK hands the calls back instead of running them. */
function toSdkTools(tools: readonly ToolDefinition[]): ToolSet {
  const set: ToolSet = {};
  for (const definition of tools) {
    set[definition.name] = tool({
      description: definition.description,
      inputSchema: jsonSchema(definition.inputSchema as JSONSchema7),
    });
  }
  return set;
}

/** Token counts the server did not report stay null (unknown), never 0. */
function toUsage(usage: LanguageModelUsage | undefined): CallUsage {
  return { inputTokens: usage?.inputTokens ?? null, outputTokens: usage?.outputTokens ?? null };
}

function toFinishReason(reason: SdkFinishReason): FinishReason {
  switch (reason) {
    case 'stop':
    case 'length':
    case 'content-filter':
    case 'tool-calls':
    case 'error':
    case 'other':
      return reason;
    default:
      return 'other';
  }
}
