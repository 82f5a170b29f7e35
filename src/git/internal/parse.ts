import type { DiffStat, DiffStatFile, LogEntry, StatusEntry, WorktreeInfo } from '../types.js';

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
