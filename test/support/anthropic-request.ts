/**
 * Reading a recorded Anthropic Messages request the way the model sees it, for the scripted
 * brains of the fake server: the body's system prompt and messages, their text, their blocks,
 * and which test-list item a PLAN prompt offers.
 */
import { z } from 'zod';

export const blockSchema = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  tool_use_id: z.string().optional(),
  is_error: z.boolean().optional(),
  content: z.unknown().optional(),
});
export type Block = z.infer<typeof blockSchema>;
const contentSchema = z.union([z.string(), z.array(blockSchema)]);
export const bodySchema = z.looseObject({
  system: z.union([z.string(), z.array(blockSchema)]).optional(),
  messages: z.array(z.looseObject({ role: z.string(), content: contentSchema })),
});

export function blocksOf(content: string | Block[]): Block[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(textOf).join('\n');
  const block = blockSchema.safeParse(content);
  if (!block.success) return '';
  return block.data.text ?? textOf(block.data.content);
}

/** The item PLAN should pick: the first unchecked one of the test list in its prompt. */
export function planItem(prompt: string, items: readonly string[]): string | null {
  if (prompt.includes('test-list.md does not exist yet')) return items[0] ?? null;
  const list = prompt.split('Current test-list.md:')[1]?.split('Completed behaviours:')[0] ?? '';
  const unchecked = /^\s*[-*+]\s+\[ \]\s+(.*\S)\s*$/m.exec(list);
  return unchecked?.[1] ?? null;
}
