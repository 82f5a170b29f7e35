import { estimatePromptTokens } from './token-estimate.js';

/**
 * The token budget of one pass (seed 004): the model's context window, of which
 * `[budget] reserved_tokens` stay free for the reply and the estimate's error.
 */
export interface TokenBudget {
  contextWindow: number;
  reservedTokens: number;
}

/** Tokens a prompt may take under `budget` (never negative). */
export function promptCapacity(budget: TokenBudget): number {
  return Math.max(0, budget.contextWindow - budget.reservedTokens);
}

export type PromptFit = { ok: true; tokens: number } | { ok: false; tokens: number; message: string };

/**
 * Whether a request with this system prompt and user message fits the budget (seed 004, R3),
 * framing included (R5). Decided before any call: a prompt over the window would be cut by the
 * server or refused, and a small local model cut mid-context answers about what it no longer sees.
 */
export function checkPromptFits(label: string, system: string, user: string, budget: TokenBudget): PromptFit {
  const tokens = estimatePromptTokens(system, user);
  const capacity = promptCapacity(budget);
  if (tokens <= capacity) return { ok: true, tokens };
  return {
    ok: false,
    tokens,
    message:
      `The ${label} prompt needs about ${tokens} tokens, more than the ${capacity} the model can take ` +
      `(context window ${budget.contextWindow} minus [budget] reserved_tokens ${budget.reservedTokens}); ` +
      'no call was made. Set [budget] context_window if the model serves a larger window, lower ' +
      '[budget] reserved_tokens, or split the task into smaller ones.',
  };
}
