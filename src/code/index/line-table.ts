/**
 * Line starts of every text a table is made for, in one buffer reused from file to file: a cold
 * index makes a table per file (hundreds of thousands of lines for 6,000 files), and an array of
 * its own per file was the index's largest allocation after the texts themselves (measured on
 * bench/index.ts's corpus). A table is therefore valid only until the next one is made in this
 * thread: it is made and read within one synchronous extraction, and throws if read after.
 */
let starts = new Int32Array(64 * 1024);
/** How many tables this thread has made: the one whose `made` equals it owns `starts`. */
let made = 0;

/** 1-based line numbers of offsets into a text: the line starts, found once, then a binary search per offset. */
export class LineTable {
  /** Lines as the index counts them: a last line without its `\n` counts, an empty text has none. */
  readonly count: number;
  private readonly length: number;
  private readonly made: number;

  constructor(text: string) {
    let length = 1;
    starts[0] = 0;
    for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) {
      if (length === starts.length) {
        const grown = new Int32Array(starts.length * 2);
        grown.set(starts);
        starts = grown;
      }
      starts[length++] = index + 1;
    }
    this.length = length;
    this.made = ++made;
    this.count = text.length === 0 ? 0 : text.endsWith('\n') ? length - 1 : length;
  }

  /** The line holding `offset` (a UTF-16 index; `\n` ends a line, as tree-sitter counts rows). */
  line(offset: number): number {
    if (this.made !== made) throw new Error('A line table was read after the next one was made');
    let low = 0;
    let high = this.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((starts[middle] ?? 0) <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  }
}
