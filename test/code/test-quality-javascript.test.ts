import { describe, expect, it } from 'vitest';
import { isRatchetError } from '../../src/core/errors.js';
import { reviewTestQuality, type TestQualityInput } from '../../src/code/test-quality.js';

/**
 * What the review reads in JavaScript and TypeScript files beyond `test-quality.test.ts`: every
 * file kind a test can be, the syntax around tests, and how calls, imports and mocks are told
 * apart. These pinned the tree-sitter reader's answers before oxc replaced it.
 */

const VITEST = `import { expect, it, test, vi } from 'vitest';\n`;

function input(testFile: string, text: string, before: string | null = null): TestQualityInput {
  const extension = /\.[a-z]+$/.exec(testFile)?.[0] ?? '.ts';
  return { testFile, implFile: `src/add${extension.replace(/^\.([cm]?)[jt]sx?$/, '.$1ts')}`, text, before };
}

async function findings(review: TestQualityInput): Promise<Array<[string, string | null, number]>> {
  return ((await reviewTestQuality(review)) ?? []).map((finding) => [finding.rule, finding.test, finding.line]);
}

describe('the test review reads every kind of JavaScript and TypeScript test file', () => {
  it('reads TSX and JSX tests (JSX in a .js file too), .mts and .cts files', async () => {
    const jsx = `${VITEST}import { Add } from './add';\nit('renders', () => {\n  expect(<Add a={1} />).toEqual(<Add a={1} />);\n});\nit('shows nothing', () => {\n  <Add a={2} />;\n});\n`;
    const expected: Array<[string, string | null, number]> = [
      ['constant-assertion', 'renders', 4],
      ['no-assertion', 'shows nothing', 6],
    ];
    expect(await findings(input('src/add.test.tsx', jsx))).toEqual(expected);
    expect(await findings(input('src/add.test.jsx', jsx))).toEqual(expected);
    expect(await findings(input('src/add.test.js', jsx))).toEqual(expected);
    const typed = `${VITEST}import { add } from './add';\nconst sum = <T,>(values: T[]): number => values.length;\nit('adds', () => {\n  expect(add(1, 2) as number).toBe(sum([1, 2, 3]));\n});\nit('counts', () => {\n  sum<number>([1]);\n});\n`;
    expect(await findings(input('src/add.test.mts', typed))).toEqual([['no-assertion', 'counts', 7]]);
    const commonjs = `const { expect, it } = require('vitest');\nconst { add } = require('./add');\nit('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n`;
    expect(await findings(input('src/add.test.cts', commonjs))).toEqual([]);
    expect(await findings(input('src/add.test.cjs', commonjs))).toEqual([]);
  });

  it('counts a type-only import of the implementation, a type that imports it and a re-export, as using it', async () => {
    const body = `it('adds', () => {\n  const add: Add = (a, b) => a + b;\n  expect(add(1, 2)).toBe(3);\n});\n`;
    expect(await findings(input('src/add.test.ts', `${VITEST}import type { Add } from './add';\n${body}`))).toEqual([]);
    expect(
      await findings(input('src/add.test.ts', `${VITEST}type Add = typeof import('./add').add;\n${body}`)),
    ).toEqual([]);
    expect(
      await findings(
        input(
          'src/add.test.ts',
          `${VITEST}export * from './add';\ntype Add = (a: number, b: number) => number;\n${body}`,
        ),
      ),
    ).toEqual([]);
    expect(
      await findings(
        input(
          'src/add.test.ts',
          `${VITEST}import add = require('./add');\n${body.replace('const add: Add = (a, b) => a + b;\n  ', '')}`,
        ),
      ),
    ).toEqual([]);
    expect(await findings(input('src/add.test.ts', `${VITEST}import type { Add } from './sub';\n${body}`))).toEqual([
      ['unit-not-used', null, 1],
    ]);
  });

  it('reads a file with decorators, where a decorator call is no test', async () => {
    const text = `${VITEST}import { add } from './add';\nfunction sealed(): ClassDecorator {\n  return () => undefined;\n}\n@sealed()\nclass Fixture {\n  value = add(1, 2);\n}\nit('adds', () => {\n  expect(new Fixture().value).toBe(3);\n});\n`;
    expect(await findings(input('src/add.test.ts', text))).toEqual([]);
  });

  it('fails on a TypeScript or TSX file that does not parse, and judges every test as new when the older text does not parse', async () => {
    for (const testFile of ['src/add.test.ts', 'src/add.test.tsx', 'src/add.test.mts']) {
      const error: unknown = await reviewTestQuality(
        input(testFile, `${VITEST}it('adds', () => {\n  expect(1).toBe(\n`),
      ).catch((caught: unknown) => caught);
      expect(isRatchetError(error, 'internal') && error.details).toEqual({ reason: 'unparsable' });
      expect(String(error)).toContain(`could not parse ${testFile}`);
    }
    const text = `${VITEST}import { add } from './add';\nit('adds', () => {\n  add(1, 2);\n});\n`;
    expect(await findings(input('src/add.test.ts', text, `${VITEST}it('adds', () => {`))).toEqual([
      ['no-assertion', 'adds', 3],
    ]);
  });
});

describe('the test review tells tests, assertions and mocks apart', () => {
  const head = `${VITEST}import { add } from './add';\n`;

  it('counts lines as an editor does, after characters outside ASCII', async () => {
    const text = `${head}// ${'“Sums” — ∑ 😀 '.repeat(20)}\nit('adds ünïcode', () => {\n  add(1, 2);\n});\n`;
    expect(await findings(input('src/add.test.ts', text))).toEqual([['no-assertion', 'adds ünïcode', 4]]);
  });

  it('judges test.each and test.only, skips test.skip, it.todo and a generator body, and tells titles apart after an escape', async () => {
    const old = `it('it\\'s old', () => {\n  add(1, 2);\n});\n`;
    const text = `${head}${old}test.each([[1, 2]])('adds %i', (a, b) => {\n  add(a, b);\n});\ntest.only('only', () => {\n  add(1, 2);\n});\ntest.skip('skipped', () => {});\nit.todo('later', () => {});\nit('generates', function* () {\n  yield add(1, 2);\n});\nit('it\\'s new', () => {\n  add(1, 2);\n});\n`;
    expect(await findings(input('src/add.test.ts', text, head + old))).toEqual([
      ['no-assertion', 'adds %i', 6],
      ['no-assertion', 'only', 9],
      ['no-assertion', "it's new", 17],
    ]);
  });

  it('reads a test whose title follows a comment', async () => {
    // tree-sitter's reader took the comment for the title and skipped the test: a way to hide one.
    const text = `${head}it(/* why */ 'adds', () => {\n  add(1, 2);\n});\n`;
    expect(await findings(input('src/add.test.ts', text))).toEqual([['no-assertion', 'adds', 3]]);
  });

  it('finds constant assertions through expect.soft, t.assert, chains and unary literals, not through a computed member or a pending promise', async () => {
    const text = [
      head,
      `it('soft', () => {\n  add(1, 2);\n  expect.soft(undefined).toBeUndefined();\n});`,
      `it('node', (t) => {\n  add(1, 2);\n  t.assert.ok(true);\n});`,
      `it('negated', () => {\n  add(1, 2);\n  expect(-1).not.toBe(+1);\n});`,
      `it('big', () => {\n  add(1, 2);\n  expect(1n).toEqual(\`1\`);\n});`,
      `it('computed', () => {\n  expect(1)['not'].toBe(2);\n});`,
      `it('resolves', async () => {\n  await expect(Promise.resolve(add(1, 2))).resolves.toBe(3);\n});`,
      `it('template', () => {\n  const x = add(1, 2);\n  expect(\`\${x}\`).toBe(\`\${x}\`);\n});`,
      '',
    ].join('\n');
    expect(await findings(input('src/add.test.ts', text))).toEqual([
      ['constant-assertion', 'soft', 6],
      ['constant-assertion', 'node', 10],
      ['constant-assertion', 'negated', 14],
      ['constant-assertion', 'big', 18],
      ['constant-assertion', 'template', 28],
    ]);
  });

  it('counts arrow-function helpers that assert, called or as a tag, not generator functions', async () => {
    const text = `${head}const check = (value: number) => {\n  expect(value).toBe(3);\n};\nfunction* checks(value: number) {\n  expect(value).toBe(3);\n}\nit('by arrow', () => {\n  check(add(1, 2));\n});\nit('by generator', () => {\n  checks(add(1, 2)).next();\n});\nit('by tag', () => {\n  check\`\${add(1, 2)}\`;\n});\n`;
    expect(await findings(input('src/add.test.ts', text))).toEqual([['no-assertion', 'by generator', 12]]);
  });

  it('finds mocks of the implementation by jest.mock with a template, mock.module, vi.doMock', async () => {
    for (const mock of ['jest.mock(`./add`);', "mock.module('./add', {});", "vi.doMock('./add');"]) {
      const text = `${head}${mock}\nit('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n`;
      expect(await findings(input('src/add.test.ts', text))).toEqual([['mocks-unit-under-test', null, 3]]);
    }
    const collaborator = `${head}vi.mock('./fetch');\nit('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n`;
    expect(await findings(input('src/add.test.ts', collaborator))).toEqual([]);
  });

  it('counts a dynamic import() or require() of the implementation as using it', async () => {
    for (const load of ["await import('./add')", "require('./add')"]) {
      const text = `${VITEST}it('adds', async () => {\n  const { add } = ${load};\n  expect(add(1, 2)).toBe(3);\n});\n`;
      expect(await findings(input('src/add.test.ts', text))).toEqual([]);
    }
  });
});
