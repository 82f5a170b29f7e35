import { describe, expect, it } from 'vitest';
import { countLines, measureCode } from '../../src/code/metrics.js';
import { languageIdForFile, loadLanguage, parseFile } from '../../src/code/tree-sitter.js';

describe('languageIdForFile', () => {
  it.each([
    ['src/a.ts', 'typescript'],
    ['src/a.d.ts', 'typescript'],
    ['src/a.mts', 'typescript'],
    ['src/A.tsx', 'tsx'],
    ['a.js', 'javascript'],
    ['a.mjs', 'javascript'],
    ['a.cjs', 'javascript'],
    ['a.jsx', 'javascript'],
    ['pkg/mod.py', 'python'],
    ['main.go', 'go'],
    ['src/main/java/A.java', 'java'],
    ['src/lib.rs', 'rust'],
    ['README.md', undefined],
    ['Makefile', undefined],
    // As `extname` reads them: the extension in any case; none for a name whose only dot leads it,
    // nor from a directory's name.
    ['src/A.TS', 'typescript'],
    ['lib/Mod.Py', 'python'],
    ['src/.ts', undefined],
    ['.js', undefined],
    ['pkg.ts/Makefile', undefined],
    ['src/a.', undefined],
    ['src/..', undefined],
  ])('%s -> %s', (path, id) => {
    expect(languageIdForFile(path)).toBe(id);
  });
});

describe('parseFile', () => {
  it('loads each grammar once and parses every supported language', async () => {
    expect(await loadLanguage('python')).toBe(await loadLanguage('python'));
    const samples: Record<string, string> = {
      'a.ts': 'export const x: number = 1;',
      'a.tsx': 'export const el = <div className="x">hi</div>;',
      'a.jsx': 'export const el = <div>hi</div>;',
      'a.js': 'export function f() { return 1; }',
      'a.py': 'def f():\n    return 1\n',
      'a.go': 'package a\n\nfunc F() int { return 1 }\n',
      'A.java': 'class A { int f() { return 1; } }',
      'a.rs': 'fn f() -> i32 { 1 }',
    };
    for (const [path, text] of Object.entries(samples)) {
      using parsed = await parseFile(path, text);
      expect(parsed?.hasErrors, path).toBe(false);
      expect(parsed?.tree.rootNode.text).toBe(text);
    }
  });

  it('reports syntax errors and returns undefined for unsupported files', async () => {
    using broken = await parseFile('a.py', 'def f(:\n');
    expect(broken?.hasErrors).toBe(true);
    expect(await parseFile('a.txt', 'hello')).toBeUndefined();
  });
});

describe('measureCode', () => {
  it('counts lines like an editor', () => {
    expect(countLines('')).toBe(0);
    expect(countLines('a')).toBe(1);
    expect(countLines('a\n')).toBe(1);
    expect(countLines('a\nb')).toBe(2);
    expect(countLines('a\n\n')).toBe(2);
  });

  it('measures Python methods, decorated methods and nested functions', async () => {
    const text = [
      'class Stack:',
      '    def push(self, x):',
      '        self.items.append(x)',
      '    @property',
      '    def size(self):',
      '        def inner():',
      '            return 1',
      '        return inner()',
      '',
      'def top_level():',
      '    return 0',
      '',
    ].join('\n');
    const metrics = await measureCode('stack.py', text);
    expect(metrics.classes).toEqual([{ name: 'Stack', kind: 'class', methods: 2, startLine: 1 }]);
    expect(metrics.functions.map((f) => [f.name, f.kind, f.lines])).toEqual([
      ['Stack.push', 'method', 2],
      ['Stack.size', 'method', 4],
      ['inner', 'function', 2],
      ['top_level', 'function', 2],
    ]);
  });

  it('groups Go methods by receiver type and Rust methods by inherent impl', async () => {
    const goText = 'package a\n\ntype S struct{}\n\nfunc (s *S) A() {}\nfunc (s S) B() {}\nfunc F() {}\n';
    const go = await measureCode('a.go', goText);
    expect(go.classes).toEqual([{ name: 'S', kind: 'type', methods: 2, startLine: 5 }]);
    expect(go.functions.map((f) => f.name)).toEqual(['S.A', 'S.B', 'F']);

    const rustText = [
      'struct P<T>(T);',
      'impl<T> P<T> { fn a(&self) {} }',
      'impl<T> P<T> { fn b(&self) {} }',
      'impl<T> std::fmt::Debug for P<T> { fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { Ok(()) } }',
    ].join('\n');
    const rust = await measureCode('a.rs', rustText);
    expect(rust.classes).toEqual([{ name: 'P', kind: 'type', methods: 2, startLine: 2 }]);
    expect(rust.functions.map((f) => f.name)).toEqual(['P.a', 'P.b', 'P.fmt']);
  });

  it('counts Java constructors and enum methods', async () => {
    const text =
      'enum E { A, B; E() {} int f() { return 1; } int g() { return 2; } }\nclass C { C() {} void m() {} }\n';
    const metrics = await measureCode('E.java', text);
    expect(metrics.classes.map((c) => [c.name, c.methods])).toEqual([
      ['E', 3],
      ['C', 2],
    ]);
  });
});
