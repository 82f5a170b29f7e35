/** File paths under the indexed root. */
import { join, sep } from 'node:path';

/** A segment `.` or `..`, an empty one, a leading `/`, a backslash, or nothing: a path `join` would change. */
const NOT_PLAIN = /(?:^|\/)\.{1,2}(?:\/|$)|\/\/|^\/|\\|^$/;

/**
 * `join(root, path)` for `root` as `resolve` gives it and a root-relative `path`: for the plain
 * paths listings give (no `.`, `..` or empty segment), the concatenation itself, without `join`'s
 * normalisation of every character (thousands of files in a cold index).
 */
export function pathUnderRoot(root: string, path: string): string {
  return sep === '/' && root !== '/' && !NOT_PLAIN.test(path) ? `${root}/${path}` : join(root, path);
}
