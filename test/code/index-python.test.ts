import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../../src/code/index/build-index.js';
import { callGraphOf } from '../../src/code/index/call-graph.js';
import type { CodeIndex, IndexedFile } from '../../src/code/index/types.js';
import { snapshotPublicApi } from '../../src/code/public-api.js';

const FILES: Record<string, string> = {
  // Left by pytest, Python, mypy, a virtualenv and npm: none of it is the project's code.
  '.pytest_cache/v/cache/nodeids': '[]\n',
  'pkg/__pycache__/core.cpython-311.pyc': 'compiled\n',
  '.mypy_cache/3.11/pkg/core.meta.json': '{}\n',
  '.venv/lib/python3.11/site-packages/dep/__init__.py': 'def vendored():\n    pass\n',
  'node_modules/tool/index.js': 'module.exports = 1;\n',
  'pkg/__init__.py': "from .core import api_func\n\n__all__ = ['api_func', 'VERSION']\nVERSION = '1.0'\n_private = 1\n",
  'pkg/core.py': [
    '"""Core module."""',
    'import os',
    'from .util import helper',
    'from . import util',
    '',
    '',
    'class Engine:',
    '    """Runs things."""',
    '',
    '    def start(self) -> int:',
    '        return self._go()',
    '',
    '    def _go(self) -> int:',
    '        return helper()',
    '',
    '',
    'def api_func(x: int) -> int:',
    '    """The public entry point."""',
    '    return Engine().start() + util.helper() + x',
    '',
    '',
    'def _hidden():',
    '    return os.getcwd()',
    '',
  ].join('\n'),
  'pkg/util.py': 'def helper():\n    return 1\n',
  'pkg/cli.py': [
    'import argparse',
    'from pkg.core import api_func',
    '',
    'parser = argparse.ArgumentParser()',
    "parser.add_argument('--name', '-n', help='who')",
    "parser.add_argument('count', type=int)",
    '',
  ].join('\n'),
  'tests/test_core.py': 'from pkg.core import api_func\n\n\ndef test_api():\n    assert api_func(1) == 3\n',
  'go.mod': 'module example.com/demo\n\ngo 1.22\n',
  'main.go': 'package main\n\nimport "example.com/demo/lib"\n\nfunc main() {\n\tlib.Hello()\n}\n',
  'lib/lib.go':
    '// Package lib greets.\npackage lib\n\n// Hello greets.\nfunc Hello() string {\n\treturn greet("world")\n}\n\nfunc greet(name string) string {\n\treturn name\n}\n',
  'lib/lib_test.go': 'package lib\n\nimport "testing"\n\nfunc TestHello(t *testing.T) {\n\tHello()\n}\n',
};

describe('buildIndex on a Python package (and a Go module)', () => {
  let root: string;
  let index: CodeIndex;
  const file = (path: string): IndexedFile => {
    const found = index.files.find((candidate) => candidate.path === path);
    if (found === undefined) throw new Error(`${path} is not indexed`);
    return found;
  };
  const resolved = (path: string): Record<string, string[]> =>
    Object.fromEntries(file(path).imports.map((ref) => [ref.specifier, ref.resolved]));

  beforeAll(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-index-py-')));
    for (const [path, text] of Object.entries(FILES)) {
      await mkdir(dirname(join(root, 'tree', path)), { recursive: true });
      await writeFile(join(root, 'tree', path), text);
    }
    index = await buildIndex({ root: join(root, 'tree'), cacheDir: join(root, 'cache'), excludes: [], git: false });
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('leaves out the caches and environments a tree outside git holds', () => {
    const paths = index.files.map((entry) => entry.path);
    expect(paths).toContain('pkg/core.py');
    for (const generated of ['.pytest_cache/', '__pycache__/', '.venv/', 'node_modules/', '.mypy_cache/'])
      expect(
        paths.filter((path) => path.includes(generated)),
        generated,
      ).toEqual([]);
  });

  it('extracts Python symbols, docstrings and public names', () => {
    const core = file('pkg/core.py');
    expect(core.symbols.map((symbol) => [symbol.container ?? null, symbol.name, symbol.kind, symbol.exported])).toEqual(
      [
        [null, 'Engine', 'class', true],
        ['Engine', 'start', 'method', true],
        ['Engine', '_go', 'method', false],
        [null, 'api_func', 'function', true],
        [null, '_hidden', 'function', false],
      ],
    );
    expect(core.symbols[3]).toMatchObject({ signature: 'def api_func(x: int) -> int', doc: 'The public entry point.' });
    expect(core.symbols[0]?.doc).toBe('Runs things.');
    expect(core.exports.map((entry) => entry.name)).toEqual(['Engine', 'api_func']);
  });

  it('takes a literal __all__ as the public API of a module', () => {
    const init = file('pkg/__init__.py');
    expect(init.exports.map((entry) => entry.name)).toEqual(['api_func', 'VERSION']);
    expect(init.symbols.map((symbol) => [symbol.name, symbol.kind, symbol.exported])).toEqual([
      ['VERSION', 'const', true],
      ['_private', 'variable', false],
    ]);
    const api = snapshotPublicApi(index);
    expect(Object.keys(api.modules['pkg/__init__.py']?.exports ?? {})).toEqual(['VERSION', 'api_func']);
    expect(api.modules['pkg/core.py']?.exports).toEqual({
      Engine: { kind: 'class', signature: 'class Engine' },
      'Engine.start': { kind: 'method', signature: 'def start(self) -> int' },
      api_func: { kind: 'function', signature: 'def api_func(x: int) -> int' },
    });
    expect(api.cliFlags).toEqual(['--name', '-n']);
    expect(api.modules['tests/test_core.py']).toBeUndefined();
  });

  it('resolves relative, sibling-module and absolute Python imports', () => {
    expect(resolved('pkg/core.py')).toEqual({ os: [], '.util': ['pkg/util.py'], '.': ['pkg/util.py'] });
    expect(resolved('pkg/__init__.py')).toEqual({ '.core': ['pkg/core.py'] });
    expect(resolved('pkg/cli.py')).toEqual({ argparse: [], 'pkg.core': ['pkg/core.py'] });
    expect(resolved('tests/test_core.py')).toEqual({ 'pkg.core': ['pkg/core.py'] });
  });

  it('finds Python tests by name and by import', () => {
    expect(index.risk.find((entry) => entry.path === 'pkg/core.py')?.tests).toEqual(['tests/test_core.py']);
    expect(index.risk.find((entry) => entry.path === 'pkg/util.py')?.tests).toEqual([]);
    expect(file('tests/test_core.py').isTest).toBe(true);
  });

  it('builds Python call edges through self, named imports and imported modules', () => {
    const graph = callGraphOf(index);
    expect(graph['pkg/core.py#Engine.start']).toEqual(['pkg/core.py#Engine._go']);
    expect(graph['pkg/core.py#Engine._go']).toEqual(['pkg/util.py#helper']);
    expect(graph['pkg/core.py#api_func']).toEqual([
      'pkg/core.py#Engine',
      'pkg/core.py#Engine.start',
      'pkg/util.py#helper',
    ]);
  });

  it('resolves Go package imports inside the module and calls through the package name', () => {
    expect(resolved('main.go')).toEqual({ 'example.com/demo/lib': ['lib/lib.go'] });
    expect(file('lib/lib.go').symbols.map((symbol) => [symbol.name, symbol.exported])).toEqual([
      ['Hello', true],
      ['greet', false],
    ]);
    expect(file('lib/lib.go').symbols[0]?.doc).toBe('Hello greets.');
    const graph = callGraphOf(index);
    expect(graph['main.go#main']).toEqual(['lib/lib.go#Hello']);
    expect(graph['lib/lib.go#Hello']).toEqual(['lib/lib.go#greet']);
    expect(graph['lib/lib_test.go#TestHello']).toEqual(['lib/lib.go#Hello']);
    expect(index.risk.find((entry) => entry.path === 'lib/lib.go')?.tests).toEqual(['lib/lib_test.go']);
  });
});
