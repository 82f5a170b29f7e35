/**
 * Issue 11, finding 12: `Read` loaded whole files (a 700 MB file: 1.5 GB of RSS). It reads the
 * requested window only, chunk by chunk, and caps what it returns. The files here are hundreds of
 * megabytes made in an instant: a text head followed by a sparse hole (or one long line), so the
 * old behaviour (readFile, then split) would need the whole size in memory.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeTool } from '../../src/agent/tools/agent-tool.js';
import { readTool } from '../../src/agent/tools/read-tool.js';
import { createTempWorktree, toolContext, type TempWorktree } from './agent-fixtures.js';

const MB = 1024 * 1024;
/** RSS may grow this much during a read (the heap breathes); the file is over 10 times that. */
const RSS_BOUND = 64 * MB;

let tmp: TempWorktree;
beforeEach(async () => {
  tmp = await createTempWorktree();
});
afterEach(async () => {
  await tmp.cleanup();
});

/** `head` at the start of a file of `size` bytes whose rest is a hole, or `filler` repeated. */
async function bigFile(name: string, head: string, size: number, filler?: string): Promise<string> {
  const file = join(tmp.dir, name);
  const handle = await open(file, 'w');
  try {
    await handle.write(head);
    if (filler === undefined) await handle.truncate(size);
    else {
      const block = Buffer.from(filler.repeat(Math.ceil(MB / filler.length)).slice(0, MB));
      for (let written = Buffer.byteLength(head); written < size; written += block.length) await handle.write(block);
    }
  } finally {
    await handle.close();
  }
  return file;
}

async function measured(input: Record<string, unknown>): Promise<{ output: string; isError: boolean; grewBy: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  try {
    const result = await executeTool(readTool, input, toolContext(tmp.dir));
    peak = Math.max(peak, process.memoryUsage().rss);
    return { ...result, grewBy: peak - before };
  } finally {
    clearInterval(sampler);
  }
}

const head = (lines: number): string =>
  Array.from({ length: lines }, (_, index) => `line ${index + 1} of the head`).join('\n') + '\n';

describe('Read on files of hundreds of megabytes', () => {
  it('returns the requested window of a 700 MB file without loading it', async () => {
    await bigFile('huge.log', head(5000), 700 * MB);
    const result = await measured({ file_path: 'huge.log', offset: 4001, limit: 3 });
    expect(result.isError).toBe(false);
    expect(result.output).toBe(
      [
        '  4001\tline 4001 of the head',
        '  4002\tline 4002 of the head',
        '  4003\tline 4003 of the head',
        `(Showing lines 4001-4003 of a file of ${700 * MB} bytes. Use offset 4004 to read more.)`,
      ].join('\n'),
    );
    expect(result.grewBy).toBeLessThan(RSS_BOUND);
  });

  it('cuts a 300 MB line, reading on to the next line without keeping it', async () => {
    const file = await bigFile('one-line.min.js', 'var a=1;', 300 * MB, 'abcdefghij');
    const tail = await open(file, 'a');
    await tail.write('\nthe second line\n');
    await tail.close();
    const result = await measured({ file_path: 'one-line.min.js', limit: 2 });
    const [first, second] = result.output.split('\n');
    expect(first).toBe(`     1\tvar a=1;${'abcdefghij'.repeat(200).slice(0, 1992)}`);
    expect(second).toBe('     2\tthe second line');
    expect(result.output).toContain('1 line was longer than 2000 characters and cut');
    expect(result.grewBy).toBeLessThan(RSS_BOUND);
  });

  it('stops at about 100 000 characters and says where to go on', async () => {
    const wide = Array.from({ length: 200 }, (_, index) => `${index + 1} ${'w'.repeat(1500)}`).join('\n');
    await tmp.write({ 'wide.txt': `${wide}\n` });
    const result = await executeTool(readTool, { file_path: 'wide.txt' }, toolContext(tmp.dir));
    const shown = result.output.split('\n').filter((line) => /^\s+\d+\t/.test(line));
    expect(shown.length).toBeGreaterThan(60);
    expect(shown.length).toBeLessThan(200);
    expect(result.output.length).toBeLessThan(110_000);
    expect(result.output).toContain(
      `(Output cut at 100000 characters: showing lines 1-${shown.length} of 200. Use offset ${shown.length + 1} to read more.)`,
    );
  });
});
