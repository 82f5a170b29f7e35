/**
 * Tool calls a model wrote as text. Qwen, Hermes and other open models fine-tuned on the
 * `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` format answer that way when the
 * server that runs them has no tool-call parser for their chat template (a vLLM started without
 * `--tool-call-parser`, a llama.cpp or Ollama template that lacks it): the calls arrive as plain
 * content and the agent would see a reply that does nothing. They are the same model's calls,
 * no more trusted and no less, and run through the same tools and sandbox as structured ones.
 */
import { z } from 'zod';
import type { ToolCall } from '../core/model.js';

const BLOCK = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g;

const TextToolCall = z.object({
  name: z.string().min(1),
  // Some templates emit the arguments as a JSON string, as the OpenAI wire format carries them.
  arguments: z.union([
    z.record(z.string(), z.unknown()),
    z.string().transform((text, context) => {
      try {
        const value: unknown = JSON.parse(text);
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
      } catch {
        // reported below
      }
      context.addIssue({ code: 'custom', message: 'arguments is not a JSON object' });
      return z.NEVER;
    }),
  ]),
});

/**
 * The calls in `text` when it holds `<tool_call>` blocks only for the offered tools, with the
 * text around them; undefined when it holds none or any block is not a well-formed call to an
 * offered tool (then the text stays the model's answer, as it wrote it).
 */
export function toolCallsInText(
  text: string,
  offered: ReadonlySet<string>,
  idPrefix: string,
): { toolCalls: ToolCall[]; text: string } | undefined {
  const blocks = [...text.matchAll(BLOCK)];
  if (blocks.length === 0) return undefined;
  const toolCalls: ToolCall[] = [];
  for (const [index, block] of blocks.entries()) {
    let value: unknown;
    try {
      value = JSON.parse(block[1] ?? '');
    } catch {
      return undefined;
    }
    const parsed = TextToolCall.safeParse(value);
    if (!parsed.success || !offered.has(parsed.data.name)) return undefined;
    toolCalls.push({ id: `${idPrefix}_${index}`, name: parsed.data.name, input: parsed.data.arguments });
  }
  return { toolCalls, text: text.replace(BLOCK, '').trim() };
}
