/**
 * Server messages as Ratchet repeats them (provider errors, `ratchet doctor`): keys are taken out,
 * both the configured ones and those a server quotes masked, as OpenAI does in its 401 text
 * (`Incorrect API key provided: sk-proj-*********************E456`), whose visible ends still
 * identify the key.
 */
import { createRedactor, REDACTED } from '../core/redact.js';

/** A key quoted with a run of `*` inside it: `sk-proj-*****E456`, `sk-abc***wxyz`. */
const MASKED_KEY = /[\w-]*\*{3,}[\w-]*/g;

/** Replaces keys a server quoted masked (`sk-proj-****E456`) with `[REDACTED]`. */
function maskQuotedKeys(text: string): string {
  return text.replace(MASKED_KEY, REDACTED);
}

/**
 * A redactor for text from a server: the given keys however short (a configured key of fewer
 * than 8 characters is still a key), `sk-...` key shapes, and masked keys.
 */
export function serverTextRedactor(secrets: readonly string[]): (text: string) => string {
  const shapes = createRedactor(secrets, { shapes: 'keys' });
  const literals = secrets.filter((secret) => secret.length >= 4).sort((a, b) => b.length - a.length);
  return (text) => {
    let result = text;
    for (const secret of literals) result = result.split(secret).join(REDACTED);
    return maskQuotedKeys(shapes(result));
  };
}

/** First line of a server message, redacted (masked keys too), at most `maxLength` characters. */
export function cleanServerMessage(message: string, redact: (text: string) => string, maxLength = 300): string {
  const line = maskQuotedKeys(redact(message.split('\n')[0] ?? '')).trim();
  return line.length > maxLength ? `${line.slice(0, maxLength)}...` : line;
}

/**
 * The text without one final `.`, so it can end a sentence of ours (`...: <message>.`) or be
 * followed by more (`<message>; retry 1 in 1.0 s`) without a doubled or stray period.
 */
export function withoutFinalPeriod(text: string): string {
  return text.endsWith('.') && !text.endsWith('..') ? text.slice(0, -1) : text;
}
