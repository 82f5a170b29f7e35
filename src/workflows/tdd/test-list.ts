/**
 * `test-list.md`: the feature's behaviours as markdown checkboxes (seed 003). PLAN writes the
 * unchecked items; the orchestrator alone marks an item `[x]`, after its GREEN is accepted.
 */
export const TEST_LIST_FILE = 'test-list.md';

export interface TestListItem {
  /** 0-based line index in the file. */
  line: number;
  text: string;
  done: boolean;
}

const ITEM = /^(\s*[-*+]\s+)\[( |x|X)\]\s+(.*\S)\s*$/;

export function parseTestList(markdown: string): TestListItem[] {
  const items: TestListItem[] = [];
  markdown.split('\n').forEach((raw, line) => {
    const match = ITEM.exec(raw);
    if (match) items.push({ line, text: match[3] ?? '', done: match[2] !== ' ' });
  });
  return items;
}

function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[`*_"'.]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The unchecked item a PLAN answer refers to: an exact match after normalising case, spacing
 * and markdown emphasis, else the only item containing (or contained in) the description.
 */
export function findPendingItem(items: TestListItem[], description: string): TestListItem | undefined {
  const wanted = normalise(description);
  // Text that normalises to nothing ("...", "**") would be contained in every description.
  const pending = items.filter((item) => !item.done && normalise(item.text) !== '');
  if (wanted === '') return undefined;
  const exact = pending.find((item) => normalise(item.text) === wanted);
  if (exact) return exact;
  const partial = pending.filter((item) => {
    const text = normalise(item.text);
    return text.includes(wanted) || wanted.includes(text);
  });
  return partial.length === 1 ? partial[0] : undefined;
}

/** Marks the item on `line` as done; returns the new markdown. */
export function markDone(markdown: string, line: number): string {
  const lines = markdown.split('\n');
  const current = lines[line];
  if (current === undefined) return markdown;
  lines[line] = current.replace(/\[( )\]/, '[x]');
  return lines.join('\n');
}

/** The items' texts, split into done and pending, as the handoff note records them. */
export function progressOf(items: TestListItem[]): { completed: string[]; pending: string[] } {
  return {
    completed: items.filter((item) => item.done).map((item) => item.text),
    pending: items.filter((item) => !item.done).map((item) => item.text),
  };
}
