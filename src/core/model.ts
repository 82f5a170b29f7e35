/**
 * The model contract (version `ratchet-model-v1`): one request in, one assistant turn out.
 * Provider adapters (`llm/`) implement it; the agent runtime and workflows depend only on it.
 */
export type JsonSchema = Record<string, unknown>;

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the tool input (an object schema). */
  inputSchema: JsonSchema;
}

export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

export interface ToolResult {
  toolCallId: string;
  toolName: string;
  /** What the model sees; errors are reported here too, with `isError`. */
  output: string;
  isError: boolean;
}

export type ModelMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; text: string; toolCalls: ToolCall[] }
  | { role: 'tool'; results: ToolResult[] };

export interface ModelRequest {
  system: string;
  messages: ModelMessage[];
  tools: ToolDefinition[];
  maxOutputTokens?: number;
  temperature?: number;
}

export type FinishReason = 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'error' | 'other';

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/**
 * The tokens of one call as the provider reported them; null when it reported none (an
 * OpenAI-compatible server that ignores `stream_options.include_usage`): unknown, not zero.
 */
export interface CallUsage {
  inputTokens: number | null;
  outputTokens: number | null;
}

export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: CallUsage;
  /** USD, from the price table; null for models without a known price or calls without usage. */
  costUsd: number | null;
  /** The model id exactly as requested (never swapped). */
  model: string;
  provider: string;
  /** Duration of the attempt that produced this response (retries and their waits excluded). */
  latencyMs: number;
}

export interface GenerateOptions {
  signal?: AbortSignal;
  /** Called with each streamed text fragment, for progress display. */
  onTextDelta?: (delta: string) => void;
}

export interface ModelClient {
  readonly specificationVersion: 'ratchet-model-v1';
  /** `anthropic`, `openai`, `openai-compatible`, `ollama`, `replay`, ... */
  readonly provider: string;
  readonly modelId: string;
  /** Throws RatchetError: `auth` (401/403), `provider` (400/404/bad payload), `rate-limit`,
   * `overloaded`, `network` (retryable ones carry `retryable: true` and `retryAfterMs`). */
  generate(request: ModelRequest, options?: GenerateOptions): Promise<ModelResponse>;
}
