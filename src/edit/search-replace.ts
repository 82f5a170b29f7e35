/**
 * Search/replace edits (seed 004): the model quotes text that must occur exactly once in a file
 * and gives its replacement. Two notations are read:
 *
 *     src/app.ts
 *     ```ts
 *     <<<<<<< SEARCH
 *     const a = 1;
 *     =======
 *     const a = 2;
 *     >>>>>>> REPLACE
 *     ```
 *
 * with the path (no spaces) on the line before the block, or before its fence; a block without
 * one reuses the previous block's path, and the seed's `<edit file="p"><search>..</search>
 * <replacement>..</replacement></edit>`, read only when there are no SEARCH markers.
 */

/** One edit: replace the single occurrence of `search` in `path` with `replace`. */
export interface SearchReplaceBlock {
  path: string;
  /** Exact text to find; empty only to create a file that does not exist yet. */
  search: string;
  replace: string;
}

export interface ParsedSearchReplace {
  blocks: SearchReplaceBlock[];
  /** Malformed blocks, each naming its line, written for the model's retry prompt. */
  errors: string[];
}

export type SearchReplaceFailureKind = 'missing-file' | 'not-found' | 'ambiguous' | 'file-exists';

/** Why one block could not be applied; `message` is written for the model's retry prompt. */
export interface SearchReplaceFailure {
  /** Index of the block in the list given to `applySearchReplace`. */
  block: number;
  path: string;
  kind: SearchReplaceFailureKind;
  /** How many times SEARCH occurred (0 for `not-found`, 2+ for `ambiguous`). */
  matches: number;
  message: string;
}

export type SearchReplaceResult =
  | {
      ok: true;
      /** New text of every file a block changed (or created), by path. */
      files: Map<string, string>;
    }
  | { ok: false; failures: SearchReplaceFailure[] };

const SEARCH = /^<{5,9} ?SEARCH\s*$/;
const DIVIDER = /^={5,9}\s*$/;
const REPLACE = /^>{5,9} ?REPLACE\s*$/;
const FENCE = /^(`{3,}|~{3,})/;

/** Reads the blocks of a model's response; never throws. */
export function parseSearchReplace(text: string): ParsedSearchReplace {
  const lines = text.replaceAll('\r\n', '\n').split('\n');
  if (!lines.some((line) => SEARCH.test(line))) return parseXmlEdits(text);
  const blocks: SearchReplaceBlock[] = [];
  const errors: string[] = [];
  let previousPath: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    if (!SEARCH.test(lines[i] ?? '')) continue;
    const start = i;
    const path: string | null = pathBefore(lines, start) ?? previousPath;
    const search: string[] = [];
    const replace: string[] = [];
    for (i++; i < lines.length && !DIVIDER.test(lines[i] ?? ''); i++) search.push(lines[i] ?? '');
    if (i >= lines.length) {
      errors.push(`Line ${start + 1}: the SEARCH block has no '=======' line.`);
      break;
    }
    for (i++; i < lines.length && !REPLACE.test(lines[i] ?? ''); i++) replace.push(lines[i] ?? '');
    if (i >= lines.length) {
      errors.push(`Line ${start + 1}: the SEARCH block has no '>>>>>>> REPLACE' line.`);
      break;
    }
    if (path === null) {
      errors.push(
        `Line ${start + 1}: the SEARCH block has no file path; put the path on the line before '<<<<<<< SEARCH'.`,
      );
      continue;
    }
    previousPath = path;
    blocks.push({ path, search: joinLines(search), replace: joinLines(replace) });
  }
  return { blocks, errors };
}

/**
 * Applies `blocks` in order to `files` (path -> current text; the map is not modified). Each
 * block sees the result of earlier blocks on the same file. All or nothing: when any block
 * fails, no text is returned and every failure is listed. A SEARCH must occur exactly once; an
 * empty SEARCH creates a file that is absent from `files` (or empty). When the file uses CRLF
 * and the block does not, the block is converted; when SEARCH occurs only with different
 * whitespace, the failure message points at those lines.
 */
export function applySearchReplace(
  files: ReadonlyMap<string, string>,
  blocks: readonly SearchReplaceBlock[],
): SearchReplaceResult {
  const current = new Map<string, string>();
  const failures: SearchReplaceFailure[] = [];
  blocks.forEach((block, index) => {
    const text = current.get(block.path) ?? files.get(block.path);
    const fail = (kind: SearchReplaceFailureKind, matches: number, message: string): void => {
      failures.push({
        block: index,
        path: block.path,
        kind,
        matches,
        message: `Edit ${index + 1} (${block.path}): ${message}`,
      });
    };
    if (block.search === '') {
      if (text === undefined || text === '') current.set(block.path, block.replace);
      else
        fail(
          'file-exists',
          1,
          'SEARCH is empty, which creates a new file, but the file exists. Quote the exact lines to replace in SEARCH.',
        );
      return;
    }
    if (text === undefined) {
      fail('missing-file', 0, 'the file does not exist. Check the path, or use an empty SEARCH to create a new file.');
      return;
    }
    const crlf = text.includes('\r\n') && !block.search.includes('\r');
    const search = crlf ? block.search.replaceAll('\n', '\r\n') : block.search;
    const replace = crlf ? block.replace.replaceAll('\n', '\r\n') : block.replace;
    // A file without a final newline still matches a SEARCH that quotes its last line whole.
    const newline = crlf ? '\r\n' : '\n';
    const padded = text.endsWith('\n') || !search.endsWith(newline) ? text : text + newline;
    const positions = occurrences(padded, search);
    if (positions.length === 1) {
      const position = positions[0] ?? 0;
      const updated = padded.slice(0, position) + replace + padded.slice(position + search.length);
      current.set(
        block.path,
        padded === text || !updated.endsWith(newline) ? updated : updated.slice(0, -newline.length),
      );
    } else if (positions.length === 0) {
      fail(
        'not-found',
        0,
        `SEARCH matches 0 times in ${block.path}; it must match exactly once. ${whitespaceHint(text, block.search)}`.trimEnd(),
      );
    } else {
      const lines = positions.map((position) => lineOf(padded, position)).join(', ');
      fail(
        'ambiguous',
        positions.length,
        `SEARCH matches ${positions.length} times in ${block.path} (lines ${lines}); it must match exactly once. Include more surrounding lines so it is unique.`,
      );
    }
  });
  return failures.length > 0 ? { ok: false, failures } : { ok: true, files: current };
}

function joinLines(lines: readonly string[]): string {
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** The path on the nearest line above `index`, skipping one fence and blank lines. */
function pathBefore(lines: readonly string[], index: number): string | null {
  let j = index - 1;
  while (j >= 0 && (lines[j] ?? '').trim() === '') j--;
  if (j >= 0 && FENCE.test(lines[j] ?? '')) j--;
  while (j >= 0 && (lines[j] ?? '').trim() === '') j--;
  const raw = lines[j];
  if (raw === undefined || REPLACE.test(raw) || FENCE.test(raw)) return null;
  const path = raw
    .trim()
    .replace(/^#+\s*/, '')
    .replace(/^(?:file(?:name)?|path)\s*:\s*/i, '')
    .replace(/^[*`'"]+|[*`'":]+$/g, '')
    .trim();
  // Prose ("Here is the change:") is not a path; paths with spaces are not supported here.
  return path === '' || /\s/.test(path) ? null : path;
}

function occurrences(text: string, search: string): number[] {
  const positions: number[] = [];
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + 1)) positions.push(at);
  return positions;
}

function lineOf(text: string, position: number): number {
  let line = 1;
  for (let i = 0; i < position; i++) if (text[i] === '\n') line++;
  return line;
}

/** Points at lines that match SEARCH when whitespace is ignored, or '' when there are none. */
function whitespaceHint(text: string, search: string): string {
  const squash = (line: string): string => line.trim().replace(/\s+/g, ' ');
  const wanted = search
    .replace(/\r?\n$/, '')
    .split(/\r?\n/)
    .map(squash);
  const lines = text.split(/\r?\n/).map(squash);
  const starts: number[] = [];
  for (let i = 0; i + wanted.length <= lines.length; i++) {
    if (wanted.every((line, k) => lines[i + k] === line)) starts.push(i + 1);
  }
  if (starts.length === 0) return 'Copy the lines to replace exactly from the current file.';
  return `It matches only if whitespace is ignored, at line ${starts.join(', ')}: copy those lines exactly, including indentation and blank space.`;
}

/** Seed 004's `<edit file="..."><search>..</search><replacement>..</replacement></edit>`. */
function parseXmlEdits(text: string): ParsedSearchReplace {
  const blocks: SearchReplaceBlock[] = [];
  const errors: string[] = [];
  const edit = /<edit\s+file\s*=\s*(?:"([^"]*)"|'([^']*)')\s*>([\s\S]*?)<\/edit>/g;
  for (const match of text.matchAll(edit)) {
    const body = match[3] ?? '';
    const search = /<search>([\s\S]*?)<\/search>/.exec(body);
    const replacement = /<replacement>([\s\S]*?)<\/replacement>/.exec(body);
    const path = (match[1] ?? match[2] ?? '').trim();
    if (path === '' || search === null || replacement === null) {
      errors.push(`<edit file="${path}">: each edit needs a file attribute, <search> and <replacement>.`);
      continue;
    }
    const trim = (value: string): string => value.replace(/^\r?\n/, '');
    blocks.push({ path, search: trim(search[1] ?? ''), replace: trim(replacement[1] ?? '') });
  }
  return { blocks, errors };
}
