import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_OUTPUT_TOKENS, maxOutputTokensFor, outputLimitOf } from '../../src/llm/model-limits.js';
import { costUsd, priceOf } from '../../src/llm/pricing.js';

describe('priceOf', () => {
  it.each([
    ['claude-opus-4-5', 5, 25],
    ['claude-opus-4-5-20251101', 5, 25],
    ['claude-sonnet-4-5-20250929', 3, 15],
    ['claude-haiku-4-5', 1, 5],
    ['claude-opus-4-1-20250805', 15, 75],
    ['claude-sonnet-4-20250514', 3, 15],
    ['claude-3-7-sonnet-latest', 3, 15],
    ['gpt-4o', 2.5, 10],
    ['gpt-4o-2024-08-06', 2.5, 10],
    // The first snapshot kept its launch price: listed under its own id, it wins over gpt-4o.
    ['gpt-4o-2024-05-13', 5, 15],
    ['gpt-4o-mini', 0.15, 0.6],
    ['gpt-4o-mini-2024-07-18', 0.15, 0.6],
    ['gpt-4.1', 2, 8],
    ['gpt-4.1-mini', 0.4, 1.6],
    ['gpt-5', 1.25, 10],
    ['gpt-5-mini', 0.25, 2],
  ])('%s costs $%s / $%s per million', (model, input, output) => {
    expect(priceOf(model)).toEqual({ input, output });
  });

  it.each(['my-gateway/claude-x', 'claude-opus-4-7', 'gpt-4o-audio-preview', 'llama3.1:8b', 'gpt-5-codex'])(
    '%s is unknown',
    (model) => {
      expect(priceOf(model)).toBeNull();
    },
  );
});

describe('costUsd', () => {
  it('multiplies tokens by the per-million price', () => {
    expect(costUsd('claude-opus-4-5', { inputTokens: 2_000_000, outputTokens: 100_000 })).toBeCloseTo(12.5, 10);
    expect(costUsd('gpt-4o-mini', { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toBeCloseTo(0.75, 10);
  });

  it('is null for unknown models', () => {
    expect(costUsd('qwen2.5-coder:7b', { inputTokens: 10, outputTokens: 10 })).toBeNull();
  });

  it('is null (unknown, not $0) when the server reported no token usage', () => {
    expect(costUsd('gpt-4o', { inputTokens: null, outputTokens: null })).toBeNull();
    expect(costUsd('gpt-4o', { inputTokens: 10, outputTokens: null })).toBeNull();
  });
});

describe('maxOutputTokensFor', () => {
  it.each([
    ['claude-sonnet-4-5-20250929', DEFAULT_MAX_OUTPUT_TOKENS],
    ['claude-opus-4-5', DEFAULT_MAX_OUTPUT_TOKENS],
    ['claude-3-5-haiku-20241022', 8192],
    ['claude-3-5-haiku-latest', 8192],
    ['claude-3-opus-20240229', 4096],
    ['gpt-4-turbo', 4096],
    ['gpt-4-turbo-2024-04-09', 4096],
    ['gpt-4o', DEFAULT_MAX_OUTPUT_TOKENS],
    ['gpt-4o-2024-05-13', 4096],
    ['qwen2.5-coder:7b', DEFAULT_MAX_OUTPUT_TOKENS],
  ])('%s: %s output tokens by default', (model, expected) => {
    expect(maxOutputTokensFor(model)).toBe(expected);
  });

  it('sends a configured value as given', () => {
    expect(maxOutputTokensFor('qwen2.5-coder:7b', 2048)).toBe(2048);
    expect(maxOutputTokensFor('claude-sonnet-4-5', 64_000)).toBe(64_000);
  });

  it('knows the limits of the models it prices, and nothing of the others', () => {
    expect(outputLimitOf('claude-sonnet-4-5')).toBe(64_000);
    expect(outputLimitOf('my-gateway/claude-x')).toBeNull();
  });
});
