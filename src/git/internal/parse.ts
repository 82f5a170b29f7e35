import type { DiffStat, DiffStatFile, LogEntry, RawDiffEntry, StatusEntry, WorktreeInfo } from '../types.js';

/** The letter `--porcelain=v2` writes for "unchanged" (`.`), as v1 writes it (a space). */
function statusLetter(letter: string): string {
  return letter === '.' ? ' ' : letter;
}

/**
 * Parses `git status --porcelain=v2 -z` into the v1 shape (`XY` letters, a space for unchanged)
 * plus the modes v2 adds: an ordinary or renamed entry (`1`, `2`) carries its HEAD and index
 * modes and its index object; an unmerged one (`u`) its index mode as 160000 when any of its stages is a gitlink
 * (else stage 2's), so a gitlink anywhere in the index shows. Untracked entries (`?`) have `??`
 * and no modes; headers (`#`) and ignored entries (`!`) are skipped. A rename or copy (`2`) is
 * followed by its original path as a separate field.
 */
export function parseStatus(output: string): StatusEntry[] {
  const fields = output.split('\0');
  const entries: StatusEntry[] = [];
  const mode = (text: string | undefined): number => parseInt(text ?? '0', 8);
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] ?? '';
    const kind = field.charAt(0);
    if (kind === '?') {
      entries.push({ path: field.slice(2), index: '?', worktree: '?' });
      continue;
    }
    if (kind !== '1' && kind !== '2' && kind !== 'u') continue;
    // `1 XY sub mH mI mW hH hI path`, `2 XY sub mH mI mW hH hI Xscore path`, `u XY sub m1 m2 m3 mW h1 h2 h3 path`.
    const parts = field.split(' ');
    const count = kind === '1' ? 8 : kind === '2' ? 9 : 10;
    const path = parts.slice(count).join(' ');
    const xy = parts[1] ?? '..';
    const entry: StatusEntry = { path, index: statusLetter(xy.charAt(0)), worktree: statusLetter(xy.charAt(1)) };
    if (kind === 'u') {
      const stages = [parts[3], parts[4], parts[5]].map(mode);
      entry.headMode = stages[0] ?? 0;
      entry.indexMode = stages.includes(GITLINK_MODE) ? GITLINK_MODE : (stages[1] ?? 0);
    } else {
      entry.headMode = mode(parts[3]);
      entry.indexMode = mode(parts[4]);
      entry.indexObject = parts[7] ?? '';
    }
    if (kind === '2') {
      entry.origPath = fields[i + 1] ?? '';
      i++;
    }
    entries.push(entry);
  }
  return entries;
}

const GITLINK_MODE = 0o160000;

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
