/**
 * File modes as patches state them (`new file mode`, `old mode`/`new mode`, `deleted file mode`,
 * the mode at the end of an `index` line). `git apply` reads them as octal numbers with C's
 * `strtoul`, so `120000`, `0120000`, `120777`, `+120000` and ` 120000` all make a symbolic link,
 * and `160000` a gitlink: a mode is judged by its number, never by its spelling.
 */

/** What a stated mode makes. */
export type ModeKind = 'regular' | 'symbolic link' | 'gitlink' | 'other' | 'unreadable';

const TYPE_BITS = 0o170000;

/** The kind of the mode `text` states; anything but plain octal digits is `unreadable`. */
export function modeKind(text: string): ModeKind {
  if (!/^[0-7]+$/.test(text)) return 'unreadable';
  const type = parseInt(text, 8) & TYPE_BITS;
  if (type === 0o100000) return 'regular';
  if (type === 0o120000) return 'symbolic link';
  if (type === 0o160000) return 'gitlink';
  return 'other';
}

/** The mode `git diff` would print for a regular file of mode `text` (executable or not). */
export function canonicalRegularMode(text: string | null): '100644' | '100755' {
  return text !== null && /^[0-7]+$/.test(text) && (parseInt(text, 8) & 0o100) !== 0 ? '100755' : '100644';
}

/** The mode at the end of an `index <old>..<new> <mode>` line, or null when there is none. */
export function indexLineMode(line: string): string | null {
  const match = /^index [0-9a-fA-F]+\.\.[0-9a-fA-F]+ +(\S+)\s*$/.exec(line);
  return match?.[1] ?? null;
}

/** The `index` line without its mode (modes are stated by the mode lines alone). */
export function indexLineWithoutMode(line: string): string {
  return /^index [0-9a-fA-F]+\.\.[0-9a-fA-F]+/.exec(line)?.[0] ?? line;
}
