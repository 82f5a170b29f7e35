import { lstat, mkdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix, relative, sep } from 'node:path';
import { RatchetError } from '../core/errors.js';
import { NOTES_REF, type HandoffState } from '../core/handoff.js';
import type { Git } from '../git/git.js';
import type { Workspace } from '../workflows/tdd/ports.js';

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

/**
 * Whether a symbolic link at `linkPath` (relative to the worktree) with this target leads
 * outside the worktree: an absolute target always does (once merged it names a place on the
 * user's machine, the worktree's own path included), a relative one when it climbs past the root.
 */
export function linkLeadsOutside(linkPath: string, target: string): boolean {
  if (isAbsolute(target) || /^[A-Za-z]:[\\/]/.test(target)) return true;
  const resolved = posix.normalize(
    posix.join(posix.dirname(linkPath.split(sep).join('/')), target.split('\\').join('/')),
  );
  return resolved === '..' || resolved.startsWith('../');
}

/** The TDD workflow's `Workspace` over a git worktree. */
export function createGitWorkspace(root: string, git: Git): Workspace {
  // HEAD moves only through this object between agent stages (the workflow calls `refresh()`
  // after each), so it is asked of git once per change instead of before every step.
  let head: Promise<string> | undefined;
  const track = <T>(operation: Promise<T>): Promise<T> => {
    head = undefined;
    return operation;
  };
  return {
    root,
    head: () => (head ??= git.head()),
    refresh: () => {
      head = undefined;
    },
    async checkpoint(subject, options = {}) {
      const message = options.body ? `${subject}\n\n${options.body}` : subject;
      // Our gates are the verification; user hooks (which may rewrite files) do not run on checkpoints.
      const note = options.note ? { ref: NOTES_REF, text: `${JSON.stringify(options.note, null, 2)}\n` } : undefined;
      const sha = await track(
        git.commitAllWithNote(message, { allowEmpty: options.allowEmpty ?? false }, note),
      );
      if (sha === null) throw new RatchetError('git', `Nothing to commit for "${subject}"`);
      head = Promise.resolve(sha);
      return sha;
    },
    hasChanges: () => git.hasChanges(),
    async discardChanges() {
      await git.resetHard('HEAD');
      await git.clean();
    },
    async resetTo(commit) {
      await track(git.resetHard(commit));
      await git.clean();
    },
    uncommitTo: (commit) => track(git.resetSoft(commit)),
    async changedFilesSince(commit) {
      const status = await git.status();
      const uncommitted = status.files.flatMap((file) =>
        file.origPath === undefined ? [file.path] : [file.path, file.origPath],
      );
      // Since HEAD itself, status says it all: one git process instead of two.
      if (commit === (await (head ??= git.head()))) return [...new Set(uncommitted)].sort();
      const committed = await git.changedFiles(commit);
      return [...new Set([...committed, ...uncommitted])].sort();
    },
    async escapingLinks(paths) {
      const found: string[] = [];
      for (const path of paths) {
        const full = join(root, path);
        if (!full.startsWith(`${root}/`)) continue;
        const stats = await lstat(full).catch(() => null);
        if (stats?.isSymbolicLink() && linkLeadsOutside(path, await readlink(full))) found.push(path);
      }
      return found;
    },
    writeNote: (commit, state: HandoffState) => git.writeNote(NOTES_REF, commit, `${JSON.stringify(state, null, 2)}\n`),
    async readFile(path) {
      try {
        const full = inside(root, path);
        if ((await linkedParents(root, path)).length > 0 || (await lstat(full)).isSymbolicLink()) return null;
        return await readFile(full, 'utf8');
      } catch {
        return null;
      }
    },
    readFileAt: (commit, path) => git.showFile(commit, path),
    async writeFile(path, text) {
      const full = inside(root, path);
      await unlinkParents(root, path);
      await mkdir(dirname(full), { recursive: true });
      if ((await lstat(full).catch(() => null))?.isSymbolicLink()) await rm(full, { force: true });
      await writeFile(full, text);
    },
    async removeFile(path) {
      await unlinkParents(root, path);
      await rm(inside(root, path), { force: true });
    },
  };
}
