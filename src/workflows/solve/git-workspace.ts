import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RatchetError } from '../../core/errors.js';
import { describeUnsafeEntries } from '../../core/unsafe-entry.js';
import { applyEditsToDirectory } from '../../edit/apply-search-replace.js';
import { pathEscapeReason } from '../../edit/patch-paths.js';
import type { Git } from '../../git/git.js';
import { unsafeUncommitted } from '../../git/unsafe-entries.js';
import type { SolveWorkspace } from './ports.js';

/** Where a solve run keeps its progress: a note on each checkpoint (JSON, `SolveProgress`). */
export const SOLVE_NOTES_REF = 'refs/notes/ratchet-solve';

/**
 * Reads a file of the worktree without following a symbolic link on the way: what the tests
 * left in the tree is the model's doing, and a link could put a file from outside in a prompt.
 */
async function readInside(root: string, path: string): Promise<string | null> {
  if (pathEscapeReason(path) !== null) return null;
  const segments = path.split('/');
  for (let depth = 1; depth <= segments.length; depth++) {
    const stats = await lstat(join(root, ...segments.slice(0, depth))).catch(() => null);
    if (stats === null || stats.isSymbolicLink()) return null;
    if (depth === segments.length && !stats.isFile()) return null;
  }
  return readFile(join(root, path), 'utf8').catch(() => null);
}

/** The solve workflow's worktree port over git. */
export function createSolveGitWorkspace(root: string, git: Git): SolveWorkspace {
  return {
    root,
    head: () => git.head(),
    readFile: (path) => readInside(root, path),
    async applyEdits(blocks) {
      const result = await applyEditsToDirectory(root, blocks);
      return result.ok
        ? { ok: true, files: result.files }
        : { ok: false, failures: result.failures.map((f) => f.message) };
    },
    async discardChanges() {
      await git.resetHard('HEAD');
      await git.clean();
    },
    diffSince: (commit) => git.diff(commit),
    async checkpoint(subject, progress) {
      const unsafe = await unsafeUncommitted(git);
      if (unsafe.length > 0) {
        throw new RatchetError('gate-failed', `Refusing to commit "${subject}": ${describeUnsafeEntries(unsafe)}.`, {
          hint: 'Something the tests ran left these in the worktree; remove them, then resume the run.',
          details: { unsafe },
        });
      }
      const sha = await git.commitAllWithNote(
        subject,
        { allowEmpty: true },
        { ref: SOLVE_NOTES_REF, text: `${JSON.stringify(progress)}\n` },
      );
      if (sha === null) throw new RatchetError('internal', `No commit was made for "${subject}".`);
      return sha;
    },
  };
}
