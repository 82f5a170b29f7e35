export { Git } from './git.js';
export { NOTES_HINT } from './internal/notes.js';
export { REPO_LOCK_FILE, acquireRepoLock, readRepoLock } from './repo-lock.js';
export type { RepoLock, RepoLockInfo } from './repo-lock.js';
export type {
  ApplyCheckResult,
  DiffStat,
  DiffStatFile,
  GitOptions,
  GitStatus,
  LogEntry,
  NoteEntry,
  StatusEntry,
  WorktreeInfo,
} from './types.js';
