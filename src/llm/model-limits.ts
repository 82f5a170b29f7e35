/**
 * How many output tokens Ratchet asks for per model call (`max_tokens`), next to the price table
 * (pricing.ts) and matched the same way (exact id, or a dated / `-latest` variant).
 *
 * The default, 16 000, leaves room for a whole file written through one tool call; a model known
 * to allow fewer gets its own limit instead, since a request above it is refused (HTTP 400). A
 * configured `max_output_tokens` (`[provider]`, or `[stages.<stage>]`) is sent as given.
 */
import { modelTableEntry } from './pricing.js';

/** Output tokens per call when neither the configuration nor a lower model limit says otherwise. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 16_000;

/** Known maximum output tokens per call; keep ids lower-case. Longer ids win over their prefixes. */
const OUTPUT_LIMITS: Readonly<Record<string, number>> = {
  // Anthropic
  'claude-opus-4-5': 64_000,
  'claude-opus-4-1': 32_000,
  'claude-opus-4-0': 32_000,
  'claude-opus-4': 32_000,
  'claude-sonnet-4-5': 64_000,
  'claude-sonnet-4-0': 64_000,
  'claude-sonnet-4': 64_000,
  'claude-haiku-4-5': 64_000,
  'claude-3-7-sonnet': 64_000,
  'claude-3-5-sonnet': 8_192,
  'claude-3-5-haiku': 8_192,
  'claude-3-opus': 4_096,
  'claude-3-sonnet': 4_096,
  'claude-3-haiku': 4_096,
  // OpenAI
  'gpt-5': 128_000,
  'gpt-5-mini': 128_000,
  'gpt-5-nano': 128_000,
  'gpt-4.1': 32_768,
  'gpt-4.1-mini': 32_768,
  'gpt-4.1-nano': 32_768,
  'gpt-4o': 16_384,
  // The first gpt-4o snapshot allowed 4096.
  'gpt-4o-2024-05-13': 4_096,
  'gpt-4o-mini': 16_384,
  'gpt-4-turbo': 4_096,
  'gpt-4-turbo-preview': 4_096,
  'gpt-4': 8_192,
  'gpt-3.5-turbo': 4_096,
  o3: 100_000,
  'o3-mini': 100_000,
  'o4-mini': 100_000,
};

/** The most output tokens a model allows per call, or null when Ratchet does not know it. */
export function outputLimitOf(model: string): number | null {
  return modelTableEntry(model, OUTPUT_LIMITS) ?? null;
}

/**
 * Output tokens per call for a model: the configured value when there is one, else the default
 * capped by the model's known limit.
 */
export function maxOutputTokensFor(model: string, configured?: number): number {
  if (configured !== undefined) return configured;
  return Math.min(DEFAULT_MAX_OUTPUT_TOKENS, outputLimitOf(model) ?? DEFAULT_MAX_OUTPUT_TOKENS);
}
