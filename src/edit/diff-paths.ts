/** Paths in unified diffs: `---`/`+++` fields, `diff --git` lines, prefixes, git's C quoting. */

const PREFIX_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['a/', 'b/'],
  ['i/', 'w/'],
  ['c/', 'w/'],
  ['c/', 'i/'],
  ['o/', 'w/'],
  ['w/', 'i/'],
];

/** A `---`/`+++` path field: unquoted, timestamp after a tab removed; null for /dev/null. */
export function parsePathField(field: string): string | null {
  const path = field.startsWith('"') ? unquote(field) : field.replace(/\t.*$/, '').trimEnd();
  return path === '/dev/null' ? null : path;
}

/**
 * Removes `a/` `b/` style prefixes. In git sections they are expected (absent only with
 * `--no-prefix`); in plain diffs they are removed when both sides carry a known pair, when the
 * other side is /dev/null, or when the old path is the new path with `a/` in front.
 */
export function stripPrefixes(
  old: string | null,
  next: string | null,
  git: boolean,
): { old: string | null; new: string | null } {
  for (const [from, to] of PREFIX_PAIRS) {
    const oldOk = old === null || old.startsWith(from);
    const newOk = next === null || next.startsWith(to);
    if (
      oldOk &&
      newOk &&
      (old !== null || next !== null) &&
      (git || from === 'a/' || (old !== null && next !== null))
    ) {
      return { old: old?.slice(from.length) ?? null, new: next?.slice(to.length) ?? null };
    }
  }
  if (old !== null && next !== null && old === `a/${next}`) return { old: next, new: next };
  return { old, new: next };
}

/** Paths of a `diff --git <a> <b>` line, used when no `---`/`+++` or rename lines follow. */
export function parseGitHeaderPaths(rest: string): { old: string | null; new: string | null } {
  let old: string;
  let next: string;
  if (rest.startsWith('"')) {
    const end = closingQuote(rest);
    old = unquote(rest.slice(0, end + 1));
    next = unquote(rest.slice(end + 2).trim());
  } else if (rest.includes(' "')) {
    const split = rest.indexOf(' "');
    old = rest.slice(0, split);
    next = unquote(rest.slice(split + 1));
  } else {
    const middle = (rest.length - 1) / 2;
    const left = rest.slice(0, middle);
    const right = rest.slice(middle + 1);
    if (Number.isInteger(middle) && rest[middle] === ' ' && left.slice(2) === right.slice(2)) {
      old = left;
      next = right;
    } else {
      const split = rest.indexOf(' b/');
      old = split >= 0 ? rest.slice(0, split) : rest.slice(0, rest.indexOf(' '));
      next = split >= 0 ? rest.slice(split + 1) : rest.slice(rest.indexOf(' ') + 1);
    }
  }
  return stripPrefixes(old, next, true);
}

function closingQuote(text: string): number {
  for (let i = 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return text.length - 1;
}

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '"': '"',
  '\\': '\\',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
};

/** Undoes git's C-style path quoting (octal escapes are UTF-8 bytes). */
export function unquote(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('"')) return trimmed;
  const inner = trimmed.slice(1, closingQuote(trimmed));
  const bytes: number[] = [];
  for (let i = 0; i < inner.length; i++) {
    const char = inner[i] ?? '';
    if (char !== '\\') {
      bytes.push(...Buffer.from(char, 'utf8'));
      continue;
    }
    const octal = /^[0-7]{3}/.exec(inner.slice(i + 1));
    if (octal !== null) {
      bytes.push(parseInt(octal[0], 8));
      i += 3;
    } else {
      const next = inner[i + 1] ?? '';
      bytes.push(...Buffer.from(ESCAPES[next] ?? next, 'utf8'));
      i++;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Quotes a prefixed path the way git does when it holds quotes, backslashes or controls. */
export function quote(path: string): string {
  if (!/["\\\x00-\x1f\x7f]/.test(path)) return path;
  const body = [...path]
    .map((char) => {
      const code = char.charCodeAt(0);
      if (char === '"' || char === '\\') return `\\${char}`;
      if (char === '\n') return '\\n';
      if (char === '\t') return '\\t';
      if (code < 0x20 || code === 0x7f) return `\\${code.toString(8).padStart(3, '0')}`;
      return char;
    })
    .join('');
  return `"${body}"`;
}
