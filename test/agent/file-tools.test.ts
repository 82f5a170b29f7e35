import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeTool, toToolDefinition } from '../../src/agent/tools/agent-tool.js';
import { editTool } from '../../src/agent/tools/edit-tool.js';
import { readTool } from '../../src/agent/tools/read-tool.js';
import { writeTool } from '../../src/agent/tools/write-tool.js';
import { createTempWorktree, toolContext, type TempWorktree } from './agent-fixtures.js';

let tmp: TempWorktree;

beforeEach(async () => {
  tmp = await createTempWorktree();
});
afterEach(async () => {
  await tmp.cleanup();
});

const lines = (count: number): string =>
  Array.from({ length: count }, (_, index) => `line ${index + 1}`).join('\n') + '\n';

describe('Read', () => {
  it('numbers lines like cat -n', async () => {
    await tmp.write({ 'a.txt': 'alpha\nbeta\n' });
    const result = await executeTool(readTool, { file_path: 'a.txt' }, toolContext(tmp.dir));
    expect(result).toEqual({ output: '     1\talpha\n     2\tbeta', isError: false });
  });

  it('reads from a 1-based offset with a limit and says how to continue', async () => {
    await tmp.write({ 'a.txt': lines(10) });
    const result = await executeTool(readTool, { file_path: 'a.txt', offset: 3, limit: 2 }, toolContext(tmp.dir));
    expect(result.isError).toBe(false);
    expect(result.output.split('\n').slice(0, 2)).toEqual(['     3\tline 3', '     4\tline 4']);
    expect(result.output).toContain('Showing lines 3-4 of 10. Use offset 5 to read more.');
  });

  it('reads at most 2000 lines by default and cuts long lines', async () => {
    await tmp.write({ 'big.txt': lines(2500), 'wide.txt': `${'x'.repeat(2500)}\nshort\n` });
    const big = await executeTool(readTool, { file_path: 'big.txt' }, toolContext(tmp.dir));
    expect(big.output).toContain('  2000\tline 2000');
    expect(big.output).not.toContain('line 2001');
    const wide = await executeTool(readTool, { file_path: 'wide.txt' }, toolContext(tmp.dir));
    expect(wide.output.split('\n')[0]).toBe(`     1\t${'x'.repeat(2000)}`);
    expect(wide.output).toContain('1 line was longer than 2000 characters and cut');
  });

  it('reports empty, missing, directory and past-the-end cases', async () => {
    await tmp.write({ 'empty.txt': '', 'dir/x.txt': 'x\n' });
    const context = toolContext(tmp.dir);
    expect(await executeTool(readTool, { file_path: 'empty.txt' }, context)).toEqual({
      output: 'The file empty.txt exists but is empty.',
      isError: false,
    });
    const missing = await executeTool(readTool, { file_path: 'nope.txt' }, context);
    expect(missing).toMatchObject({ isError: true });
    expect(missing.output).toContain('File does not exist: nope.txt');
    expect((await executeTool(readTool, { file_path: 'dir' }, context)).output).toContain('is a directory');
    expect((await executeTool(readTool, { file_path: 'dir/x.txt', offset: 5 }, context)).output).toContain(
      'has 1 line; offset 5 is past the end',
    );
  });

  it('returns invalid input and refused paths as error results', async () => {
    const context = toolContext(tmp.dir);
    const invalid = await executeTool(readTool, { path: 'a.txt' }, context);
    expect(invalid.isError).toBe(true);
    expect(invalid.output).toContain('- file_path: Invalid input: expected string');
    expect(invalid.output).toContain('file_path (string, required)');
    const outside = await executeTool(readTool, { file_path: '/etc/passwd' }, context);
    expect(outside.isError).toBe(true);
    expect(outside.output).toContain('outside the worktree');
  });
});

describe('Write', () => {
  it('creates parent directories and overwrites files', async () => {
    const context = toolContext(tmp.dir);
    const created = await executeTool(writeTool, { file_path: 'deep/er/file.ts', content: 'a\nb\n' }, context);
    expect(created).toEqual({ output: 'Created deep/er/file.ts (2 lines).', isError: false });
    const updated = await executeTool(writeTool, { file_path: 'deep/er/file.ts', content: 'c' }, context);
    expect(updated.output).toBe('Updated deep/er/file.ts (1 line).');
    expect(await readFile(join(tmp.dir, 'deep/er/file.ts'), 'utf8')).toBe('c');
  });

  it('respects the write policy', async () => {
    const context = toolContext(tmp.dir, { read: ['**'], write: ['src/**'], denyWrite: ['src/**/*.test.ts'] });
    expect((await executeTool(writeTool, { file_path: 'src/a.ts', content: '' }, context)).isError).toBe(false);
    const denied = await executeTool(writeTool, { file_path: 'src/a.test.ts', content: '' }, context);
    expect(denied.isError).toBe(true);
    expect(denied.output).toContain('not allowed in this stage');
  });
});

describe('Edit', () => {
  const edit = async (input: Record<string, unknown>) =>
    executeTool(editTool, { file_path: 'f.ts', ...input }, toolContext(tmp.dir));
  const content = async (): Promise<string> => readFile(join(tmp.dir, 'f.ts'), 'utf8');

  beforeEach(async () => {
    await tmp.write({ 'f.ts': 'const a = 1;\nconst b = 1;\nconst c = 2;\n' });
  });

  it('replaces a unique match, taking $ patterns literally', async () => {
    const result = await edit({ old_string: 'const c = 2;', new_string: "const c = '$&';" });
    expect(result).toEqual({ output: 'Edited f.ts: replaced 1 occurrence.', isError: false });
    expect(await content()).toBe("const a = 1;\nconst b = 1;\nconst c = '$&';\n");
  });

  it('reports zero matches', async () => {
    const result = await edit({ old_string: 'const d', new_string: 'x' });
    expect(result.isError).toBe(true);
    expect(result.output).toContain('0 matches');
  });

  it('reports several matches with their count unless replace_all', async () => {
    const many = await edit({ old_string: '= 1;', new_string: '= 3;' });
    expect(many.isError).toBe(true);
    expect(many.output).toContain('occurs 2 times');
    expect(await content()).toContain('const a = 1;');
    const all = await edit({ old_string: '= 1;', new_string: '= 3;', replace_all: true });
    expect(all.output).toBe('Edited f.ts: replaced 2 occurrences.');
    expect(await content()).toBe('const a = 3;\nconst b = 3;\nconst c = 2;\n');
  });

  it('refuses identical strings and missing files', async () => {
    expect((await edit({ old_string: 'a', new_string: 'a' })).output).toContain('identical');
    const missing = await executeTool(
      editTool,
      { file_path: 'g.ts', old_string: 'a', new_string: 'b' },
      toolContext(tmp.dir),
    );
    expect(missing.output).toContain('File does not exist: g.ts');
  });

  it('creates a new file from an empty old_string', async () => {
    const result = await executeTool(
      editTool,
      { file_path: 'new/g.ts', old_string: '', new_string: 'x\n' },
      toolContext(tmp.dir),
    );
    expect(result.output).toBe('Created new/g.ts.');
    expect(await readFile(join(tmp.dir, 'new/g.ts'), 'utf8')).toBe('x\n');
  });
});

describe('tool definitions', () => {
  it("declares a tool's parameters the same each time, each declaration the caller's to change", () => {
    const first = toToolDefinition(readTool);
    expect(first.inputSchema).toMatchObject({ type: 'object', required: ['file_path'] });
    // A caller (a provider adapter) changing its copy changes no later declaration.
    delete (first.inputSchema as { properties?: unknown }).properties;
    (first.inputSchema as { required?: string[] }).required?.push('changed');
    const second = toToolDefinition(readTool);
    expect(second.inputSchema).toMatchObject({ type: 'object', required: ['file_path'] });
    expect(second.inputSchema).toHaveProperty('properties.file_path');
  });
});
