import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeTool } from '../../src/agent/tools/agent-tool.js';
import { globTool } from '../../src/agent/tools/glob-tool.js';
import { grepTool } from '../../src/agent/tools/grep-tool.js';
import { createTempWorktree, toolContext, type TempWorktree } from './agent-fixtures.js';

let tmp: TempWorktree;

beforeEach(async () => {
  tmp = await createTempWorktree({
    'src/b.ts': 'export const beta = 2;\n',
    'src/a.ts': 'export const alpha = 1;\n// TODO: alpha\n',
    'src/nested/c.ts': 'export const gamma = 3;\n',
    'README.md': 'alpha docs\n',
    '.env.example': 'ALPHA=1\n',
    'node_modules/pkg/index.ts': 'export const alpha = 0;\n',
    '.git/HEAD': 'ref: refs/heads/main\n',
  });
});
afterEach(async () => {
  await tmp.cleanup();
});

describe('Glob', () => {
  it('lists matching files sorted, relative to the worktree, without .git and node_modules', async () => {
    const result = await executeTool(globTool, { pattern: '**/*.ts' }, toolContext(tmp.dir));
    expect(result).toEqual({ output: 'src/a.ts\nsrc/b.ts\nsrc/nested/c.ts', isError: false });
    const all = await executeTool(globTool, { pattern: '**/*' }, toolContext(tmp.dir));
    expect(all.output.split('\n')).toEqual(['.env.example', 'README.md', 'src/a.ts', 'src/b.ts', 'src/nested/c.ts']);
  });

  it('searches under path and filters by the read policy', async () => {
    const nested = await executeTool(globTool, { pattern: '*.ts', path: 'src/nested' }, toolContext(tmp.dir));
    expect(nested.output).toBe('src/nested/c.ts');
    const limited = toolContext(tmp.dir, { read: ['src/*.ts'], write: [], denyWrite: [] });
    expect((await executeTool(globTool, { pattern: '**/*.ts' }, limited)).output).toBe('src/a.ts\nsrc/b.ts');
  });

  it('says when nothing matches and refuses escaping patterns and paths', async () => {
    expect((await executeTool(globTool, { pattern: '*.py' }, toolContext(tmp.dir))).output).toBe(
      "No files match '*.py'.",
    );
    expect((await executeTool(globTool, { pattern: '../**' }, toolContext(tmp.dir))).isError).toBe(true);
    expect((await executeTool(globTool, { pattern: '*', path: '..' }, toolContext(tmp.dir))).isError).toBe(true);
  });

  it('does not follow symlinks out of the worktree', async () => {
    await symlink('/etc', join(tmp.dir, 'etc-link'));
    const result = await executeTool(globTool, { pattern: 'etc-link/**' }, toolContext(tmp.dir));
    expect(result.output).toBe("No files match 'etc-link/**'.");
  });
});

describe('Grep', () => {
  it('prints path:line:text with relative paths', async () => {
    const result = await executeTool(grepTool, { pattern: 'alpha' }, toolContext(tmp.dir));
    expect(result.isError).toBe(false);
    expect(result.output.split('\n').sort()).toEqual([
      'README.md:1:alpha docs',
      'src/a.ts:1:export const alpha = 1;',
      'src/a.ts:2:// TODO: alpha',
    ]);
  });

  it('narrows by path and glob', async () => {
    const context = toolContext(tmp.dir);
    expect((await executeTool(grepTool, { pattern: 'const', path: 'src/nested' }, context)).output).toBe(
      'src/nested/c.ts:1:export const gamma = 3;',
    );
    expect((await executeTool(grepTool, { pattern: 'alpha', glob: '*.md' }, context)).output).toBe(
      'README.md:1:alpha docs',
    );
    expect((await executeTool(grepTool, { pattern: 'beta', path: 'src/b.ts' }, context)).output).toBe(
      'src/b.ts:1:export const beta = 2;',
    );
  });

  it('treats no matches as a normal result and a bad regex as an error', async () => {
    const context = toolContext(tmp.dir);
    expect(await executeTool(grepTool, { pattern: 'zeta' }, context)).toEqual({
      output: "No matches for 'zeta'.",
      isError: false,
    });
    const bad = await executeTool(grepTool, { pattern: '(unclosed' }, context);
    expect(bad.isError).toBe(true);
    expect(bad.output).toContain('regex parse error');
  });

  it('accepts patterns starting with a dash and drops files the stage may not read', async () => {
    await tmp.write({ 'src/flags.ts': 'run --verbose\n' });
    expect((await executeTool(grepTool, { pattern: '--verbose' }, toolContext(tmp.dir))).output).toBe(
      'src/flags.ts:1:run --verbose',
    );
    const limited = toolContext(tmp.dir, { read: ['README.md'], write: [], denyWrite: [] });
    expect((await executeTool(grepTool, { pattern: 'alpha' }, limited)).output).toBe('README.md:1:alpha docs');
  });
});
