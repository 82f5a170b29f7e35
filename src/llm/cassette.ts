/**
 * NDJSON cassettes: recorded (`createRecordingModelClient`) or hand-written model turns, played
 * back in order by the replay client (replay.ts).
 *
 * Line 1 may be a header `{"cassette":1,"description":"...","model":"..."}`. Every other
 * non-blank line is one entry:
 * `{"match": Match, "response": {"text", "toolCalls": [{"id","name","input"}], "finishReason"?,
 * "usage"?: {"inputTokens","outputTokens"}}, "request"?: <recorded request, informational>}`.
 *
 * `Match` says which request an entry answers; every given field must hold:
 * - `stage`: equals the first line of the system prompt (e.g. `Stage: RED`);
 * - `lastUser`: a substring of the last user message;
 * - `toolResults`: the last message is a tool message whose results match these, in order
 *   (`tool` name, optional `isError`, optional `contains` substring of the output).
 */
import { appendFile, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { RatchetError } from '../core/errors.js';
import type { GenerateOptions, ModelClient, ModelRequest, ModelResponse } from '../core/model.js';

const toolResultMatchSchema = z.strictObject({
  tool: z.string(),
  isError: z.boolean().optional(),
  contains: z.string().optional(),
});

/** Conditions an entry places on the request it answers. */
const cassetteMatchSchema = z.strictObject({
  stage: z.string().optional(),
  lastUser: z.string().optional(),
  toolResults: z.array(toolResultMatchSchema).optional(),
});

const finishReasonSchema = z.enum(['stop', 'tool-calls', 'length', 'content-filter', 'error', 'other']);

const responseSchema = z.strictObject({
  text: z.string().default(''),
  toolCalls: z
    .array(z.strictObject({ id: z.string().optional(), name: z.string().min(1), input: z.unknown() }))
    .default([]),
  finishReason: finishReasonSchema.optional(),
  usage: z
    .strictObject({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative() })
    .optional(),
});

/** One played-back model turn. */
const cassetteEntrySchema = z.strictObject({
  match: cassetteMatchSchema.default({}),
  response: responseSchema,
  /** The full recorded request; informational only, never used for matching. */
  request: z.unknown().optional(),
  /** Free text for hand-written cassettes. */
  comment: z.string().optional(),
});

/** The optional first line. */
const cassetteHeaderSchema = z.looseObject({
  cassette: z.literal(1),
  description: z.string().optional(),
  model: z.string().optional(),
});

export type CassetteMatch = z.infer<typeof cassetteMatchSchema>;
export type CassetteEntry = z.infer<typeof cassetteEntrySchema>;
/** An entry as written by hand or by code: defaults (empty match, no tool calls) may be omitted. */
export type CassetteEntryInput = z.input<typeof cassetteEntrySchema>;
type CassetteHeader = z.infer<typeof cassetteHeaderSchema>;

export interface Cassette {
  header: CassetteHeader | undefined;
  entries: CassetteEntry[];
}

/** Parses and validates a cassette; errors name `source:line`. */
export function parseCassette(text: string, source = 'cassette'): Cassette {
  let header: CassetteHeader | undefined;
  const entries: CassetteEntry[] = [];
  const lines = text.split('\n');
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const where = `${source}:${index + 1}`;
    let json: unknown;
    try {
      json = JSON.parse(line) as unknown;
    } catch (error) {
      throw invalid(where, `not valid JSON (${error instanceof Error ? error.message : String(error)})`, error);
    }
    if (entries.length === 0 && header === undefined && isHeaderLike(json)) {
      const parsed = cassetteHeaderSchema.safeParse(json);
      if (!parsed.success) throw invalid(where, z.prettifyError(parsed.error), parsed.error);
      header = parsed.data;
      continue;
    }
    const parsed = cassetteEntrySchema.safeParse(json);
    if (!parsed.success) throw invalid(where, z.prettifyError(parsed.error), parsed.error);
    entries.push(parsed.data);
  }
  return { header, entries };
}

/** Validates entries given in code (e.g. scripted tests); errors name the entry index. */
export function parseCassetteEntries(entries: readonly CassetteEntryInput[]): CassetteEntry[] {
  return entries.map((entry, index) => {
    const parsed = cassetteEntrySchema.safeParse(entry);
    if (!parsed.success) throw invalid(`entry #${index + 1}`, z.prettifyError(parsed.error), parsed.error);
    return parsed.data;
  });
}

/** True when the request satisfies every condition of the match. */
export function matchesRequest(match: CassetteMatch, request: ModelRequest): boolean {
  if (match.stage !== undefined && firstLine(request.system) !== match.stage.trim()) return false;
  if (match.lastUser !== undefined) {
    const lastUser = lastUserContent(request);
    if (lastUser === undefined || !lastUser.includes(match.lastUser)) return false;
  }
  if (match.toolResults !== undefined) {
    const last = request.messages.at(-1);
    if (last?.role !== 'tool' || last.results.length !== match.toolResults.length) return false;
    return match.toolResults.every((expected, index) => {
      const actual = last.results[index];
      return (
        actual !== undefined &&
        actual.toolName === expected.tool &&
        (expected.isError === undefined || actual.isError === expected.isError) &&
        (expected.contains === undefined || actual.output.includes(expected.contains))
      );
    });
  }
  return true;
}

/**
 * The request seen through the shape of a `Match`, for mismatch diffs: the stage line, the last
 * user message and the final tool results (texts shortened to `maxText` characters).
 */
export function summarizeRequest(request: ModelRequest, maxText = 200): CassetteMatch {
  const summary: CassetteMatch = { stage: firstLine(request.system) };
  const lastUser = lastUserContent(request);
  if (lastUser !== undefined) summary.lastUser = shorten(lastUser, maxText);
  const last = request.messages.at(-1);
  if (last?.role === 'tool') {
    summary.toolResults = last.results.map((result) => ({
      tool: result.toolName,
      isError: result.isError,
      contains: shorten(result.output, maxText),
    }));
  }
  return summary;
}

/**
 * The match a recorder stores for a request: the stage line; the tool results (names and error
 * flags) when the last message is a tool message; the first 80 characters of the user message
 * when the last message is a user message.
 */
function deriveMatch(request: ModelRequest): CassetteMatch {
  const match: CassetteMatch = { stage: firstLine(request.system) };
  const last = request.messages.at(-1);
  if (last?.role === 'user') match.lastUser = last.content.slice(0, 80);
  if (last?.role === 'tool') {
    match.toolResults = last.results.map((result) => ({ tool: result.toolName, isError: result.isError }));
  }
  return match;
}

/** The cassette entry recording one call. */
function recordEntry(request: ModelRequest, response: ModelResponse): CassetteEntry {
  const { inputTokens, outputTokens } = response.usage;
  return {
    match: deriveMatch(request),
    response: {
      text: response.text,
      toolCalls: response.toolCalls.map((call) => ({ id: call.id, name: call.name, input: call.input })),
      finishReason: response.finishReason,
      // Usage the server did not report is left out (unknown), not recorded as 0.
      ...(inputTokens !== null && outputTokens !== null ? { usage: { inputTokens, outputTokens } } : {}),
    },
    request,
  };
}

/** One NDJSON line (with its newline). */
function serializeCassetteLine(value: CassetteEntry | CassetteHeader): string {
  return `${JSON.stringify(value)}\n`;
}

export interface RecordingOptions {
  /** Written into the header when the file is created. */
  description?: string;
  /**
   * Applied to every line before it is written (keys and tokens out: a cassette is meant to be
   * shared). A request that held a secret then replays only against the same redacted text.
   */
  redact?: (line: string) => string;
}

/**
 * Passes every call through to `inner` and appends one cassette line per successful call
 * (failed calls are not recorded, so a replay sees only the turns that happened). Writes the
 * header line first when the file does not exist yet or is empty.
 */
export function createRecordingModelClient(
  inner: ModelClient,
  cassettePath: string,
  options: RecordingOptions = {},
): ModelClient {
  // Writes are chained so lines keep call order even when calls overlap.
  let writes: Promise<void> = Promise.resolve();
  const append = (entry: CassetteEntry): Promise<void> => {
    const write = writes.then(async () => {
      if (await isMissingOrEmpty(cassettePath)) {
        await mkdir(dirname(cassettePath), { recursive: true });
        const header = { cassette: 1 as const, description: options.description, model: inner.modelId };
        await appendFile(cassettePath, serializeCassetteLine(header), 'utf8');
      }
      const line = serializeCassetteLine(entry);
      await appendFile(cassettePath, options.redact ? options.redact(line) : line, 'utf8');
    });
    writes = write.catch(() => undefined);
    return write;
  };
  return {
    specificationVersion: 'ratchet-model-v1',
    provider: inner.provider,
    modelId: inner.modelId,
    async generate(request: ModelRequest, generateOptions?: GenerateOptions): Promise<ModelResponse> {
      const response = await inner.generate(request, generateOptions);
      try {
        await append(recordEntry(request, response));
      } catch (error) {
        throw new RatchetError('internal', `Cannot write cassette ${cassettePath}`, { cause: error });
      }
      return response;
    },
  };
}

async function isMissingOrEmpty(path: string): Promise<boolean> {
  try {
    return (await stat(path)).size === 0;
  } catch {
    return true;
  }
}

function isHeaderLike(json: unknown): boolean {
  return typeof json === 'object' && json !== null && !Array.isArray(json) && 'cassette' in json;
}

function lastUserContent(request: ModelRequest): string | undefined {
  for (let index = request.messages.length - 1; index >= 0; index -= 1) {
    const message = request.messages[index];
    if (message?.role === 'user') return message.content;
  }
  return undefined;
}

function firstLine(text: string): string {
  return (text.split('\n', 1)[0] ?? '').trim();
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}

function invalid(where: string, reason: string, cause: unknown): RatchetError {
  return new RatchetError('config', `Invalid cassette entry at ${where}: ${reason}`, {
    cause,
    hint: 'Each cassette line must be one JSON object: {"match": {...}, "response": {"text": ..., "toolCalls": [...]}}.',
  });
}
