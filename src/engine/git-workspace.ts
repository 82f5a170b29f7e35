import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RatchetError } from '../core/errors.js';
import { NOTES_REF, type HandoffState } from '../core/handoff.js';
import type { Git } from '../git/git.js';
import type { Workspace } from '../workflows/tdd/ports.js';

function inside(root: string, path: string): string {
  const full = join(root, path);
  if (!full.startsWith(`${root}/`)) throw new RatchetError('internal', `Path escapes the worktree: ${path}`);
  return full;
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
      const sha = await track(git.commitAllWithNote(message, { allowEmpty: options.allowEmpty ?? false, noVerify: true }, note));
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
      const uncommitted = status.files.flatMap((file) => (file.origPath === undefined ? [file.path] : [file.path, file.origPath]));
      // Since HEAD itself, status says it all: one git process instead of two.
      if (commit === (await (head ??= git.head()))) return [...new Set(uncommitted)].sort();
      const committed = await git.changedFiles(commit);
      return [...new Set([...committed, ...uncommitted])].sort();
    },
    writeNote: (commit, state: HandoffState) => git.writeNote(NOTES_REF, commit, `${JSON.stringify(state, null, 2)}\n`),
    async readFile(path) {
      try {
        return await readFile(inside(root, path), 'utf8');
      } catch {
        return null;
      }
    },
    readFileAt: (commit, path) => git.showFile(commit, path),
    async writeFile(path, text) {
      const full = inside(root, path);
      await mkdir(dirname(full), { recursive: true });
      await writeFile(full, text);
    },
    async removeFile(path) {
      await rm(inside(root, path), { force: true });
    },
  };
}
