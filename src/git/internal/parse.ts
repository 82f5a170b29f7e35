import type { DiffStat, DiffStatFile, LogEntry, RawDiffEntry, StatusEntry, WorktreeInfo } from '../types.js';

/**
 * Parses `git status --porcelain=v1 -z`: entries `XY path\0`, where renames and copies are
 * followed by their original path as a separate `\0`-terminated field.
 */
export function parseStatus(output: string): StatusEntry[] {
  const fields = output.split('\0');
  const entries: StatusEntry[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] ?? '';
    if (field.length < 4) continue;
    const index = field.charAt(0);
    const worktree = field.charAt(1);
    const entry: StatusEntry = { path: field.slice(3), index, worktree };
    if (index === 'R' || index === 'C' || worktree === 'R' || worktree === 'C') {
      entry.origPath = fields[i + 1] ?? '';
      i++;
    }
    entries.push(entry);
  }
  return entries;
}

/** Parses `git worktree list --porcelain -z`: attribute fields, records ended by an empty field. */
export function parseWorktreeList(output: string): WorktreeInfo[] {
  const worktrees: WorktreeInfo[] = [];
  let current: WorktreeInfo | undefined;
  for (const field of output.split('\0')) {
    if (field === '') {
      if (current) worktrees.push(current);
      current = undefined;
      continue;
    }
    const space = field.indexOf(' ');
    const name = space === -1 ? field : field.slice(0, space);
    const value = space === -1 ? '' : field.slice(space + 1);
    if (name === 'worktree') {
      if (current) worktrees.push(current);
      current = {
        path: value,
        head: '',
        branch: null,
        locked: false,
        prunable: false,
      };
    } else if (current) {
      if (name === 'HEAD') current.head = value;
      else if (name === 'branch') current.branch = value.replace(/^refs\/heads\//, '');
      else if (name === 'locked') current.locked = true;
      else if (name === 'prunable') current.prunable = true;
    }
  }
  if (current) worktrees.push(current);
  return worktrees;
}

/** Field separator (NUL) and the log format matching `parseLog`; NUL cannot occur in messages. */
export const LOG_FORMAT = '--format=%H%x00%P%x00%aI%x00%s%x00%b%x00';

/**
 * Parses `git log` output in `LOG_FORMAT`: five NUL-terminated fields per commit, each commit
 * followed by the newline `--format` (tformat) adds.
 */
export function parseLog(output: string): LogEntry[] {
  const fields = output.split('\0');
  const entries: LogEntry[] = [];
  for (let i = 0; i + 4 < fields.length; i += 5) {
    const sha = (fields[i] ?? '').trim();
    if (sha === '') break;
    const parents = (fields[i + 1] ?? '').split(' ').filter((parent) => parent !== '');
    entries.push({
      sha,
      parents,
      date: fields[i + 2] ?? '',
      subject: fields[i + 3] ?? '',
      body: (fields[i + 4] ?? '').trimEnd(),
    });
  }
  return entries;
}

/**
 * Parses `git diff --numstat -z --no-renames`: `added\tdeleted\tpath\0` per file, `-\t-` for
 * binary files.
 */
export function parseNumstat(output: string): DiffStat {
  const files: DiffStatFile[] = [];
  for (const field of output.split('\0')) {
    if (field === '') continue;
    const match = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(field);
    if (!match) continue;
    const [, addedText = '', deletedText = '', path = ''] = match;
    const binary = addedText === '-' || deletedText === '-';
    files.push({
      path,
      binary,
      added: binary ? 0 : Number(addedText),
      deleted: binary ? 0 : Number(deletedText),
    });
  }
  return {
    files,
    added: files.reduce((sum, file) => sum + file.added, 0),
    deleted: files.reduce((sum, file) => sum + file.deleted, 0),
  };
}

/** Splits NUL-separated path output (`--name-only -z`, `ls-files -z`). */
export function splitNul(output: string): string[] {
  return output.split('\0').filter((item) => item !== '');
}

/**
 * Parses `--raw -z` output with renames off: `:<old mode> <new mode> <old> <new> <status>\0<path>\0`
 * per entry. Modes are octal.
 */
export function parseRawDiff(output: string): RawDiffEntry[] {
  const fields = output.split('\0');
  const entries: RawDiffEntry[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const match = /^:([0-7]+) ([0-7]+) ([0-9a-f]+) ([0-9a-f]+) /.exec(fields[i] ?? '');
    const path = fields[i + 1];
    if (!match || path === undefined) continue;
    entries.push({
      path,
      oldMode: parseInt(match[1] ?? '0', 8),
      newMode: parseInt(match[2] ?? '0', 8),
      newObject: match[4] ?? '',
    });
  }
  return entries;
}

/**
 * Parses `git cat-file --batch` output: `<object> <type> <size>\n<content>\n` per object, sizes in
 * bytes. Returns the contents in order, as UTF-8.
 */
export function parseCatFileBatch(output: Buffer): string[] {
  const contents: string[] = [];
  let offset = 0;
  while (offset < output.length) {
    const end = output.indexOf(0x0a, offset);
    if (end === -1) break;
    const header = output.subarray(offset, end).toString('utf8').split(' ');
    const size = Number(header[2]);
    if (!Number.isInteger(size)) break; // `<object> missing`
    contents.push(output.subarray(end + 1, end + 1 + size).toString('utf8'));
    offset = end + 1 + size + 1;
  }
  return contents;
}
