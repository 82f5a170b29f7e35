/**
 * Entries of a tree that no run may commit or bring into the user's branch, whoever made them:
 * once merged, each reaches outside the repository or makes git run another repository's
 * programs.
 *
 * - `link-outside`: a symbolic link whose target, resolved link by link inside the tree, is an
 *   absolute path, climbs above the root, or enters a `.git` directory (or loops);
 * - `nested-repository`: a directory holding a `.git` of its own (or a path through `.git`);
 * - `gitlink`: an index or tree entry of mode 160000 (a submodule commit) that the run added or
 *   changed.
 */
export interface UnsafeEntry {
  kind: 'link-outside' | 'nested-repository' | 'gitlink';
  /** Repository-relative, `/`-separated. */
  path: string;
  /** Why, for people and for the model ("leads to /home/me/.ssh", "climbs above the repository"). */
  detail: string;
}

/** One line per entry: `path (what it is: why)`. */
export function describeUnsafeEntries(entries: readonly UnsafeEntry[]): string {
  return entries
    .map((entry) => {
      const what =
        entry.kind === 'link-outside'
          ? 'a symbolic link that leads outside the repository'
          : entry.kind === 'nested-repository'
            ? 'a nested git repository'
            : 'a gitlink (submodule entry)';
      return `${entry.path} (${what}: ${entry.detail})`;
    })
    .join(', ');
}
