/** Navigation of the config schema (for error hints and the generated default file). */
import { z } from 'zod';

/** Strips `.default()`, `.prefault()` and `.optional()` wrappers. */
export function unwrapSchema(schema: z.ZodType): z.ZodType {
  let node = schema;
  while (node instanceof z.ZodDefault || node instanceof z.ZodPrefault || node instanceof z.ZodOptional) {
    node = node.unwrap() as z.ZodType;
  }
  return node;
}

/** The (unwrapped) schema node at a key path, or undefined when the path leaves the schema. */
export function schemaAt(schema: z.ZodType, path: readonly string[]): z.ZodType | undefined {
  let node: z.ZodType | undefined = unwrapSchema(schema);
  for (const key of path) {
    node = node instanceof z.ZodObject ? objectFields(node)[key] : undefined;
    if (node === undefined) return undefined;
    node = unwrapSchema(node);
  }
  return node;
}

/** The fields of an object schema, wrappers (and so descriptions) kept. */
export function objectFields(schema: z.ZodObject): Record<string, z.ZodType | undefined> {
  return schema.shape;
}

/** The description of a schema, looking through `.default()` / `.prefault()` / `.optional()`. */
export function describeSchema(schema: z.ZodType): string | undefined {
  let node: z.ZodType = schema;
  for (;;) {
    if (node.description !== undefined) return node.description;
    if (!(node instanceof z.ZodDefault || node instanceof z.ZodPrefault || node instanceof z.ZodOptional))
      return undefined;
    node = node.unwrap() as z.ZodType;
  }
}
