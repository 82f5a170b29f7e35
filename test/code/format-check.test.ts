import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { compareFormatting } from '../../src/code/format-check.js';

const UGLY_TS = `import {a,b} from './x'
export const  total=(items:number[])=>items.reduce((sum,item)=>sum+item,0)
export function label(value:string,count=1){
    // say   how many
    if(value==='') return 'none'
    const mixed = a && b || count > 2
    return \`\${value} x\${count}\`
}
export class Box<T>{constructor(private readonly item:T){}
  get(): T {return this.item};
}
type Shape = {width:number, height:number}
const view = (props:{name:string}) => props.name
`;

async function verdict(path: string, before: string, after: string): Promise<boolean> {
  return (await compareFormatting(path, before, after)).formattingOnly;
}

describe('compareFormatting (seed 002, 17.3)', () => {
  it('accepts what prettier makes of TypeScript: quotes, semicolons, parentheses, arrow parameters, line breaks', async () => {
    const formatted = await prettier.format(UGLY_TS, { parser: 'typescript' });
    expect(formatted).not.toBe(UGLY_TS);
    expect(formatted).toContain('(a && b) || count > 2'); // prettier's clarifying parentheses
    expect(formatted).toContain('"none"');
    expect(await compareFormatting('src/x.ts', UGLY_TS, formatted)).toEqual({ formattingOnly: true });
  });

  it('accepts broken-up unions with a leading |, and quotes swapped around escaped quotes', async () => {
    const union =
      'export type Shape = { kind: "circle"; r: number } | { kind: "square"; side: number } | { kind: "triangle"; base: number; height: number };\n';
    const formatted = await prettier.format(union, { parser: 'typescript' });
    expect(formatted).toMatch(/=\n\s+\| \{/);
    expect(await verdict('shape.ts', union, formatted)).toBe(true);
    const quoted = 'export const hint = "Run \\"npm test\\" first";\n';
    const swapped = await prettier.format(quoted, { parser: 'typescript' });
    expect(swapped).toContain(`'Run "npm test" first'`);
    expect(await verdict('hint.ts', quoted, swapped)).toBe(true);
    expect(await verdict('hint.ts', quoted, `export const hint = 'Run "npm  test" first';\n`)).toBe(false);
    expect(await verdict('p.py', "s = 'it\\'s'\n", 's = "it\'s"\n')).toBe(true);
    expect(await verdict('p.py', "s = '''a'''\n", 's = "a"\n')).toBe(false);
    expect(
      await verdict('arrow.ts', 'export const ids = xs.map(x => x.id);\n', 'export const ids = xs.map((x) => x.id);\n'),
    ).toBe(true);
    expect(
      await verdict(
        'arrow.ts',
        'export const ids = xs.map(x => x.id);\n',
        'export const ids = xs.map((x: T) => x.id);\n',
      ),
    ).toBe(false);
    expect(
      await verdict(
        'keys.js',
        "module.exports = { 'default': 1, b: 2 };\n",
        'module.exports = { default: 1, b: 2 };\n',
      ),
    ).toBe(true);
    expect(await verdict('keys.js', "module.exports = { 'a-b': 1 };\n", 'module.exports = { a_b: 1 };\n')).toBe(false);
    expect(await verdict('keys.js', "f('default');\n", 'f(default);\n')).toBe(false);
  });

  it('accepts prettier on JavaScript with JSX and JSON', async () => {
    const jsx = "export const App=({name})=><div className='a'>  hello {name}   </div>\n";
    expect(await verdict('src/app.jsx', jsx, await prettier.format(jsx, { parser: 'babel' }))).toBe(true);
    const json = '{"b":1,"a":[1,2,{"c":null}]}';
    expect(await verdict('config.json', json, await prettier.format(json, { parser: 'json' }))).toBe(true);
  });

  it('rejects changes of meaning, naming the line', async () => {
    const before = 'export const f = (a, b, c) => (a + b) * c;\n';
    const precedence = await compareFormatting('f.js', before, 'export const f = (a, b, c) => a + b * c;\n');
    expect(precedence.formattingOnly).toBe(false);
    expect(await verdict('f.js', before, 'export const f = (a, b, d) => (a + b) * d;\n')).toBe(false);
    expect(await verdict('f.js', before, 'export const f = (a, b, c) => (a + b) * c + 0;\n')).toBe(false);
    const string = await compareFormatting('s.ts', 'const s = "a  b";\n', 'const s = "a b";\n');
    expect(string).toMatchObject({ formattingOnly: false, reason: expect.stringContaining('line 1') as unknown });
    expect(await verdict('n.ts', 'new Foo;\n', 'new Foo();\n')).toBe(false);
  });

  it('treats Python layout (quotes, parentheses, continuations, indentation) as formatting, and logic as not', async () => {
    const before = "def f(a,b):\n  x = ('a' +\\\n  'b')\n  return (a+b)*2\n";
    const black = 'def f(a, b):\n    x = "a" + "b"\n    return (a + b) * 2\n';
    expect(await verdict('m.py', before, black)).toBe(true);
    expect(await verdict('m.py', before, 'def f(a, b):\n    x = "a" + "b"\n    return a + b * 2\n')).toBe(false);
    expect(await verdict('m.py', 'x = 1\n', 'x = 1  # set\n')).toBe(false);
  });

  it('refuses files that do not parse, and compares other files line by line but for whitespace at line ends', async () => {
    expect((await compareFormatting('a.ts', 'const = ;\n', 'const = ;')).formattingOnly).toBe(false);
    expect(await verdict('a.ts', 'const a = 1\n', 'const a = ;\n')).toBe(false);
    expect(await verdict('notes.md', '# Title  \r\n\ntext here\n\n\n', '# Title\n\ntext here\n')).toBe(true);
    // Indentation and spaces within a line can carry meaning (YAML, Makefiles, shell).
    expect(await verdict('notes.md', '# Title\n\ntext  here\n', '# Title\n\ntext\nhere\n')).toBe(false);
    expect(await verdict('config.yml', 'a:\n  b: 1\nc: 2\n', 'a:\n  b: 1\n  c: 2\n')).toBe(false);
    expect(await verdict('run.sh', 'rm -rf / tmp\n', 'rm -rf /tmp\n')).toBe(false);
    expect(await verdict('notes.md', '* one\n', '- one\n')).toBe(false);
    expect(await verdict('same.txt', 'x', 'x')).toBe(true);
    expect(await verdict('data.json', '{"a":1}', '{"a":2}')).toBe(false);
  });

  it('keeps the commas that carry meaning: array holes and a one-element Python tuple', async () => {
    expect(await verdict('pair.js', 'const [, b] = pair;\n', 'const [b] = pair;\n')).toBe(false);
    expect(await verdict('holes.js', 'const a = [1, , 2];\n', 'const a = [1, 2];\n')).toBe(false);
    expect(await verdict('trailing.js', 'const a = [1, 2,];\n', 'const a = [1, 2];\n')).toBe(true);
    expect(await verdict('one.py', 'x = (1,)\n', 'x = (1)\n')).toBe(false);
    expect(await verdict('many.py', 'x = (1, 2,)\n', 'x = (1, 2)\n')).toBe(true);
    expect(
      await verdict('types.ts', 'type T = { a: string, b: number };\n', 'type T = { a: string; b: number };\n'),
    ).toBe(true);
  });
});
