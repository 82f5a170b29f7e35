import { RatchetError } from '../../src/core/errors.js';
import type {
  FinishReason,
  GenerateOptions,
  ModelClient,
  ModelRequest,
  ModelResponse,
  TokenUsage,
} from '../../src/core/model.js';

/** A tool call in a scripted reply; `id` defaults to `call_<callIndex>_<position>`. */
export interface FakeToolCall {
  id?: string;
  name: string;
  input: unknown;
}

/**
 * One scripted model reply. Every field is optional: text defaults to '', no tool calls,
 * finish reason `tool-calls` or `stop` to match, usage 10 in / 5 out, cost 0.001.
 */
export interface FakeReply {
  text?: string;
  toolCalls?: FakeToolCall[];
  finishReason?: FinishReason;
  usage?: TokenUsage;
  costUsd?: number | null;
  latencyMs?: number;
}

/** What a script step yields: a reply, or an error for `generate` to throw. */
export type FakeStep = FakeReply | Error;

/**
 * The script of a `FakeModelClient`: a list consumed one reply per call (a call past the end
 * throws), or a function of the request and the 0-based call index (it may be async and may
 * look at `options.signal`).
 */
export type FakeScript =
  | readonly FakeStep[]
  | ((request: ModelRequest, callIndex: number, options: GenerateOptions) => FakeStep | Promise<FakeStep>);

export interface FakeModelClientOptions {
  provider?: string;
  modelId?: string;
  /** Stream each reply's text to `onTextDelta` in pieces of this many characters (default: whole). */
  deltaSize?: number;
}

/**
 * A scripted `ModelClient` for tests. It records a deep copy of every request (`requests`) so
 * tests can assert on exactly what the model was sent, honours an already-aborted signal by
 * throwing `RatchetError('interrupted')`, streams reply text through `onTextDelta`, and throws
 * scripted errors as they are (script a `RatchetError` to test provider failures).
 */
export class FakeModelClient implements ModelClient {
  readonly specificationVersion = 'ratchet-model-v1';
  readonly provider: string;
  readonly modelId: string;
  /** Deep copies of every request, in call order. */
  readonly requests: ModelRequest[] = [];
  private readonly script: FakeScript;
  private readonly deltaSize: number | undefined;

  constructor(script: FakeScript, options: FakeModelClientOptions = {}) {
    this.script = script;
    this.provider = options.provider ?? 'fake';
    this.modelId = options.modelId ?? 'fake-model';
    this.deltaSize = options.deltaSize;
  }

  /** Number of `generate` calls so far. */
  get callCount(): number {
    return this.requests.length;
  }

  /** The last recorded request; throws when there was none. */
  lastRequest(): ModelRequest {
    const last = this.requests.at(-1);
    if (last === undefined) throw new Error('FakeModelClient: no request was made');
    return last;
  }

  async generate(request: ModelRequest, options: GenerateOptions = {}): Promise<ModelResponse> {
    const callIndex = this.requests.length;
    this.requests.push(structuredClone(request));
    if (options.signal?.aborted) throw new RatchetError('interrupted', 'Interrupted', { cause: options.signal.reason });
    const step = await this.next(request, callIndex, options);
    if (step instanceof Error) throw step;
    const response = buildResponse(step, callIndex, this);
    this.stream(response.text, options);
    return response;
  }

  private next(request: ModelRequest, callIndex: number, options: GenerateOptions): FakeStep | Promise<FakeStep> {
    if (typeof this.script === 'function') return this.script(request, callIndex, options);
    const step = this.script[callIndex];
    if (step === undefined) {
      throw new RatchetError(
        'internal',
        `FakeModelClient: no scripted reply for call ${callIndex + 1} (the script has ${this.script.length})`,
      );
    }
    return step;
  }

  private stream(text: string, options: GenerateOptions): void {
    if (options.onTextDelta === undefined || text === '') return;
    const size = this.deltaSize ?? text.length;
    for (let index = 0; index < text.length; index += size) options.onTextDelta(text.slice(index, index + size));
  }
}

function buildResponse(reply: FakeReply, callIndex: number, client: ModelClient): ModelResponse {
  const toolCalls = (reply.toolCalls ?? []).map((call, position) => ({
    id: call.id ?? `call_${callIndex}_${position}`,
    name: call.name,
    input: call.input,
  }));
  return {
    text: reply.text ?? '',
    toolCalls,
    finishReason: reply.finishReason ?? (toolCalls.length > 0 ? 'tool-calls' : 'stop'),
    usage: reply.usage ?? { inputTokens: 10, outputTokens: 5 },
    costUsd: reply.costUsd === undefined ? 0.001 : reply.costUsd,
    model: client.modelId,
    provider: client.provider,
    latencyMs: reply.latencyMs ?? 1,
  };
}

/** A reply with only text (the model ends its turn). */
export function text(content: string, extra: Omit<FakeReply, 'text'> = {}): FakeReply {
  return { ...extra, text: content };
}

/** A reply with one tool call (and optional text before it). */
export function toolCall(
  name: string,
  input: unknown,
  extra: Omit<FakeReply, 'toolCalls'> & { id?: string } = {},
): FakeReply {
  const { id, ...rest } = extra;
  return { ...rest, toolCalls: [{ name, input, ...(id === undefined ? {} : { id }) }] };
}

/** A reply with several tool calls, run in the given order. */
export function toolCalls(calls: FakeToolCall[], extra: Omit<FakeReply, 'toolCalls'> = {}): FakeReply {
  return { ...extra, toolCalls: calls };
}
