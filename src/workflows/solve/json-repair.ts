/**
 * Reads the one JSON object of a model's plan answer. Small local models wrap it in a code fence,
 * put a sentence before or after it, or leave a trailing comma; those are repaired, because what
 * was meant is clear. Anything that needs a guess is not: two different objects, single quotes,
 * unquoted keys, comments, an object cut off before its end. The problem then goes back to the
 * model, in words it can act on.
 */
import { matchingBrace } from '../../agent/structured-output.js';

export type JsonExtraction =
  | {
      ok: true;
      value: unknown;
      /** What was repaired, for the trace (`removed a code fence`, `removed 2 trailing commas`). */
      repairs: string[];
    }
  | { ok: false; problem: string };

/** Top-level `{...}` spans of a text, in order; `unclosed` when one never closes. */
function objectSpans(text: string): { spans: string[]; unclosed: boolean } {
  const spans: string[] = [];
  let index = text.indexOf('{');
  while (index !== -1) {
    const end = matchingBrace(text, index);
    if (end === -1) return { spans, unclosed: true };
    spans.push(text.slice(index, end + 1));
    index = text.indexOf('{', end + 1);
  }
  return { spans, unclosed: false };
}

/** Removes commas directly before `}` or `]` (outside strings); returns the text and how many. */
function withoutTrailingCommas(text: string): { text: string; removed: number } {
  let out = '';
  let removed = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index] ?? '';
    if (inString) {
      out += char;
      if (char === '\\') out += text[++index] ?? '';
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    if (char === ',') {
      const next = /^\s*([}\]])/.exec(text.slice(index + 1));
      if (next !== null) {
        removed += 1;
        continue;
      }
    }
    out += char;
  }
  return { text: out, removed };
}

function parse(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The JSON object a reply holds, repaired where the repair is unambiguous. */
export function extractJsonObject(reply: string): JsonExtraction {
  const repairs: string[] = [];
  let text = reply.replace(/^\uFEFF/, '').trim();
  const fences = [...text.matchAll(/```[A-Za-z]*[ \t]*\r?\n([\s\S]*?)```/g)];
  if (fences.length > 1) {
    return { ok: false, problem: `Your reply has ${fences.length} code blocks; answer with exactly one JSON object.` };
  }
  if (fences.length === 1) {
    text = (fences[0]?.[1] ?? '').trim();
    repairs.push('removed a code fence');
  }
  const { spans, unclosed } = objectSpans(text);
  if (spans.length === 0) {
    return {
      ok: false,
      problem: unclosed
        ? 'Your JSON object is cut off before its closing brace; answer with the whole object.'
        : 'Your reply contains no JSON object.',
    };
  }
  if (new Set(spans).size > 1) {
    return { ok: false, problem: `Your reply contains ${spans.length} JSON objects; answer with exactly one.` };
  }
  const span = spans[0] ?? '';
  if (span !== text) repairs.push('removed text around the object');
  const direct = parse(span);
  if (direct.ok) return { ok: true, value: direct.value, repairs };
  const cleaned = withoutTrailingCommas(span);
  if (cleaned.removed > 0) {
    const repaired = parse(cleaned.text);
    if (repaired.ok) {
      repairs.push(`removed ${cleaned.removed} trailing comma${cleaned.removed === 1 ? '' : 's'}`);
      return { ok: true, value: repaired.value, repairs };
    }
  }
  return {
    ok: false,
    problem: `Your JSON does not parse (${direct.error}). Use double quotes for keys and strings, and no comments.`,
  };
}
