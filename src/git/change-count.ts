import type { Git } from './git.js';
import type { StatusEntry } from './types.js';

/** The uncommitted changes of a work tree, counted as `git status` shows them to the user. */
export interface ChangeCount {
  /** Entries of `git status --porcelain`: an untracked directory is one, ignored files are none. */
  changes: number;
  /** How many of them are untracked. */
  untracked: number;
  /** Their paths, as `git status` names them (an untracked directory ends with `/`). */
  paths: string[];
}

/** Counts `git`'s uncommitted changes, leaving out the entries `except` names. */
export async function countChanges(
  git: Git,
  except: (entry: StatusEntry) => boolean = () => false,
): Promise<ChangeCount> {
  const entries: StatusEntry[] = [];
  for (const entry of (await git.status({ untracked: 'normal' })).files) {
    if (except(entry)) continue;
    if (entry.index === '?' && entry.path.endsWith('/')) {
      // An untracked directory is one entry; an exempt file may be in it (a tasks file written to a
      // new `specs/`): then its files count one by one, the exempt ones not.
      const inside = (await git.status({ untracked: 'all', paths: [entry.path] })).files;
      const counted = inside.filter((file) => !except(file));
      if (counted.length < inside.length) {
        entries.push(...counted);
        continue;
      }
    }
    entries.push(entry);
  }
  return {
    changes: entries.length,
    untracked: entries.filter((entry) => entry.index === '?').length,
    paths: entries.map((entry) => entry.path),
  };
}

/** What the changes are, for a hint: `package-lock.json`, `a.ts, b.ts, c.ts and 4 more`. */
export function namedChanges({ paths }: Pick<ChangeCount, 'paths'>): string {
  const shown = paths.slice(0, 3).join(', ');
  return paths.length > 3 ? `${shown} and ${paths.length - 3} more` : shown;
}

/** `3 uncommitted changes (1 untracked)`, `1 uncommitted change`. */
export function describeChanges({ changes, untracked }: ChangeCount): string {
  const counted = `${changes} uncommitted change${changes === 1 ? '' : 's'}`;
  return untracked === 0 ? counted : `${counted} (${untracked} untracked)`;
}
