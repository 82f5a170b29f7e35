/**
 * The repository's git configuration as the sandbox sees it. The agent's git reads the checkout's
 * git directory (the worktree's `.git` file points into it), but not its `config` as written:
 * remote URLs may carry credentials, `http.<url>.extraheader` a token, `credential.*` a helper,
 * `url.<base>.insteadOf` a URL with a token, `include.path` a file elsewhere. What the sandbox
 * gets instead is built from an allowlist of keys that git needs to read the repository.
 */

/** Keys kept as they are (lower case, as `git config --list` prints them). */
const KEPT = new Set([
  'core.repositoryformatversion',
  'core.bare',
  'core.filemode',
  'core.symlinks',
  'core.ignorecase',
  'core.precomposeunicode',
  'core.logallrefupdates',
  'core.autocrlf',
  'core.eol',
  'core.safecrlf',
  'core.quotepath',
  'core.abbrev',
  'init.defaultbranch',
]);

/** Keys of subsections kept (`remote.<name>.fetch`, `branch.<name>.merge`...). */
const KEPT_IN_SUBSECTION: Record<string, ReadonlySet<string>> = {
  remote: new Set(['url', 'pushurl', 'fetch']),
  branch: new Set(['remote', 'merge']),
};

/** A URL without its user information (`https://user:token@host/x` -> `https://host/x`). */
function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
}

function quote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;
}

/**
 * The sandbox's copy of a git configuration, from `git config --list -z` output of the real one
 * (`key\nvalue\0` entries): only the allowlisted keys, remote URLs without credentials.
 */
export function sanitizeGitConfig(listing: string): string {
  const sections = new Map<string, string[]>();
  for (const entry of listing.split('\0')) {
    if (entry === '') continue;
    const newline = entry.indexOf('\n');
    const key = newline < 0 ? entry : entry.slice(0, newline);
    const value = newline < 0 ? 'true' : entry.slice(newline + 1);
    const first = key.indexOf('.');
    const last = key.lastIndexOf('.');
    if (first < 0) continue;
    const section = key.slice(0, first).toLowerCase();
    const name = key.slice(last + 1).toLowerCase();
    const subsection = first === last ? undefined : key.slice(first + 1, last);
    const kept =
      subsection === undefined
        ? KEPT.has(`${section}.${name}`) || section === 'extensions'
        : (KEPT_IN_SUBSECTION[section]?.has(name) ?? false);
    if (!kept) continue;
    const shown = section === 'remote' && (name === 'url' || name === 'pushurl') ? withoutCredentials(value) : value;
    const header = subsection === undefined ? `[${section}]` : `[${section} ${quote(subsection)}]`;
    const lines = sections.get(header) ?? [];
    lines.push(`\t${name} = ${quote(shown)}`);
    sections.set(header, lines);
  }
  return [...sections].map(([header, lines]) => `${header}\n${lines.join('\n')}\n`).join('');
}
