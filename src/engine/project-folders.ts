import { createHash } from 'node:crypto';
import { basename, join, relative, sep } from 'node:path';
import { Git } from '../git/git.js';

/**
 * Where `refactor plan` and `index` keep the index cache: `.ratchet/index` of a git target, kept
 * out of git through `.git/info/exclude` like every `.ratchet/` folder, so the checkout stays
 * clean; for any other directory, which Ratchet never writes into, a folder of its own under
 * `$RATCHET_HOME/index/` (named after the directory's path), so the next index is incremental.
 */
export async function indexCacheDir(target: string, isGit: boolean, home: string): Promise<string> {
  if (!isGit) return homeFolderOf(home, 'index', target);
  await excludeRatchetDir(target);
  return join(target, '.ratchet', 'index');
}

/**
 * A folder of its own under `$RATCHET_HOME/<kind>/` for a directory that is not a repository,
 * named after its path (`<name>-<sha256 prefix>`): two directories with the same name, such as
 * `~/a/app` and `~/b/app`, never share (or overwrite) each other's files.
 */
export function homeFolderOf(home: string, kind: string, target: string): string {
  return join(home, kind, `${basename(target)}-${createHash('sha256').update(target).digest('hex').slice(0, 12)}`);
}

/** Adds `<target>/.ratchet/` to the repository's `.git/info/exclude`. */
export async function excludeRatchetDir(target: string): Promise<void> {
  const git = new Git(target);
  const inRepo = relative(await git.root(), target)
    .split(sep)
    .join('/');
  await git.addInfoExclude([inRepo ? `/${inRepo}/.ratchet/` : '/.ratchet/']);
}
