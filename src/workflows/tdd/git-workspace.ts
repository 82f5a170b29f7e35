import { lstat, mkdir, readFile, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import { redactValue, type Redactor } from '../../core/redact.js';
import { NOTES_REF, type HandoffState } from '../../core/handoff.js';
import { describeUnsafeEntries, type UnsafeEntry } from '../../core/unsafe-entry.js';
import type { Git, ObjectReader } from '../../git/git.js';
import type { GitStatus } from '../../git/types.js';
import { replaceFile } from '../../agent/tools/replace-file.js';
import { unsafeUncommitted } from '../../git/unsafe-entries.js';
import type { Workspace } from './ports.js';

function inside(root: string, path: string): string {
  const full = join(root, path);
  if (!full.startsWith(`${root}/`)) throw new RatchetError('internal', `Path escapes the worktree: ${path}`);
  return full;
}

/** The symbolic links among the directories leading to `path` (inside `root`), outermost first. */
async function linkedParents(root: string, path: string): Promise<string[]> {
  const links: string[] = [];
  let current = root;
  for (const part of relative(root, dirname(inside(root, path)))
    .split(sep)
    .filter(Boolean)) {
    current = join(current, part);
    const stats = await lstat(current).catch(() => null);
    if (stats === null) break;
    if (stats.isSymbolicLink()) links.push(current);
  }
  return links;
}

/**
 * The orchestrator never reads or writes through a symbolic link that an agent may have planted
 * in the worktree (`src -> /home/me/project/src`): reading would put that file in a prompt,
 * writing or deleting would change it. Links on the way are removed first (the link only: what
 * it points to is untouched), and a file that is itself a link is replaced, not followed.
 */
async function unlinkParents(root: string, path: string): Promise<void> {
  for (const link of await linkedParents(root, path)) await rm(link, { force: true });
}

/** A `Workspace` over a git worktree, told when something else may have changed its files. */
export interface GitWorkspace extends Workspace {
  /**
   * Something besides this object may have changed the work tree (an agent's stage, a command
   * run there): with `statusUntilChanged`, the next question about uncommitted changes asks git.
   */
  readonly changed: () => void;
}

export interface GitWorkspaceOptions {
  /** The worktree's HEAD, when its creator knows it (not asked of git again). */
  head?: string;
  /**
   * Reads `git status` once until the work tree may have changed, instead of once per question:
   * for a caller that calls `changed()` before and after everything else that can change it (the
   * tasks pipeline wraps its agents and its verifier so). Every change made through this object
   * counts too. Without it, every question runs `git status`.
   */
  statusUntilChanged?: boolean;
  /**
   * Where `readFileAt` reads files of commits named by their ids (one `git cat-file --batch` for
   * the workspace's life, its caller's to close), instead of a git process per file.
   */
  objects?: ObjectReader;
}

const COMMIT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * The TDD workflow's `Workspace` over a git worktree. `redact` is applied to every commit message
 * and handoff note it writes (subjects and notes quote the test names the model wrote).
 */
export function createGitWorkspace(
  root: string,
  git: Git,
  redact: Redactor = (text) => text,
  options: GitWorkspaceOptions = {},
): GitWorkspace {
  const noteText = (state: HandoffState): string => `${JSON.stringify(redactValue(state, redact), null, 2)}\n`;
  // HEAD moves only through this object between agent stages (the workflow calls `refresh()`
  // after each), so it is asked of git once per change instead of before every step.
  let head: Promise<string> | undefined = options.head === undefined ? undefined : Promise.resolve(options.head);
  // The uncommitted changes as git last said, while nothing may have changed them (see `statusUntilChanged`).
  let status: Promise<GitStatus> | undefined;
  /**
   * Paths this object wrote or removed itself since `status` was read: `status` no longer says
   * exactly what changed, but it and these paths still name every path that may hold something
   * new (these writes make regular files and directories only, taking links on the way out).
   */
  const written = new Set<string>();
  const keeps = options.statusUntilChanged === true;
  const remember = (read: Promise<GitStatus>): void => {
    status = read;
    written.clear();
    // A failed read is not kept.
    read.then(undefined, () => {
      if (status === read) status = undefined;
    });
  };
  /** The uncommitted changes, exactly. */
  const readStatus = (): Promise<GitStatus> => {
    if (!keeps) return git.status({ modes: true });
    if (status !== undefined && written.size === 0) return status;
    const read = git.status({ modes: true });
    remember(read);
    return read;
  };
  /**
   * A status naming every path that may hold an uncommitted change, for the checks before a
   * commit: the one kept, with the paths written since as modified entries (a superset: a file
   * written back as it was is not a change), or git's.
   */
  const statusForChecks = async (): Promise<GitStatus> => {
    if (!keeps || status === undefined || written.size === 0) return readStatus();
    const known = await status;
    const listed = new Set(known.files.map((file) => file.path));
    const added = [...written].filter((path) => !listed.has(path)).map((path) => ({ path, index: ' ', worktree: 'M' }));
    return { clean: known.files.length + added.length === 0, files: [...known.files, ...added] };
  };
  const changed = (): void => {
    status = undefined;
    written.clear();
  };
  /**
   * Runs an operation that changes files (and with `movesHead`, HEAD): what it changes is asked
   * of git again afterwards.
   */
  const touch = async <T>(operation: () => Promise<T>, movesHead = false): Promise<T> => {
    const forget = (): void => {
      if (movesHead) head = undefined;
      changed();
    };
    forget();
    try {
      return await operation();
    } finally {
      forget();
    }
  };
  /** Runs an operation that changes the work tree and HEAD. */
  const track = <T>(operation: () => Promise<T>): Promise<T> => touch(operation, true);
  /**
   * Runs an operation that writes or removes `path` only (a regular file, and directories on its
   * way): a kept status stays, with `path` noted beside it (see `written`).
   */
  const write = async (path: string, operation: () => Promise<void>): Promise<void> => {
    if (!keeps || status === undefined) return touch(operation);
    // Noted before it starts: a write that fails half-way may have changed the path too.
    written.add(path);
    await operation();
  };
  return {
    root,
    changed,
    head: () => (head ??= git.head()),
    refresh: () => {
      head = undefined;
      changed();
    },
    async checkpoint(subject, options = {}) {
      // What the gates ran since the stage was checked (tests are the model's code too) may have
      // made a link or a repository; `git add` would stage it, and enter it if it is a gitlink.
      const unsafe = await unsafeUncommitted(git, undefined, await statusForChecks());
      if (unsafe.length > 0) {
        throw new RatchetError('gate-failed', `Refusing to commit "${subject}": ${describeUnsafeEntries(unsafe)}.`, {
          hint: 'Something the tests ran made these. Remove them (and whatever made them), then `ratchet resume`.',
          details: { unsafe },
        });
      }
      const message = redact(options.body ? `${subject}\n\n${options.body}` : subject);
      const note = options.note ? { ref: NOTES_REF, text: noteText(options.note) } : undefined;
      const allowEmpty = options.allowEmpty ?? false;
      let after: GitStatus | undefined;
      const sha = await track(async () => {
        if (!keeps) return git.commitAllWithNote(message, { allowEmpty }, note);
        // The status of the tree the commit left comes from the same script (no process more).
        const result = await git.commitAllWithNoteAndStatus(message, { allowEmpty }, note);
        after = result.status;
        return result.commit;
      });
      if (sha === null) throw new RatchetError('git', `Nothing to commit for "${subject}"`);
      head = Promise.resolve(sha);
      if (after !== undefined) remember(Promise.resolve(after));
      return sha;
    },
    hasChanges: async () => (await readStatus()).files.length > 0,
    discardChanges: () =>
      touch(async () => {
        await git.resetHard('HEAD');
        await git.clean();
      }),
    resetTo: (commit) =>
      track(async () => {
        await git.resetHard(commit);
        await git.clean();
      }),
    uncommitTo: (commit) => track(() => git.resetSoft(commit)),
    async changedFilesSince(commit) {
      const uncommitted = (await readStatus()).files.flatMap((file) =>
        file.origPath === undefined ? [file.path] : [file.path, file.origPath],
      );
      // Since HEAD itself, status says it all: one git process instead of two.
      if (commit === (await (head ??= git.head()))) return [...new Set(uncommitted)].sort();
      const committed = await git.changedFiles(commit);
      return [...new Set([...committed, ...uncommitted])].sort();
    },
    unsafeEntries: (paths) => unsafeUncommitted(git, paths),
    removeUnsafeEntries: (entries, commit) => touch(() => removeUnsafe(entries, commit)),
    writeNote: (commit, state: HandoffState) => git.writeNote(NOTES_REF, commit, noteText(state)),
    async readFile(path) {
      try {
        const full = inside(root, path);
        if ((await linkedParents(root, path)).length > 0 || (await lstat(full)).isSymbolicLink()) return null;
        return await readFile(full, 'utf8');
      } catch {
        return null;
      }
    },
    async readFileAt(commit, path) {
      const { objects } = options;
      // A ref is resolved by a git process of its own: the reader's git may keep what it read of refs.
      if (objects === undefined || !COMMIT_ID.test(commit)) return git.showFile(commit, path);
      const object = await objects.read(`${commit}:${path.replace(/^\.\//, '')}`);
      // As `showFile`: a path missing there, or a directory (a tree), has no content.
      return object?.type === 'blob' ? object.content.toString('utf8') : null;
    },
    writeFile: (path, text) =>
      write(path, async () => {
        const full = inside(root, path);
        await unlinkParents(root, path);
        await mkdir(dirname(full), { recursive: true });
        if ((await lstat(full).catch(() => null))?.isSymbolicLink()) await rm(full, { force: true });
        // A new file renamed into place: a hard link planted to another file keeps that file as it was.
        await replaceFile(full, text);
      }),
    removeFile: (path) =>
      write(path, async () => {
        await unlinkParents(root, path);
        await rm(inside(root, path), { force: true });
      }),
  };

  async function removeUnsafe(entries: readonly UnsafeEntry[], commit: string): Promise<void> {
    const gitlinks = entries.filter((entry) => entry.kind === 'gitlink').map((entry) => entry.path);
    // Back to the commit's index entries: the gitlink goes (or is the commit's again).
    await git.resetPaths(commit, gitlinks);
    // A link, or a nested repository's whole directory (reached without a link on the way,
    // and removed without following one): nothing of it stays.
    const removed = entries.filter((entry) => entry.kind !== 'gitlink').map((entry) => entry.path);
    for (const path of removed) await rm(inside(root, path), { recursive: true, force: true });
    // What the commit had at those paths comes back as it was (files, links, directories).
    await git.restorePaths(commit, await git.existingPaths(commit, removed));
  }
}
