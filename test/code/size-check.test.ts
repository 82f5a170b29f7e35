import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkNeedsRefactor, DEFAULT_REFACTOR_CHECK_CONFIG, refactorFindingKind } from '../../src/code/size-check.js';

/** How to write each kind of sample in one language. */
interface Sample {
  ext: string;
  header: string[];
  comment: (index: number) => string;
  /** A function named `name` spanning exactly `lines` lines. */
  func: (name: string, lines: number) => string[];
  /** A class (or type) named `name` with `methods` one-line methods. */
  crowded: (name: string, methods: number) => string[];
  /** Code that does not parse. */
  broken: string[];
}

const body = (count: number, line: string) => Array.from({ length: Math.max(0, count) }, () => line);

const SAMPLES: Record<string, Sample> = {
  typescript: {
    ext: 'ts',
    header: [],
    comment: (i) => `// filler ${i}`,
    func: (name, n) => [
      `export function ${name}(): number {`,
      '  let x = 0;',
      ...body(n - 4, '  x += 1;'),
      '  return x;',
      '}',
    ],
    crowded: (name, m) => [
      `export class ${name} {`,
      ...Array.from({ length: m }, (_, i) => `  m${i}(): number { return ${i}; }`),
      '}',
    ],
    broken: ['export function broken( {', '  return;'],
  },
  python: {
    ext: 'py',
    header: [],
    comment: (i) => `# filler ${i}`,
    func: (name, n) => [`def ${name}():`, '    x = 0', ...body(n - 3, '    x += 1'), '    return x'],
    crowded: (name, m) => [
      `class ${name}:`,
      ...Array.from({ length: m }, (_, i) => `    def m${i}(self):\n        return ${i}`),
    ],
    broken: ['def broken(:', '    pass'],
  },
  go: {
    ext: 'go',
    header: ['package sample', ''],
    comment: (i) => `// filler ${i}`,
    func: (name, n) => [`func ${name}() int {`, '\tx := 0', ...body(n - 4, '\tx++'), '\treturn x', '}'],
    crowded: (name, m) => [
      `type ${name} struct{}`,
      ...Array.from({ length: m }, (_, i) => `func (s *${name}) M${i}() int { return ${i} }`),
    ],
    broken: ['func broken( {', '}'],
  },
  java: {
    ext: 'java',
    header: [],
    comment: (i) => `// filler ${i}`,
    func: (name, n) => [
      'class Holder {',
      `  static int ${name}() {`,
      '    int x = 0;',
      ...body(n - 4, '    x += 1;'),
      '    return x;',
      '  }',
      '}',
    ],
    crowded: (name, m) => [
      `class ${name} {`,
      ...Array.from({ length: m }, (_, i) => `  int m${i}() { return ${i}; }`),
      '}',
    ],
    broken: ['class Broken {', '  void f( { }'],
  },
  rust: {
    ext: 'rs',
    header: [],
    comment: (i) => `// filler ${i}`,
    func: (name, n) => [`fn ${name}() -> i32 {`, '    let mut x = 0;', ...body(n - 4, '    x += 1;'), '    x', '}'],
    crowded: (name, m) => [
      `struct ${name};`,
      `impl ${name} {`,
      ...Array.from({ length: m }, (_, i) => `    fn m${i}(&self) -> i32 { ${i} }`),
      '}',
    ],
    broken: ['fn broken( {', '}'],
  },
};

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ratchet-size-check-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Writes `code` padded with comment lines to exactly `total` lines; returns the file name. */
async function write(sample: Sample, name: string, code: string[], total?: number): Promise<string> {
  const lines = [...sample.header, ...code.flatMap((line) => line.split('\n'))];
  for (let i = 0; total !== undefined && lines.length < total; i += 1) lines.push(sample.comment(i));
  const file = `${name}.${sample.ext}`;
  await writeFile(join(root, file), `${lines.join('\n')}\n`);
  return file;
}

const config = DEFAULT_REFACTOR_CHECK_CONFIG;

describe.each(Object.entries(SAMPLES))('checkNeedsRefactor (%s)', (_language, sample) => {
  it('accepts a short file', async () => {
    const file = await write(sample, 'short', sample.func('small', 10), 30);
    const check = await checkNeedsRefactor([file], root, config);
    expect(check).toEqual({
      needsRefactor: false,
      reasons: [],
      filesChecked: 1,
      fileLines: { [file]: 30 },
    });
  });

  it('flags a file over the split threshold', async () => {
    const file = await write(sample, 'long', sample.func('small', 10), 401);
    const check = await checkNeedsRefactor([file], root, config);
    expect(check.needsRefactor).toBe(true);
    expect(check.reasons).toEqual([expect.stringContaining('exceeds 400-line split threshold (401 lines)')]);
    expect(check.reasons[0]).toContain(file);
  });

  it('does not flag a file exactly at the split threshold', async () => {
    const file = await write(sample, 'edge', sample.func('small', 10), 400);
    expect((await checkNeedsRefactor([file], root, config)).needsRefactor).toBe(false);
  });

  it('flags a file over the hard limit with MUST split (and no separate split reason)', async () => {
    const file = await write(sample, 'huge', sample.func('small', 10), 801);
    const check = await checkNeedsRefactor([file], root, config);
    expect(check.reasons).toHaveLength(1);
    expect(check.reasons[0]).toContain('800');
    expect(check.reasons[0]).toContain('MUST split');
    expect(check.reasons[0]).toContain('(801 lines)');
  });

  it('flags a long function by name', async () => {
    const file = await write(sample, 'longfn', [...sample.func('longOne', 60), ...sample.func('shortOne', 8)]);
    const check = await checkNeedsRefactor([file], root, config);
    expect(check.reasons).toHaveLength(1);
    expect(check.reasons[0]).toMatch(/longOne` is 60 lines long \(max 50/);
  });

  it('flags a class with too many methods by name', async () => {
    const file = await write(sample, 'crowded', [...sample.crowded('Crowded', 16), ...sample.crowded('Tidy', 15)]);
    const check = await checkNeedsRefactor([file], root, config);
    expect(check.reasons).toEqual([expect.stringMatching(/`Crowded` has 16 methods \(max 15\)/)]);
  });

  it('accepts a clean 100-line file', async () => {
    const code = [
      ...sample.func('first', 15),
      ...sample.func('second', 25),
      ...sample.crowded('Small', 5),
      ...sample.func('third', 40),
    ];
    const file = await write(sample, 'clean', code, 100);
    const check = await checkNeedsRefactor([file], root, config);
    expect(check.reasons).toEqual([]);
    expect(check.fileLines[file]).toBe(100);
  });

  it('respects custom thresholds', async () => {
    const file = await write(sample, 'custom', [...sample.func('medium', 30), ...sample.crowded('Four', 4)], 250);
    const custom = {
      splitThreshold: 200,
      hardLimit: 300,
      maxFunctionLength: 20,
      maxClassMethods: 3,
    };
    const check = await checkNeedsRefactor([file], root, custom);
    expect(check.reasons).toHaveLength(3);
    expect(check.reasons[0]).toContain('exceeds 200-line split threshold (250 lines)');
    expect(check.reasons[1]).toContain('medium');
    expect(check.reasons[1]).toContain('(max 20');
    expect(check.reasons[2]).toContain('`Four` has 4 methods (max 3)');
  });

  it('skips a file that does not exist', async () => {
    const check = await checkNeedsRefactor([`missing.${sample.ext}`], root, config);
    expect(check).toEqual({
      needsRefactor: false,
      reasons: [],
      filesChecked: 0,
      fileLines: {},
    });
  });

  it('reports nothing structural for a file that does not parse', async () => {
    const file = await write(sample, 'broken', [
      ...sample.func('longOne', 80),
      ...sample.crowded('Crowded', 20),
      ...sample.broken,
    ]);
    const check = await checkNeedsRefactor([file], root, config);
    expect(check.needsRefactor).toBe(false);
    expect(check.filesChecked).toBe(1);
  });

  it('accumulates every reason of a file', async () => {
    const file = await write(sample, 'multi', [...sample.func('longOne', 70), ...sample.crowded('Crowded', 17)], 450);
    const check = await checkNeedsRefactor([file], root, config);
    expect(check.reasons).toHaveLength(3);
    expect(check.reasons.join('\n')).toMatch(/split threshold[\s\S]*longOne[\s\S]*Crowded/);
  });

  it('words each finding so that its kind can be told (the planner splits, or restructures)', async () => {
    // Names that say "class" and "methods" do not make a long function a big class.
    const code = [...sample.func('make_class_methods', 70), ...sample.crowded('Crowded', 17)];
    const check = await checkNeedsRefactor([await write(sample, 'kinds', code, 450)], root, config);
    expect(check.reasons.map(refactorFindingKind)).toEqual(['long-file', 'long-function', 'big-class']);
  });
});

describe('checkNeedsRefactor across files', () => {
  const ts = SAMPLES.typescript!;

  it('checks several files, keyed by path relative to the root, accepting absolute paths once', async () => {
    const a = await write(ts, 'a', ts.func('fine', 5), 20);
    const b = await write(ts, 'b', ts.func('tooLong', 55));
    const check = await checkNeedsRefactor([a, join(root, b), b, 'nope.ts'], root, config);
    expect(check.filesChecked).toBe(2);
    expect(check.fileLines).toEqual({ 'a.ts': 20, 'b.ts': 55 });
    expect(check.reasons).toEqual([expect.stringContaining('b.ts: function `tooLong` is 55 lines long')]);
  });

  it('applies only the line-count checks to unsupported languages', async () => {
    const text = `${Array.from({ length: 420 }, (_, i) => `line ${i}`).join('\n')}\n`;
    await writeFile(join(root, 'notes.txt'), text);
    const check = await checkNeedsRefactor(['notes.txt'], root, config);
    expect(check.reasons).toEqual([
      'notes.txt exceeds 400-line split threshold (420 lines): split it into cohesive modules',
    ]);
  });

  it('names methods with their class and anonymous functions by line', async () => {
    const code = [
      'export class Service {',
      '  handle(): number {',
      ...body(55, '    void 0;'),
      '    return 1;',
      '  }',
      '}',
      'export const run = () => {',
      ...body(52, '  void 0;'),
      '};',
      'setTimeout(() => {',
      ...body(52, '  void 0;'),
      '});',
    ];
    const file = await write(ts, 'names', code);
    const check = await checkNeedsRefactor([file], root, config);
    expect(check.reasons).toEqual([
      expect.stringContaining('method `Service.handle` is 58 lines long'),
      expect.stringContaining('function `run` is 54 lines long'),
      expect.stringContaining('an anonymous function at line 115 is 54 lines long'),
    ]);
  });
});
