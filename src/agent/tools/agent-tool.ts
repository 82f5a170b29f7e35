import { z, type ZodType } from 'zod';
import type { JsonSchema, ToolDefinition } from '../../core/model.js';
import type { ProcessRunner } from '../../process/types.js';
import { RatchetError } from '../../core/errors.js';
import type { FileGuard } from '../file-guard.js';
import { isToolError } from '../tool-error.js';

/** What a tool may use while it runs; one per stage. */
export interface ToolContext {
  /** Every path a tool touches goes through this guard. */
  guard: FileGuard;
  runner: ProcessRunner;
  /**
   * The environment Bash commands (and ripgrep) run with: an allowlist of Ratchet's own, never
   * all of it (see `commandEnvironment`), so no key or token reaches the agent's shell.
   * Default: the allowlisted variables of Ratchet's own environment.
   */
  environment?: Readonly<Record<string, string>>;
  /** The stage's Bash timeout in ms; a tool may only shorten it. */
  bashTimeoutMs: number;
  signal?: AbortSignal;
}

/** The text the model sees for one tool call. */
export interface ToolExecution {
  output: string;
  isError: boolean;
}

/**
 * A tool of the built-in runtime: a declaration (name, description, zod input schema) and an
 * invocation that receives input already validated against that schema. Recoverable problems
 * are returned with `isError: true` or thrown as `ToolError`; `executeTool` turns both into a
 * result for the model. Only `RatchetError`s (e.g. `interrupted`) escape to the caller.
 */
export interface AgentTool<Input = unknown> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: ZodType<Input>;
  execute(input: Input, context: ToolContext): Promise<ToolExecution>;
}

/**
 * Converted schemas, by schema (zod schemas are immutable): every stage attempt of every task
 * declares the same tools, and converting is far dearer than copying.
 */
const converted = new WeakMap<ZodType, JsonSchema>();

/** JSON Schema of a zod schema as seen by the model (the input side), without `$schema`; the caller's to change. */
export function toJsonSchema(schema: ZodType): JsonSchema {
  let json = converted.get(schema);
  if (json === undefined) {
    json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
    delete json.$schema;
    converted.set(schema, json);
  }
  return structuredClone(json);
}

/** The provider-facing declaration of a tool. */
export function toToolDefinition(tool: AgentTool): ToolDefinition {
  return { name: tool.name, description: tool.description, inputSchema: toJsonSchema(tool.inputSchema) };
}

/** One line per zod issue: `- path: message`. */
export function formatZodIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const where = issue.path.length === 0 ? '(input)' : issue.path.map(String).join('.');
      return `- ${where}: ${issue.message}`;
    })
    .join('\n');
}

/** `file_path (string, required), offset (integer, optional)` from an object JSON Schema. */
function describeParameters(schema: JsonSchema): string {
  const properties = schema.properties;
  if (typeof properties !== 'object' || properties === null) return '';
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  return Object.entries(properties)
    .map(([name, property]: [string, unknown]) => {
      const type =
        typeof property === 'object' && property !== null && 'type' in property ? String(property.type) : 'any';
      return `${name} (${type}, ${required.has(name) ? 'required' : 'optional'})`;
    })
    .join(', ');
}

/**
 * Validates raw model input against the tool's schema and runs it. Invalid input, `ToolError`s
 * and unexpected failures (e.g. a filesystem error) all become error results the model can
 * react to; `RatchetError`s propagate.
 */
export async function executeTool(tool: AgentTool, rawInput: unknown, context: ToolContext): Promise<ToolExecution> {
  const parsed = tool.inputSchema.safeParse(rawInput ?? {});
  if (!parsed.success) {
    const parameters = describeParameters(toJsonSchema(tool.inputSchema));
    return {
      output:
        `Invalid input for ${tool.name}:\n${formatZodIssues(parsed.error.issues)}\n` +
        `Expected parameters: ${parameters}. Fix the input and call ${tool.name} again.`,
      isError: true,
    };
  }
  try {
    return await tool.execute(parsed.data, context);
  } catch (error) {
    if (error instanceof RatchetError) throw error;
    if (isToolError(error)) return { output: error.message, isError: true };
    const reason = error instanceof Error ? error.message : String(error);
    return { output: `${tool.name} failed: ${reason}`, isError: true };
  }
}
