import type { ZodType } from 'zod';
import type { JsonSchema, ToolDefinition } from '../core/model.js';
import { formatZodIssues, toJsonSchema } from './tools/agent-tool.js';

/** Name of the tool through which a stage with an output schema returns its result. */
export const STRUCTURED_OUTPUT_TOOL = 'StructuredOutput';

type StructuredParse<T> = { ok: true; value: T } | { ok: false; problem: string };

/** The structured-output side of one stage, built from its zod schema. */
export interface StructuredOutput<T> {
  readonly definition: ToolDefinition;
  /** Appended to the system prompt. */
  readonly systemSuffix: string;
  /** Validates the input of a `StructuredOutput` call. */
  fromToolInput(input: unknown): StructuredParse<T>;
  /** Looks for the result in a plain-text reply: a ```json fence, else the last balanced `{...}`. */
  fromText(text: string): StructuredParse<T>;
}

/** Provider tool inputs must be objects: any other schema is wrapped as `{ value: ... }`. */
function isObjectSchema(schema: JsonSchema): boolean {
  return schema.type === 'object';
}

/** JSON texts in fenced blocks tagged `json` (or untagged), last first. */
function fencedBlocks(text: string): string[] {
  const blocks: string[] = [];
  for (const match of text.matchAll(/```(json|JSON)?[ \t]*\r?\n([\s\S]*?)```/g)) blocks.push(match[2] ?? '');
  return blocks.reverse();
}

/** Top-level balanced `{...}` spans (string literals respected), last first. */
function balancedObjects(text: string): string[] {
  const spans: string[] = [];
  let index = 0;
  while (index < text.length) {
    const start = text.indexOf('{', index);
    if (start === -1) break;
    const end = matchingBrace(text, start);
    if (end === -1) {
      index = start + 1;
      continue;
    }
    spans.push(text.slice(start, end + 1));
    index = end + 1;
  }
  return spans.reverse();
}

/** The index of the brace closing the object opened at `start`, or -1 (braces inside strings do not count). */
export function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth += 1;
    else if (char === '}') {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return -1;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** Builds the `StructuredOutput` tool and parsers for `schema`. */
export function createStructuredOutput<T>(schema: ZodType<T>): StructuredOutput<T> {
  const json = toJsonSchema(schema);
  const wrapped = !isObjectSchema(json);
  const inputSchema: JsonSchema = wrapped ? { type: 'object', properties: { value: json }, required: ['value'] } : json;

  const validate = (value: unknown): StructuredParse<T> => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return { ok: true, value: parsed.data };
    return { ok: false, problem: formatZodIssues(parsed.error.issues) };
  };

  return {
    definition: {
      name: STRUCTURED_OUTPUT_TOOL,
      description:
        'Returns the final result of this stage. Call it exactly once, when your work is done, with ' +
        'input matching this schema; the stage ends when the result is accepted.',
      inputSchema,
    },
    systemSuffix:
      `\n\nWhen you have finished, call the ${STRUCTURED_OUTPUT_TOOL} tool with your final result ` +
      '(its input must match the tool schema). The stage ends when that call is accepted.',

    fromToolInput(input) {
      if (!wrapped) return validate(input);
      const value = typeof input === 'object' && input !== null && 'value' in input ? input.value : undefined;
      return validate(value);
    },

    fromText(text) {
      const candidates = [...fencedBlocks(text), ...balancedObjects(text)];
      let lastProblem: string | undefined;
      for (const candidate of candidates) {
        const parsed = parseJson(candidate.trim());
        if (!parsed.ok) continue;
        const result = validate(parsed.value);
        if (result.ok) return result;
        lastProblem ??= result.problem;
      }
      if (lastProblem !== undefined)
        return { ok: false, problem: `The JSON in your reply does not match the schema:\n${lastProblem}` };
      return { ok: false, problem: 'Your reply contains no JSON result.' };
    },
  };
}
