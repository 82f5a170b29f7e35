import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileRole, type FileRole } from '../../src/code/file-role.js';
import { buildIndex } from '../../src/code/index/build-index.js';
import type { CodeIndex } from '../../src/code/index/types.js';
import { ATTRS, DEFU, MORE_ITERTOOLS } from '../support/real-repo-fixtures.js';

/** Stubs, declaration files and types-only modules are contracts; docs and tool configuration are scaffolding (issue 13). */
describe('fileRole', () => {
  let root: string;
  let index: CodeIndex;

  beforeAll(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-file-role-')));
    const files: Record<string, string> = {
      ...Object.fromEntries(Object.entries(DEFU).map(([path, text]) => [`defu/${path}`, text])),
      ...Object.fromEntries(Object.entries(MORE_ITERTOOLS).map(([path, text]) => [`more/${path}`, text])),
      ...Object.fromEntries(Object.entries(ATTRS).map(([path, text]) => [`attrs/${path}`, text])),
      'ts/ambient.ts':
        'export declare function render(value: string): string;\nexport declare const version: string;\nexport type Mode = "a" | "b";\n',
      'ts/const-enum.ts':
        'export const enum Level {\n  Low,\n  High,\n}\nexport interface Options {\n  level: Level;\n}\n',
      'ts/enum.ts': 'export enum Level {\n  Low,\n  High,\n}\n',
      'ts/value.ts': 'export type Id = string;\nexport const empty: Id = "";\n',
      'ts/barrel.ts': "export type { Id } from './value';\n",
      'ts/index.d.mts': 'export declare function chalk(text: string): string;\n',
      'ts/vite.config.ts': "import { defineConfig } from 'vite';\nexport default defineConfig({});\n",
      'setup.py': 'from setuptools import setup\n\nsetup(name="x")\n',
      'examples/readme.rs': 'fn main() {}\n',
      'conftest.py': 'import pytest\n',
    };
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
    index = await buildIndex({ root, cacheDir: join(root, '.cache'), excludes: [], git: false });
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function roleOf(path: string): Promise<FileRole> {
    const file = index.files.find((entry) => entry.path === path);
    if (file === undefined) throw new Error(`${path} is not indexed`);
    return fileRole(file, root);
  }

  it('takes Python stubs and declaration files for contracts, whatever they declare', async () => {
    expect(await roleOf('more/more_itertools/more.pyi')).toBe('contract');
    expect(await roleOf('more/more_itertools/__init__.pyi')).toBe('contract');
    expect(await roleOf('attrs/src/attr/_typing_compat.pyi')).toBe('contract');
    expect(await roleOf('defu/lib/defu.d.cts')).toBe('contract');
    expect(await roleOf('ts/index.d.mts')).toBe('contract');
    expect(await roleOf('more/more_itertools/more.py')).toBe('code');
  });

  it("takes a module of types, interfaces, const enums and ambient declarations for a contract (defu's src/types.ts)", async () => {
    expect(await roleOf('defu/src/types.ts')).toBe('contract');
    expect(await roleOf('ts/ambient.ts')).toBe('contract');
    expect(await roleOf('ts/const-enum.ts')).toBe('contract');
  });

  it('keeps anything that exists at run time code: a value, an enum, a re-export', async () => {
    expect(await roleOf('ts/value.ts')).toBe('code');
    expect(await roleOf('ts/enum.ts')).toBe('code');
    expect(await roleOf('ts/barrel.ts')).toBe('code');
    expect(await roleOf('defu/src/defu.ts')).toBe('code');
    expect(await roleOf('defu/src/_utils.ts')).toBe('code');
  });

  it("takes Sphinx's docs/conf.py, setup.py, examples and tool configs for scaffolding, conftest.py for a test", async () => {
    expect(await roleOf('more/docs/conf.py')).toBe('scaffolding');
    expect(await roleOf('attrs/docs/conf.py')).toBe('scaffolding');
    expect(await roleOf('setup.py')).toBe('scaffolding');
    expect(await roleOf('examples/readme.rs')).toBe('scaffolding');
    expect(await roleOf('ts/vite.config.ts')).toBe('scaffolding');
    expect(await roleOf('conftest.py')).toBe('test');
    expect(await roleOf('attrs/tests/conftest.py')).toBe('test');
  });
});
