/**
 * Context windows (input plus output tokens per request) of known models, next to the price and
 * output-limit tables and matched the same way (exact id, or a dated / `-latest` variant). The
 * solve workflow budgets each pass's prompt from them (seed 004: the window minus
 * `[budget] reserved_tokens`); a configured `[budget] context_window` wins over the table.
 */
import { modelTableEntry } from './pricing.js';

/** Keep ids lower-case. Longer ids win over their prefixes. */
const CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  // Anthropic
  'claude-opus-4-5': 200_000,
  'claude-opus-4-1': 200_000,
  'claude-opus-4-0': 200_000,
  'claude-opus-4': 200_000,
  'claude-sonnet-4-5': 200_000,
  'claude-sonnet-4-0': 200_000,
  'claude-sonnet-4': 200_000,
  'claude-haiku-4-5': 200_000,
  'claude-3-7-sonnet': 200_000,
  'claude-3-5-sonnet': 200_000,
  'claude-3-5-haiku': 200_000,
  'claude-3-opus': 200_000,
  'claude-3-haiku': 200_000,
  // OpenAI
  'gpt-5': 400_000,
  'gpt-5-mini': 400_000,
  'gpt-5-nano': 400_000,
  'gpt-4.1': 1_047_576,
  'gpt-4.1-mini': 1_047_576,
  'gpt-4.1-nano': 1_047_576,
  'gpt-4o': 128_000,
  'gpt-4o-mini': 128_000,
  'gpt-4-turbo': 128_000,
  'gpt-4': 8_192,
  'gpt-3.5-turbo': 16_385,
  o3: 200_000,
  'o3-mini': 200_000,
  'o4-mini': 200_000,
  // Open models as trained (Ollama and vLLM may serve less: see `contextWindowFor`).
  'qwen2.5-coder': 32_768,
  qwen3: 32_768,
  'llama3.1': 131_072,
  'llama3.2': 131_072,
};

/**
 * What Ollama serves when nothing says otherwise: its `num_ctx` default, whatever the model was
 * trained for. Its OpenAI-compatible endpoint takes no per-request `num_ctx`, and a longer prompt
 * is cut at the front without an error, so a larger window must be configured on both sides
 * (`OLLAMA_CONTEXT_LENGTH` there, `[budget] context_window` here).
 */
const OLLAMA_DEFAULT_CONTEXT = 4_096;

/** For a model Ratchet does not know: small enough to be safe on most servers. */
const UNKNOWN_MODEL_CONTEXT = 8_192;

/** A model's context window in tokens, or null when the table does not know it. Ollama tags (`qwen3:4b`) match their family. */
function contextWindowOf(model: string): number | null {
  const id = model.trim().toLowerCase();
  return modelTableEntry(id, CONTEXT_WINDOWS) ?? modelTableEntry(id.replace(/:.*$/, ''), CONTEXT_WINDOWS) ?? null;
}

/**
 * The window a pass is budgeted against: the configured one, else Ollama's default for the
 * `ollama` provider, else the table's, else `UNKNOWN_MODEL_CONTEXT`.
 */
export function contextWindowFor(provider: string, model: string, configured: number | undefined): number {
  if (configured !== undefined) return configured;
  if (provider === 'ollama') return Math.min(OLLAMA_DEFAULT_CONTEXT, contextWindowOf(model) ?? OLLAMA_DEFAULT_CONTEXT);
  return contextWindowOf(model) ?? UNKNOWN_MODEL_CONTEXT;
}
