import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildIndex, type BuildIndexOptions } from '../../src/code/index/build-index.js';
import { compareApi, snapshotPublicApi, type PublicApiSnapshot } from '../../src/code/public-api.js';

const MATH = [
  'export function add(a: number, b: number): number {',
  '  return a + b;',
  '}',
  'export function square(x: number): number {',
  '  return x * x;',
  '}',
  'export interface Shape {',
  '  area(): number;',
  '}',
  'export class Circle implements Shape {',
  '  constructor(private readonly radius: number) {}',
  '  area(): number {',
  '    return 3.14 * this.radius * this.radius;',
  '  }',
  '  private secret(): void {}',
  '}',
  'export default function main(): void {}',
  'export type Unit = "cm" | "in";',
  'function internal(): void {}',
  '',
].join('\n');

describe('public API snapshots', () => {
  let root: string;
  let options: BuildIndexOptions;

  const write = async (files: Record<string, string>): Promise<void> => {
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, 'tree', path)), { recursive: true });
      await writeFile(join(root, 'tree', path), text);
    }
  };
  const snapshot = async (): Promise<PublicApiSnapshot> => snapshotPublicApi(await buildIndex(options));

  beforeEach(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-api-')));
    options = { root: join(root, 'tree'), cacheDir: join(root, 'cache'), excludes: [], git: false };
    await write({
      'src/math.ts': MATH,
      'src/index.ts': "export { add, square as sq } from './math.js';\nexport * from './other.js';\n",
      'src/other.ts': 'export const PI = 3.14;\n',
      'src/cli.ts': "import { program } from 'commander';\nprogram.option('-q, --quiet').option('--level <n>');\n",
      'src/math.test.ts': "import { add } from './math.js';\nexport const check = add(1, 2);\n",
    });
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('records exports with kinds and signatures, public methods, re-exports and CLI flags', async () => {
    const api = await snapshot();
    expect(api.modules['src/math.ts']?.exports).toEqual({
      Circle: { kind: 'class', signature: 'class Circle implements Shape' },
      'Circle.area': { kind: 'method', signature: 'area(): number' },
      'Circle.constructor': { kind: 'method', signature: 'constructor(private readonly radius: number)' },
      Shape: { kind: 'interface', signature: 'interface Shape' },
      Unit: { kind: 'type', signature: 'type Unit = "cm" | "in"' },
      add: { kind: 'function', signature: 'function add(a: number, b: number): number' },
      default: { kind: 'function', signature: 'function main(): void' },
      square: { kind: 'function', signature: 'function square(x: number): number' },
    });
    // A barrel's re-exports carry the declarations' signatures.
    expect(api.modules['src/index.ts']?.exports).toEqual({
      '* from ./other.js': { kind: 'reexport', signature: "export * from './other.js'" },
      add: { kind: 'function', signature: 'function add(a: number, b: number): number' },
      sq: { kind: 'function', signature: 'function square(x: number): number' },
    });
    expect(api.cliFlags).toEqual(['--level', '--quiet', '-q']);
    expect(api.modules['src/math.test.ts']).toBeUndefined();
    expect(api.modules['src/cli.ts']).toBeUndefined();
  });

  it('accepts a list of indexed files as well as an index', async () => {
    const index = await buildIndex(options);
    expect(snapshotPublicApi(index.files)).toEqual(snapshotPublicApi(index));
  });

  it('reports no difference between equal snapshots', async () => {
    const before = await snapshot();
    expect(compareApi(before, await snapshot())).toEqual({ removed: [], changed: [], added: [] });
  });

  it('detects a removed export and a changed signature as breaking, an added export as compatible', async () => {
    const before = await snapshot();
    await write({
      'src/math.ts': MATH.replace(/export function square[\s\S]*?\n}\n/, '')
        .replace('add(a: number, b: number): number', 'add(a: number, b: number, c = 0): number')
        .concat('export function cube(x: number): number {\n  return x * x * x;\n}\n'),
    });
    const diff = compareApi(before, await snapshot());
    expect(diff.removed).toEqual(['src/math.ts#square']);
    // The barrel re-export of `square` as `sq` now names nothing the index can resolve.
    expect(diff.changed).toEqual(['src/index.ts#add', 'src/index.ts#sq', 'src/math.ts#add']);
    expect(diff.added).toEqual(['src/math.ts#cube']);
  });

  it('detects removed CLI flags and removed class methods', async () => {
    const before = await snapshot();
    await write({
      'src/cli.ts': "import { program } from 'commander';\nprogram.option('-q, --quiet');\n",
      'src/math.ts': MATH.replace('  area(): number {\n    return 3.14 * this.radius * this.radius;\n  }\n', ''),
    });
    const diff = compareApi(before, await snapshot());
    expect(diff.removed).toEqual(['cli --level', 'src/math.ts#Circle.area']);
    expect(diff.added).toEqual([]);
  });

  it('treats moving a module as removing its exports and adding them elsewhere', async () => {
    const before = await snapshot();
    await rm(join(root, 'tree', 'src/other.ts'));
    await write({ 'src/constants.ts': 'export const PI = 3.14;\n' });
    const diff = compareApi(before, await snapshot());
    expect(diff.removed).toEqual(['src/other.ts#PI']);
    expect(diff.added).toEqual(['src/constants.ts#PI']);
  });
});
