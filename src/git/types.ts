/** Types returned by the `Git` wrapper (src/git/git.ts). */

/** Options shared by every `Git` instance and the static helpers. */
export interface GitOptions {
  /**
   * Environment overrides merged over `process.env` for every git command (a value of
   * `undefined` removes the variable). Tests use it for `HOME` and `GIT_CONFIG_NOSYSTEM`.
   */
  env?: Record<string, string | undefined>;
}

/** One entry of `git status --porcelain=v1 -z`. */
export interface StatusEntry {
  /** Path relative to the repository root (the new path for renames and copies). */
  path: string;
  /** The original path of a rename or copy. */
  origPath?: string;
  /** Index (staged) status letter, e.g. `M`, `A`, `D`, `R`, `?` for untracked, ` ` for none. */
  index: string;
  /** Work-tree status letter, same alphabet as `index`. */
  worktree: string;
  /** Mode of the entry in HEAD and in the index (octal values, 0 when absent); untracked entries have none. */
  headMode?: number;
  indexMode?: number;
  /** The index's object at the path (ordinary and renamed entries). */
  indexObject?: string;
}

export interface GitStatus {
  /** True when nothing is staged, modified or untracked (ignored files do not count). */
  clean: boolean;
  files: StatusEntry[];
}

/** One entry of `git worktree list --porcelain`. */
export interface WorktreeInfo {
  /** Absolute path as git records it. */
  path: string;
  /** Full sha of the worktree's HEAD; empty for a bare repository entry. */
  head: string;
  /** Short branch name (`ratchet/run-1`), or null when detached or bare. */
  branch: string | null;
  locked: boolean;
  /** Git reports the worktree's directory as missing; `pruneWorktrees()` would drop it. */
  prunable: boolean;
}

export interface LogEntry {
  sha: string;
  subject: string;
  /** Message body without the subject, trailing whitespace trimmed. */
  body: string;
  parents: string[];
  /** Author date, strict ISO 8601 (`%aI`). */
  date: string;
}

export interface DiffStatFile {
  path: string;
  /** Lines added; 0 for binary files. */
  added: number;
  /** Lines deleted; 0 for binary files. */
  deleted: number;
  binary: boolean;
}

export interface DiffStat {
  files: DiffStatFile[];
  /** Sum of `added` over text files. */
  added: number;
  /** Sum of `deleted` over text files. */
  deleted: number;
}

/** Result of `git apply --check`. */
export interface ApplyCheckResult {
  ok: boolean;
  /** git's stderr when the patch does not apply; empty when it does. */
  error: string;
}

/** A note attached to a commit, from `git notes list`. */
export interface NoteEntry {
  /** Full sha of the annotated commit. */
  commit: string;
  /** Full sha of the blob holding the note text. */
  noteBlob: string;
}

/** One entry of a raw diff (`--raw`, renames off). */
export interface RawDiffEntry {
  /** Repository-relative path. */
  path: string;
  /** Mode before (`0o100644`, `0o120000`, `0o160000`...); 0 when the path is added. */
  oldMode: number;
  /** Mode after; 0 when the path is deleted. */
  newMode: number;
  /** Object after (a blob, or a commit for a gitlink); all zeros when deleted. */
  newObject: string;
}
