/**
 * Cuts `text` to about `maxChars` characters keeping its head and tail (where commands print
 * what they are doing and how they ended), with a marker saying how much was left out.
 */
export function truncateMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const head = Math.floor(maxChars / 2);
  const tail = maxChars - head;
  const omitted = text.length - head - tail;
  return `${text.slice(0, head)}\n\n... [${omitted} characters omitted] ...\n\n${text.slice(text.length - tail)}`;
}

/** Keeps the first `maxLines` lines, saying how many were left out. */
export function capLines(lines: readonly string[], maxLines: number, hint: string): string {
  if (lines.length <= maxLines) return lines.join('\n');
  const omitted = lines.length - maxLines;
  return `${lines.slice(0, maxLines).join('\n')}\n(${omitted} more not shown; ${hint})`;
}
