/**
 * Model prices in USD per million tokens, for the cost column of the ledger and reports.
 * A model matches an entry by its exact id or a dated / `-latest` variant of it
 * (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`); anything else is unknown and costs
 * `null` — its tokens are still recorded. Prices are list prices without caching or batch discounts.
 * A dated snapshot priced differently from its family is listed under its own id, which wins
 * (`gpt-4o-2024-05-13` is $5 / $15, not the $2.50 / $10 of `gpt-4o`).
 */
import type { CallUsage } from '../core/model.js';

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
  // The first gpt-4o snapshot kept its launch price.
  'gpt-4o-2024-05-13': { input: 5, output: 15 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  o3: { input: 2, output: 8 },
  'o3-mini': { input: 1.1, output: 4.4 },
  'o4-mini': { input: 1.1, output: 4.4 },
};

/** What may follow a table id: nothing, a date (`-20250929`, `-2024-08-06`) or `-latest`. */
const VARIANT_SUFFIX = /^(?:-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)?$/;

/**
 * The entry of a per-model table (prices, output limits) for a model id: the longest table id
 * that is the model id or a dated / `-latest` variant's base; undefined when none is. Table ids
 * are lower-case; so a dated snapshot listed under its own id wins over its family.
 */
export function modelTableEntry<T>(model: string, table: Readonly<Record<string, T>>): T | undefined {
  const id = model.trim().toLowerCase();
  let best: { key: string; value: T } | undefined;
  for (const [key, value] of Object.entries(table)) {
    if (!id.startsWith(key) || !VARIANT_SUFFIX.test(id.slice(key.length))) continue;
    if (best === undefined || key.length > best.key.length) best = { key, value };
  }
  return best?.value;
}

/** The price of a model, or null when the table does not know it. */
export function priceOf(model: string, table: Readonly<Record<string, ModelPrice>> = MODEL_PRICES): ModelPrice | null {
  return modelTableEntry(model, table) ?? null;
}

/**
 * Cost of one call in USD, or null when it is unknown: a model without a known price, or a call
 * whose token counts the server did not report (null, not zero).
 */
export function costUsd(model: string, usage: CallUsage): number | null {
  const price = priceOf(model);
  if (price === null || usage.inputTokens === null || usage.outputTokens === null) return null;
  return (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1_000_000;
}
