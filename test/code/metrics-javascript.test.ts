import { describe, expect, it } from 'vitest';
import { measureCode } from '../../src/code/metrics.js';

/**
 * The size metrics of JavaScript and TypeScript, read from oxc's program: what the tree-sitter
 * extractor answered before (names, kinds, lines, method counts), which the size check before
 * REFACTOR reports on.
 */

const SHAPES = [
  'export abstract class Shape {',
  '  abstract area(): number;',
  '  constructor(readonly name: string) {}',
  '  describe(): string;',
  '  describe(prefix?: string): string {',
  "    return `${prefix ?? ''}${this.name}`;",
  '  }',
  '  get label() {',
  '    return this.name;',
  '  }',
  '  #secret() {}',
  "  ['computed']() {}",
  '  onClick = () => {',
  '    const helpers = {',
  '      run() {},',
  '      size: function () {},',
  '      get total() {',
  '        return 0;',
  '      },',
  '    };',
  '  };',
  '}',
  '@sealed',
  'class Decorated {',
  '  @logged',
  '  method() {}',
  '}',
  'declare function declared(): void;',
  'export default function () {}',
  'const Anonymous = class {',
  '  method() {}',
  '};',
  'function* numbers() {}',
  '@sealed',
  'export class Exported {',
  '  @logged() @traced',
  '  static async method() {}',
  '}',
  '',
].join('\n');

describe('measureCode for JavaScript and TypeScript', () => {
  it('names methods after their class, functions after what holds them, and skips signatures without a body', async () => {
    const metrics = await measureCode('src/shapes.ts', SHAPES);
    expect(metrics.hasErrors).toBe(false);
    expect(metrics.functions.map((fn) => [fn.name, fn.kind, fn.startLine, fn.endLine])).toEqual([
      ['Shape.constructor', 'method', 3, 3],
      ['Shape.describe', 'method', 5, 7],
      ['Shape.label', 'method', 8, 10],
      ['Shape.#secret', 'method', 11, 11],
      ["Shape.['computed']", 'method', 12, 12],
      ['Shape.onClick', 'method', 13, 21],
      ['Shape.run', 'method', 15, 15],
      ['size', 'function', 16, 16],
      ['Shape.total', 'method', 17, 19],
      ['Decorated.method', 'method', 26, 26],
      ['anonymous function', 'anonymous', 29, 29],
      ['method', 'method', 31, 31],
      ['numbers', 'function', 33, 33],
      ['Exported.method', 'method', 37, 37],
    ]);
    expect(metrics.classes.map((cls) => [cls.name, cls.methods, cls.startLine])).toEqual([
      ['Shape', 5, 1],
      ['Decorated', 1, 23],
      ['anonymous class', 1, 30],
      ['Exported', 1, 35],
    ]);
  });

  it('measures JSX in .jsx and .js files, TSX, .mts and .cts', async () => {
    const view =
      'export function View({ items }) {\n  return <ul>{items.map((item) => <li key={item}>{item}</li>)}</ul>;\n}\n';
    const expected = [
      ['View', 'function', 1, 3],
      ['anonymous function', 'anonymous', 2, 2],
    ];
    for (const [path, language] of [
      ['src/view.jsx', 'javascript'],
      ['src/view.js', 'javascript'],
      ['src/view.tsx', 'tsx'],
    ]) {
      const metrics = await measureCode(path!, view);
      expect([metrics.language, metrics.functions.map((fn) => [fn.name, fn.kind, fn.startLine, fn.endLine])]).toEqual([
        language,
        expected,
      ]);
    }
    const module = 'export const add = (a: number, b: number): number => {\n  return a + b;\n};\n';
    for (const path of ['src/add.mts', 'src/add.cts'])
      expect((await measureCode(path, module)).functions).toEqual([
        { name: 'add', kind: 'function', startLine: 1, endLine: 3, lines: 3 },
      ]);
  });

  it('reports a file that does not parse as such, with no functions or classes', async () => {
    expect(await measureCode('src/broken.ts', 'export function broken( {\n  return 1;\n')).toEqual({
      language: 'typescript',
      lines: 2,
      hasErrors: true,
      functions: [],
      classes: [],
    });
  });
});
