/**
 * Turns TOML syntax errors and zod issues into `RatchetError('config')` with the file, the line
 * (or key path) and a hint that says what to do. Shared by the config and prompt loaders.
 */
import { parse, stringify, TomlError, type TomlTable } from 'smol-toml';
import { z } from 'zod';
import { RatchetError } from '../../core/errors.js';
import { describeSchema, objectFields, schemaAt } from './schema-walk.js';

/** Parses TOML text; a syntax error becomes a config error with the file and line. */
export function parseToml(text: string, file: string): TomlTable {
  try {
    return parse(text);
  } catch (error) {
    if (error instanceof TomlError) {
      const reason = error.message.split('\n')[0]?.replace(/^Invalid TOML document:\s*/, '') ?? error.message;
      return fail(`Invalid TOML in ${file} at line ${error.line}, column ${error.column}: ${reason}`, {
        cause: error,
        hint: `Fix the syntax at ${file}:${error.line}.\n${error.codeblock}`,
        details: { file, line: error.line, column: error.column },
      });
    }
    throw error;
  }
}

/**
 * Builds the error for the zod issues of a file: each one names its key, its line and a fix. One
 * issue is the message with its hint; several are listed each on its own line, so that fixing one
 * does not only reveal the next.
 */
export function schemaIssueError(
  issues: readonly z.core.$ZodIssue[],
  file: string,
  text: string,
  schema: z.ZodType,
  raw?: unknown,
): RatchetError {
  // Unknown keys first: a misspelt key is the likeliest cause of the other issues.
  const ordered = [
    ...issues.filter((issue) => issue.code === 'unrecognized_keys'),
    ...issues.filter((issue) => issue.code !== 'unrecognized_keys'),
  ];
  const described = ordered.flatMap((issue) => describeIssue(issue, { file, text, schema, raw }));
  const [first] = described;
  if (first === undefined) return new RatchetError('config', `Invalid ${file}`);
  const details = { file, keyPath: first.keyPath, line: first.line, issues: described.length };
  if (described.length === 1) return new RatchetError('config', first.message, { hint: first.hint, details });
  return new RatchetError(
    'config',
    `${described.length} problems in ${file}:\n${described.map((problem) => `  - ${problem.message}. ${problem.hint}`).join('\n')}`,
    { hint: 'Fix each of them; `ratchet doctor` checks the configuration again.', details },
  );
}

interface DescribedIssue {
  message: string;
  hint: string;
  keyPath: string;
  line: number | undefined;
}

/** One problem per unknown key, one per other issue. */
function describeIssue(
  issue: z.core.$ZodIssue,
  source: { file: string; text: string; schema: z.ZodType; raw: unknown },
): DescribedIssue[] {
  const { file, text, schema, raw } = source;
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeys(schema, path);
    return issue.keys.map((key) => {
      const keyPath = [...path, key].join('.');
      const suggestion = closest(key, known);
      const line = locateKey(text, [...path, key]);
      return {
        message: `Unknown key "${keyPath}" in ${file}${atLine(line)}`,
        hint:
          (suggestion === undefined ? '' : `Did you mean "${[...path, suggestion].join('.')}"? `) +
          (known.length > 0
            ? `Known keys${path.length > 0 ? ` in [${path.join('.')}]` : ''}: ${known.join(', ')}.`
            : ''),
        keyPath,
        line,
      };
    });
  }
  const keyPath = path.join('.');
  const line = locateKey(text, path);
  const value = valueAt(raw, path);
  const rewrite = issue.code === 'invalid_type' ? rewriteHint(issue.expected, value, path) : undefined;
  const nearest =
    issue.code === 'invalid_value' && typeof value === 'string'
      ? closest(
          value,
          issue.values.filter((candidate): candidate is string => typeof candidate === 'string'),
        )
      : undefined;
  const suggestion = nearest === undefined ? undefined : `Did you mean "${nearest}"?`;
  const described = describeKey(schema, path) ?? `Check "${keyPath}" in ${file}.`;
  return [
    {
      message: `Invalid value for "${keyPath}" in ${file}${atLine(line)}: ${issue.message}`,
      hint: [suggestion, rewrite, described].filter((part) => part !== undefined).join(' '),
      keyPath,
      line,
    },
  ];
}

/** How to write a value of the wrong type so it has the right one, when that is clear. */
function rewriteHint(expected: string, value: unknown, path: readonly string[]): string | undefined {
  const key = path.at(-1);
  // An element of a list has no `key = value` line of its own.
  if (key === undefined || /^\d+$/.test(key) || value === undefined) return undefined;
  const write = (example: unknown): string => stringify({ [key]: example }).trim();
  if (expected === 'array' && (typeof value === 'string' || typeof value === 'number'))
    return `Write a list: ${write([value])}.`;
  if (
    (expected === 'number' || expected === 'int') &&
    typeof value === 'string' &&
    /^\s*-?\d+(?:\.\d+)?\s*$/.test(value)
  )
    return `Write the number without quotes: ${write(Number(value))}.`;
  if (expected === 'int' && typeof value === 'number') return `Write a whole number: ${write(Math.round(value))}.`;
  if (expected === 'boolean' && (value === 'true' || value === 'false'))
    return `Write true or false without quotes: ${write(value === 'true')}.`;
  if (expected === 'string' && (typeof value === 'number' || typeof value === 'boolean'))
    return `Quote it: ${write(String(value))}.`;
  return undefined;
}

/** The value at a key path of a parsed document, if there is one. */
function valueAt(raw: unknown, path: readonly string[]): unknown {
  let value = raw;
  for (const part of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function fail(message: string, options: ConstructorParameters<typeof RatchetError>[2]): never {
  throw new RatchetError('config', message, options);
}

function atLine(line: number | undefined): string {
  return line === undefined ? '' : ` (line ${line})`;
}

function knownKeys(schema: z.ZodType, path: readonly string[]): string[] {
  const node = schemaAt(schema, path);
  return node instanceof z.ZodObject ? Object.keys(objectFields(node)) : [];
}

function describeKey(schema: z.ZodType, path: readonly string[]): string | undefined {
  const parent = schemaAt(schema, path.slice(0, -1));
  const key = path.at(-1);
  if (!(parent instanceof z.ZodObject) || key === undefined) return undefined;
  const field = objectFields(parent)[key];
  const description = field === undefined ? undefined : describeSchema(field);
  return description === undefined ? undefined : `"${path.join('.')}": ${description}`;
}

/**
 * The known name nearest to a typo (a key, a provider...), when it is close enough to be a
 * plausible intent.
 */
export function closest(key: string, known: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (best === undefined || distance < best.distance) best = { key: candidate, distance };
  }
  return best !== undefined && best.distance <= Math.max(2, Math.floor(key.length / 3)) ? best.key : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * Best-effort 1-based line of a key: the `key =` line inside its `[table]`, or the table header
 * itself. Handles the common layouts (one table per section, plain or quoted keys); returns
 * undefined when the key cannot be found (e.g. written as an inline table).
 */
export function locateKey(text: string, path: readonly string[]): number | undefined {
  if (path.length === 0) return undefined;
  const lines = text.split('\n');
  let table: string[] = [];
  let headerMatch: number | undefined;
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    const header = /^\[\[?\s*([^\]]+?)\s*\]\]?/.exec(line);
    if (header?.[1] !== undefined) {
      table = header[1].split('.').map((part) => part.trim().replace(/^["']|["']$/g, ''));
      if (samePath(table, path)) headerMatch = index + 1;
      continue;
    }
    const assignment = /^([A-Za-z0-9_\-."' ]+?)\s*=/.exec(line);
    if (assignment?.[1] === undefined) continue;
    const keyParts = assignment[1].split('.').map((part) => part.trim().replace(/^["']|["']$/g, ''));
    if (samePath([...table, ...keyParts], path)) return index + 1;
  }
  return headerMatch;
}

function samePath(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((part, index) => part === b[index]);
}
