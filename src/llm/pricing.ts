/**
 * Model prices in USD per million tokens, for the cost column of the ledger and reports.
 * A model matches an entry by its exact id or a dated / `-latest` variant of it
 * (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`); anything else is unknown and costs
 * `null` — its tokens are still recorded. Prices are list prices without caching or batch discounts.
 */
import type { TokenUsage } from '../core/model.js';

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

/** The price table; keep ids lower-case. Longer ids win over their prefixes. */
const MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  // Anthropic
  'claude-opus-4-5': { input: 5, output: 25 },
  'claude-opus-4-1': { input: 15, output: 75 },
  'claude-opus-4-0': { input: 15, output: 75 },
  'claude-opus-4': { input: 15, output: 75 },
  'claude-sonnet-4-5': { input: 3, output: 15 },
  'claude-sonnet-4-0': { input: 3, output: 15 },
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-haiku-4-5': { input: 1, output: 5 },
  'claude-3-7-sonnet': { input: 3, output: 15 },
  'claude-3-5-sonnet': { input: 3, output: 15 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
  'claude-3-opus': { input: 15, output: 75 },
  'claude-3-haiku': { input: 0.25, output: 1.25 },
  // OpenAI
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-5-mini': { input: 0.25, output: 2 },
  'gpt-5-nano': { input: 0.05, output: 0.4 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  o3: { input: 2, output: 8 },
  'o3-mini': { input: 1.1, output: 4.4 },
  'o4-mini': { input: 1.1, output: 4.4 },
};

/** What may follow a table id: nothing, a date (`-20250929`, `-2024-08-06`) or `-latest`. */
const VARIANT_SUFFIX = /^(?:-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)?$/;

/** The price of a model, or null when the table does not know it. */
export function priceOf(model: string, table: Readonly<Record<string, ModelPrice>> = MODEL_PRICES): ModelPrice | null {
  const id = model.trim().toLowerCase();
  let best: { key: string; price: ModelPrice } | undefined;
  for (const [key, price] of Object.entries(table)) {
    if (!id.startsWith(key) || !VARIANT_SUFFIX.test(id.slice(key.length))) continue;
    if (best === undefined || key.length > best.key.length) best = { key, price };
  }
  return best?.price ?? null;
}

/** Cost of one call in USD, or null for models without a known price. */
export function costUsd(model: string, usage: TokenUsage): number | null {
  const price = priceOf(model);
  if (price === null) return null;
  return (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1_000_000;
}
