/** 1-based line numbers of offsets into a text: the line starts, found once, then a binary search per offset. */
export class LineTable {
  private readonly starts: number[] = [0];
  /** Lines as the index counts them: a last line without its `\n` counts, an empty text has none. */
  readonly count: number;

  constructor(text: string) {
    for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1))
      this.starts.push(index + 1);
    this.count = text.length === 0 ? 0 : text.endsWith('\n') ? this.starts.length - 1 : this.starts.length;
  }

  /** The line holding `offset` (a UTF-16 index; `\n` ends a line, as tree-sitter counts rows). */
  line(offset: number): number {
    const { starts } = this;
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((starts[middle] ?? 0) <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  }
}
