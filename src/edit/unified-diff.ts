/**
 * A tolerant parser for the unified diffs models write, and a printer that turns the parsed
 * form back into a patch `git apply` accepts.
 *
 * Accepted besides real `git diff` output: a diff wrapped in a ```diff (or ~~~) fence with
 * prose around it; plain `---`/`+++` headers without `diff --git`; paths with or without
 * `a/` `b/` prefixes; CRLF line endings throughout; hunk headers whose line counts are wrong
 * (recounted from the body) or missing (`@@ ... @@`, positions synthesised, since `git apply`
 * relocates hunks by their context anyway); blank context lines that lost their leading space;
 * prose between or after file sections. Every such repair is listed in `repairs`; anything
 * that cannot be read as a patch is listed in `errors` (an unusable patch has errors).
 */

import { formatPatchFile } from './format-patch.js';
import { parseGitHeaderPaths, parsePathField, stripPrefixes, unquote } from './diff-paths.js';

/** How a file section changes its file. */
type PatchFileStatus = 'modified' | 'added' | 'deleted' | 'renamed' | 'copied';

/** One `@@` hunk with line counts that agree with its body. */
interface PatchHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** Text after the closing `@@` (usually the enclosing function), may be empty. */
  section: string;
  /** Body lines without newlines, each starting with ' ', '+', '-' or '\'. */
  lines: string[];
}

/** One file section of a patch. Paths are repository-relative, without `a/` `b/` prefixes. */
export interface PatchFile {
  /** Path before the change; null when the file is created. */
  oldPath: string | null;
  /** Path after the change; null when the file is deleted. */
  newPath: string | null;
  status: PatchFileStatus;
  /** Mode before the change (`100644`), when the patch states one. */
  oldMode: string | null;
  /** Mode after the change, when the patch states one (also set for created files). */
  newMode: string | null;
  /** True for `GIT binary patch` and `Binary files ... differ` sections. */
  binary: boolean;
  /** Lines of a `GIT binary patch` after that marker (null for text or marker-only sections). */
  binaryPatch: string[] | null;
  /** The `index <old>..<new> [mode]` line, kept because binary patches need full hashes. */
  indexLine: string | null;
  /** `similarity index N%` value of a rename or copy. */
  similarity: string | null;
  /** Lines added and deleted by the hunks (0 for binary files). */
  added: number;
  deleted: number;
  hunks: PatchHunk[];
}

export interface ParsedPatch {
  files: PatchFile[];
  /** Problems that make the text unusable as a patch, each naming where; empty when fine. */
  errors: string[];
  /** Model quirks that were repaired while parsing (fence removed, counts recounted, ...). */
  repairs: string[];
}

const HUNK_HEADER = /^@@+\s*-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?\s*@@+ ?(.*)$/;

interface Cursor {
  lines: string[];
  index: number;
  errors: string[];
  repairs: Set<string>;
}

/** Parses `text` leniently; see the module comment for what is tolerated. Never throws. */
export function parseUnifiedDiff(text: string): ParsedPatch {
  const repairs = new Set<string>();
  const lines = splitLines(unfence(text, repairs), repairs);
  const cursor: Cursor = { lines, index: 0, errors: [], repairs };
  const files: PatchFile[] = [];
  let sawProse = false;
  while (cursor.index < lines.length) {
    const line = lines[cursor.index] ?? '';
    if (line.startsWith('diff --git ')) {
      files.push(parseGitSection(cursor));
    } else if (isFileHeaderAt(lines, cursor.index)) {
      files.push(parsePlainSection(cursor));
    } else if (line.startsWith('@@')) {
      cursor.errors.push(
        `Line ${cursor.index + 1}: hunk '${line}' has no file header before it; start each file with '--- a/<path>' and '+++ b/<path>' lines.`,
      );
      cursor.index++;
      readHunk(cursor, null);
    } else {
      if (line.trim() !== '') sawProse = true;
      cursor.index++;
    }
  }
  if (sawProse && files.length > 0) repairs.add('ignored text outside the diff');
  return { files, errors: cursor.errors, repairs: [...repairs] };
}

/**
 * Returns `text` as a patch `git apply` accepts: fence and prose removed, LF line endings,
 * `diff --git` headers with `a/` `b/` prefixes, explicit new/deleted file modes, recounted hunk
 * headers. Pass an already parsed patch to avoid parsing twice. Text with parse errors is
 * printed as far as it was understood; check `parseUnifiedDiff(text).errors` first.
 */
export function normaliseDiff(text: string | ParsedPatch): string {
  const patch = typeof text === 'string' ? parseUnifiedDiff(text) : text;
  return patch.files.map(formatPatchFile).join('');
}

/** Every path the patch touches (both sides of a rename or copy), in order, without duplicates. */
export function touchedFiles(patch: ParsedPatch): string[] {
  const paths = new Set<string>();
  for (const file of patch.files) {
    if (file.oldPath !== null) paths.add(file.oldPath);
    if (file.newPath !== null) paths.add(file.newPath);
  }
  return [...paths];
}

/** Lines of change: added plus deleted lines over all text files. */
export function locTouched(patch: ParsedPatch): number {
  return patch.files.reduce((sum, file) => sum + file.added + file.deleted, 0);
}

/** The path a file section is known by: its new path, or its old path when deleted. */
export function patchFilePath(file: PatchFile): string {
  return file.newPath ?? file.oldPath ?? '';
}

// ---- Input cleanup ----

/** Extracts fenced blocks that look like diffs; returns `text` unchanged when there are none. */
function unfence(text: string, repairs: Set<string>): string {
  const lines = text.split('\n');
  const blocks: string[][] = [];
  let current: string[] | null = null;
  let fence = '';
  for (const raw of lines) {
    const line = raw.replace(/\r$/, '');
    if (current === null) {
      const open = /^(`{3,}|~{3,})\s*([\w.+-]*)\s*$/.exec(line);
      if (open?.[1] !== undefined) {
        current = [];
        fence = open[1];
      }
    } else if (line.startsWith(fence) && line.slice(fence.length).trim() === '') {
      blocks.push(current);
      current = null;
    } else {
      current.push(raw);
    }
  }
  if (current !== null) blocks.push(current); // an unclosed fence runs to the end
  const diffs = blocks.filter((block) => block.some((line) => /^(diff --git |@@|--- |\+\+\+ )/.test(line)));
  if (diffs.length === 0) return text;
  repairs.add('removed the Markdown code fence around the diff');
  return diffs.map((block) => block.join('\n')).join('\n');
}

/** Splits into lines; strips CR when the diff's own header lines end in CRLF. */
function splitLines(text: string, repairs: Set<string>): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const headers = lines.filter((line) => /^(diff --git |--- |\+\+\+ |@@)/.test(line));
  if (headers.length > 0 && headers.every((line) => line.endsWith('\r'))) {
    repairs.add('converted CRLF line endings to LF');
    return lines.map((line) => line.replace(/\r$/, ''));
  }
  return lines;
}

// ---- File sections ----

function emptyFile(): PatchFile {
  return {
    oldPath: null,
    newPath: null,
    status: 'modified',
    oldMode: null,
    newMode: null,
    binary: false,
    binaryPatch: null,
    indexLine: null,
    similarity: null,
    added: 0,
    deleted: 0,
    hunks: [],
  };
}

/** True when a `--- x` line is followed by a `+++ y` line (a plain file header). */
function isFileHeaderAt(lines: readonly string[], index: number): boolean {
  return (lines[index] ?? '').startsWith('--- ') && (lines[index + 1] ?? '').startsWith('+++ ');
}

function parseGitSection(cursor: Cursor): PatchFile {
  const file = emptyFile();
  const headerLine = cursor.lines[cursor.index] ?? '';
  const fromHeader = parseGitHeaderPaths(headerLine.slice('diff --git '.length));
  let renameFrom: string | null = null;
  let renameTo: string | null = null;
  let created = false;
  let deleted = false;
  let headerPaths: { old: string | null; new: string | null } | null = null;
  cursor.index++;
  for (; cursor.index < cursor.lines.length; cursor.index++) {
    const line = cursor.lines[cursor.index] ?? '';
    const value = (prefix: string): string | null => (line.startsWith(prefix) ? line.slice(prefix.length) : null);
    let match: string | null;
    if ((match = value('old mode ')) !== null) file.oldMode = match.trim();
    else if ((match = value('new mode ')) !== null) file.newMode = match.trim();
    else if ((match = value('new file mode ')) !== null) {
      created = true;
      file.newMode = match.trim();
    } else if ((match = value('deleted file mode ')) !== null) {
      deleted = true;
      file.oldMode = match.trim();
    } else if ((match = value('similarity index ')) !== null) file.similarity = match.trim();
    else if (value('dissimilarity index ') !== null) continue;
    else if ((match = value('rename from ') ?? value('copy from ')) !== null) {
      renameFrom = unquote(match);
      if (line.startsWith('copy')) file.status = 'copied';
      else file.status = 'renamed';
    } else if ((match = value('rename to ') ?? value('copy to ')) !== null) renameTo = unquote(match);
    else if (line.startsWith('index ')) file.indexLine = line;
    else if (/^Binary files .* differ$/.test(line)) {
      file.binary = true;
      cursor.index++;
      break;
    } else if (line === 'GIT binary patch') {
      file.binary = true;
      cursor.index++;
      file.binaryPatch = readBinaryPatch(cursor);
      break;
    } else if (isFileHeaderAt(cursor.lines, cursor.index)) {
      headerPaths = stripPrefixes(
        parsePathField(line.slice(4)),
        parsePathField((cursor.lines[cursor.index + 1] ?? '').slice(4)),
        true,
      );
      cursor.index += 2;
      break;
    } else break;
  }
  const oldPath = renameFrom ?? headerPaths?.old ?? fromHeader.old;
  const newPath = renameTo ?? headerPaths?.new ?? fromHeader.new;
  file.oldPath = created || headerPaths?.old === null ? null : oldPath;
  file.newPath = deleted || headerPaths?.new === null ? null : newPath;
  finishFile(file, cursor, headerLine);
  return file;
}

function parsePlainSection(cursor: Cursor): PatchFile {
  const file = emptyFile();
  const oldLine = cursor.lines[cursor.index] ?? '';
  const paths = stripPrefixes(
    parsePathField(oldLine.slice(4)),
    parsePathField((cursor.lines[cursor.index + 1] ?? '').slice(4)),
    false,
  );
  file.oldPath = paths.old;
  file.newPath = paths.new;
  cursor.index += 2;
  finishFile(file, cursor, oldLine);
  return file;
}

/** Reads the hunks of a section and settles status and line counts. */
function finishFile(file: PatchFile, cursor: Cursor, headerLine: string): void {
  if (file.oldPath === null && file.newPath === null) {
    cursor.errors.push(`Line ${cursor.index}: '${headerLine}' names no file.`);
  }
  if (file.status === 'modified') {
    if (file.oldPath === null) file.status = 'added';
    else if (file.newPath === null) file.status = 'deleted';
    else if (file.oldPath !== file.newPath) file.status = 'renamed';
  }
  while ((cursor.lines[cursor.index] ?? '').startsWith('@@')) {
    cursor.index++;
    const hunk = readHunk(cursor, file);
    if (hunk !== null) file.hunks.push(hunk);
  }
  for (const hunk of file.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith('+')) file.added++;
      else if (line.startsWith('-')) file.deleted++;
    }
  }
}

/** Reads `literal`/`delta` blocks of a `GIT binary patch`, each ending with a blank line. */
function readBinaryPatch(cursor: Cursor): string[] {
  const result: string[] = [];
  while (/^(literal|delta) \d+$/.test(cursor.lines[cursor.index] ?? '')) {
    while (cursor.index < cursor.lines.length && cursor.lines[cursor.index] !== '') {
      result.push(cursor.lines[cursor.index] ?? '');
      cursor.index++;
    }
    result.push('');
    cursor.index++;
  }
  return result;
}

// ---- Hunks ----

/** Reads one hunk whose `@@` header is the line before `cursor.index`; null when unusable. */
function readHunk(cursor: Cursor, file: PatchFile | null): PatchHunk | null {
  const headerIndex = cursor.index - 1;
  const header = cursor.lines[headerIndex] ?? '';
  const match = HUNK_HEADER.exec(header);
  const counts = match === null ? null : { old: Number(match[2] ?? '1'), new: Number(match[4] ?? '1') };
  const body = (counts === null ? null : readCounted(cursor, counts)) ?? readGreedy(cursor);
  if (file === null) return null;
  const where = `Line ${headerIndex + 1} (${patchFilePath(file)})`;
  if (body.length === 0 || body.every((line) => line.startsWith('\\'))) {
    cursor.errors.push(`${where}: hunk '${header}' has no lines.`);
    return null;
  }
  const oldLines = body.filter((line) => line.startsWith(' ') || line.startsWith('-')).length;
  const newLines = body.filter((line) => line.startsWith(' ') || line.startsWith('+')).length;
  if (counts !== null && (counts.old !== oldLines || counts.new !== newLines)) {
    cursor.repairs.add('recounted hunk line counts');
  }
  let oldStart: number;
  let newStart: number;
  const previous = file.hunks.at(-1);
  if (match === null) {
    cursor.repairs.add('added missing hunk line numbers');
    // Not 1: a hunk at old line 1 must match the start of the file; git finds the real place.
    oldStart = previous === undefined ? 2 : previous.oldStart + previous.oldLines + 1;
    newStart =
      oldStart +
      (previous === undefined ? 0 : previous.newStart - previous.oldStart + previous.newLines - previous.oldLines);
  } else {
    oldStart = Number(match[1]);
    newStart = Number(match[3]);
  }
  if (file.oldPath === null) {
    if (oldLines > 0)
      cursor.errors.push(`${where}: a hunk of a new file may only add lines ('+'), but it has context or '-' lines.`);
    oldStart = 0;
    newStart = Math.max(newStart, 1);
  }
  if (file.newPath === null) {
    if (newLines > 0)
      cursor.errors.push(
        `${where}: a hunk of a deleted file may only delete lines ('-'), but it has context or '+' lines.`,
      );
    newStart = 0;
  }
  return { oldStart, oldLines, newStart, newLines, section: match?.[5] ?? '', lines: body };
}

/** Reads exactly the lines the header counts promise, or null when the body disagrees. */
function readCounted(cursor: Cursor, counts: { old: number; new: number }): string[] | null {
  const body: string[] = [];
  let old = 0;
  let added = 0;
  let index = cursor.index;
  while (old < counts.old || added < counts.new) {
    const line = cursor.lines[index];
    if (line === undefined) return null;
    const kind = line === '' ? ' ' : line[0];
    if (kind === ' ') {
      old++;
      added++;
    } else if (kind === '-') old++;
    else if (kind === '+') added++;
    else if (kind !== '\\') return null;
    body.push(line === '' ? ' ' : line);
    index++;
  }
  if (old !== counts.old || added !== counts.new) return null;
  if ((cursor.lines[index] ?? '').startsWith('\\')) body.push(cursor.lines[index++] ?? '');
  // Further +/-/context lines right after mean the header undercounted: read greedily instead.
  const next = cursor.lines[index];
  if (next !== undefined && /^[ +-]/.test(next) && !isSectionStart(cursor.lines, index)) return null;
  if (body.some((line, i) => line === ' ' && cursor.lines[cursor.index + i] === '')) {
    cursor.repairs.add('restored the leading space of blank context lines');
  }
  cursor.index = index;
  return body;
}

/** Reads hunk-looking lines up to the next header; trailing blank lines are dropped. */
function readGreedy(cursor: Cursor): string[] {
  const body: string[] = [];
  while (cursor.index < cursor.lines.length) {
    const line = cursor.lines[cursor.index] ?? '';
    if (isSectionStart(cursor.lines, cursor.index) || !/^([ +\-\\]|$)/.test(line)) break;
    body.push(line);
    cursor.index++;
  }
  while (body.at(-1) === '') body.pop();
  if (body.includes('')) cursor.repairs.add('restored the leading space of blank context lines');
  return body.map((line) => (line === '' ? ' ' : line));
}

function isSectionStart(lines: readonly string[], index: number): boolean {
  const line = lines[index] ?? '';
  return line.startsWith('@@') || line.startsWith('diff --git ') || isFileHeaderAt(lines, index);
}
