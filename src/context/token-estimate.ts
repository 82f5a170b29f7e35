/**
 * Token counts without a tokenizer. The solve workflow talks to Anthropic, OpenAI and local
 * models (Qwen on Ollama), whose tokenizers differ and are not all available offline, so prompt
 * sizes are estimated, on the safe side: one token per `BYTES_PER_TOKEN` bytes of UTF-8.
 *
 * Measured with the o200k and cl100k tokenizers (gpt-tokenizer) on this repository's sources
 * (230 TypeScript, TOML and Markdown files): 4.0 bytes per token on average, 2.85 for the densest
 * file over 2 KB; on CPython's `json` and `email` packages 4.4 on average, 3.5 at worst. Qwen2.5's
 * tokenizer is of the same kind (a byte-level BPE with a larger vocabulary). Dividing by 3 thus
 * overestimates a typical prompt by about a third: that margin is what makes "the prompt fits"
 * safe to decide before the call. Counts reported by providers are recorded next to it.
 */

/** Bytes of UTF-8 counted as one token (see above: real tokenizers average about 4). */
export const BYTES_PER_TOKEN = 3;

/**
 * Tokens a provider adds around each message (role markers, separators) and around the request
 * (the assistant's turn opening); counted so that framing is part of the budget (seed 004, R5).
 */
const MESSAGE_FRAMING_TOKENS = 8;

/** Estimated tokens of `text`: its UTF-8 bytes divided by `BYTES_PER_TOKEN`, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / BYTES_PER_TOKEN);
}

/** Estimated tokens of a request with a system prompt and one user message, framing included. */
export function estimatePromptTokens(system: string, user: string): number {
  return estimateTokens(system) + estimateTokens(user) + 3 * MESSAGE_FRAMING_TOKENS;
}
