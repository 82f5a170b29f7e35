import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeIndexArtifacts } from '../../src/code/index/artifacts.js';
import { createRedactor } from '../../src/core/redact.js';
import { buildIndex } from '../../src/code/index/build-index.js';
import { callGraphOf } from '../../src/code/index/call-graph.js';
import { summarizeIndex } from '../../src/code/index/summary.js';
import type { CodeIndex, IndexedFile } from '../../src/code/index/types.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

/** A small multi-module TypeScript project with a JavaScript (CommonJS) straggler and a test. */
const PROJECT: Record<string, string> = {
  '.gitignore': 'node_modules/\n',
  'README.md': '# demo\n',
  'src/core/math.ts': [
    '/** Adds two numbers. */',
    'export function add(a: number, b: number): number {',
    '  return a + b;',
    '}',
    '',
    'export function square(x: number): number {',
    '  return multiply(x, x);',
    '}',
    '',
    'function multiply(a: number, b: number): number {',
    '  return a * b;',
    '}',
    '',
  ].join('\n'),
  'src/core/strings.ts': '/** Upper-cases. */\nexport const shout = (text: string): string => text.toUpperCase();\n',
  'src/core/index.ts': "export { add, square as sq } from './math.js';\nexport * from './strings.js';\n",
  'src/app/service.ts': [
    "import { add } from '../core/math.js';",
    "import * as strings from '../core/strings.js';",
    '',
    'export class Service {',
    '  run(value: number): string {',
    '    return this.format(add(value, 1));',
    '  }',
    '',
    '  private format(value: number): string {',
    '    return strings.shout(String(value));',
    '  }',
    '}',
    '',
  ].join('\n'),
  'src/app/cli.ts': [
    "import { Command } from 'commander';",
    "import { Service } from './service.js';",
    '',
    'const program = new Command();',
    "program.option('-v, --verbose', 'talk more').requiredOption('--port <number>', 'port');",
    '',
    'export function main(): void {',
    '  new Service().run(1);',
    '}',
    '',
  ].join('\n'),
  'src/app/legacy.js':
    "const math = require('../core/math');\nexports.legacyAdd = function (a, b) {\n  return math.add(a, b);\n};\n",
  'test/math.test.ts': "import { add } from '../src/core/math.js';\nif (add(1, 2) !== 3) throw new Error('add');\n",
  'dist/out.js': 'export const built = 1;\n',
};

describe('buildIndex on a TypeScript project', () => {
  let repo: TempRepo;
  let index: CodeIndex;
  const file = (path: string): IndexedFile => {
    const found = index.files.find((candidate) => candidate.path === path);
    if (found === undefined) throw new Error(`${path} is not indexed`);
    return found;
  };

  beforeEach(async () => {
    repo = await createTempRepo({ files: PROJECT });
    // Churn: service.ts is touched by two more commits.
    for (const round of [1, 2]) {
      await repo.write({ 'src/app/service.ts': `${PROJECT['src/app/service.ts'] ?? ''}// round ${round}\n` });
      await repo.git.commitAll(`touch service ${round}`);
    }
    await repo.write({ 'node_modules/dep/index.js': 'module.exports = 1;\n' });
    index = await buildIndex({
      root: repo.dir,
      cacheDir: join(repo.dir, '.ratchet', 'index'),
      excludes: ['**/dist/**'],
      git: repo.git,
    });
  });

  afterEach(async () => {
    await repo.cleanup();
  });

  it('lists files through git, honouring .gitignore and the exclude globs', () => {
    const paths = index.files.map((entry) => entry.path);
    expect(index.git).toBe(true);
    expect(paths).toContain('README.md');
    expect(paths).toContain('src/app/legacy.js');
    expect(paths.some((path) => path.startsWith('node_modules/'))).toBe(false);
    expect(paths.some((path) => path.startsWith('dist/'))).toBe(false);
    expect(paths.some((path) => path.startsWith('.ratchet/'))).toBe(false);
    expect(file('README.md').language).toBeNull();
    expect(file('src/core/math.ts').hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('extracts symbols with kinds, export flags, line ranges, signatures and docs', () => {
    const math = file('src/core/math.ts');
    expect(math.symbols.map((symbol) => [symbol.name, symbol.kind, symbol.exported])).toEqual([
      ['add', 'function', true],
      ['square', 'function', true],
      ['multiply', 'function', false],
    ]);
    expect(math.symbols[0]).toMatchObject({
      startLine: 2,
      endLine: 4,
      signature: 'function add(a: number, b: number): number',
      doc: 'Adds two numbers.',
    });
    const service = file('src/app/service.ts').symbols;
    expect(service.map((symbol) => [symbol.container ?? null, symbol.name, symbol.kind, symbol.exported])).toEqual([
      [null, 'Service', 'class', true],
      ['Service', 'run', 'method', true],
      ['Service', 'format', 'method', false],
    ]);
    expect(file('src/core/strings.ts').symbols[0]).toMatchObject({
      name: 'shout',
      kind: 'function',
      signature: 'const shout = (text: string): string',
      doc: 'Upper-cases.',
    });
    expect(file('src/app/legacy.js').exports).toEqual([{ name: 'legacyAdd', kind: 'function' }]);
    expect(file('src/app/cli.ts').cliFlags).toEqual(['--port', '--verbose', '-v']);
  });

  it('resolves relative imports with .js -> .ts mapping, extension-less require and re-exports', () => {
    const resolved = (path: string): Record<string, string[]> =>
      Object.fromEntries(file(path).imports.map((ref) => [ref.specifier, ref.resolved]));
    expect(resolved('src/app/service.ts')).toEqual({
      '../core/math.js': ['src/core/math.ts'],
      '../core/strings.js': ['src/core/strings.ts'],
    });
    expect(resolved('src/app/cli.ts')).toEqual({ commander: [], './service.js': ['src/app/service.ts'] });
    expect(resolved('src/app/legacy.js')).toEqual({ '../core/math': ['src/core/math.ts'] });
    expect(resolved('src/core/index.ts')).toEqual({
      './math.js': ['src/core/math.ts'],
      './strings.js': ['src/core/strings.ts'],
    });
    expect(index.dependencies['src/app/cli.ts']).toEqual(['src/app/service.ts']);
  });

  it('computes fan-in from the reverse dependency graph', () => {
    expect(index.dependents['src/core/math.ts']).toEqual([
      'src/app/legacy.js',
      'src/app/service.ts',
      'src/core/index.ts',
      'test/math.test.ts',
    ]);
    const math = index.risk.find((entry) => entry.path === 'src/core/math.ts');
    expect(math).toMatchObject({ fanIn: 3, tests: ['test/math.test.ts'] });
  });

  it('resolves call edges through imports, namespaces, this and constructors', () => {
    const graph = callGraphOf(index);
    expect(graph['src/app/service.ts#Service.run']).toEqual([
      'src/app/service.ts#Service.format',
      'src/core/math.ts#add',
    ]);
    expect(graph['src/app/service.ts#Service.format']).toEqual(['src/core/strings.ts#shout']);
    expect(graph['src/core/math.ts#square']).toEqual(['src/core/math.ts#multiply']);
    expect(graph['src/app/cli.ts#main']).toEqual(['src/app/service.ts#Service', 'src/app/service.ts#Service.run']);
    expect(graph['src/app/legacy.js#legacyAdd']).toEqual(['src/core/math.ts#add']);
    expect(callGraphOf(index)).toBe(graph);
  });

  it('orders the risk register: untested, churned files first, tested ones later', () => {
    const order = index.risk.map((entry) => entry.path);
    expect(order).not.toContain('test/math.test.ts');
    const service = index.risk.find((entry) => entry.path === 'src/app/service.ts');
    expect(service).toMatchObject({ churn: 3, fanIn: 1, tests: [] });
    expect(order.indexOf('src/app/service.ts')).toBeLessThan(order.indexOf('src/app/cli.ts'));
    expect(order.indexOf('src/app/cli.ts')).toBeLessThan(order.indexOf('src/core/math.ts'));
    expect(index.risk.map(({ path, score }) => [path, score])).toEqual([
      ['src/app/service.ts', 50],
      ['src/core/strings.ts', 45],
      ['src/app/cli.ts', 35],
      ['src/app/legacy.js', 34],
      ['src/core/index.ts', 33],
      ['src/core/math.ts', 27],
    ]);
  });

  it('writes every artifact, parseable, and keeps an existing task ledger', async () => {
    const dir = join(repo.root, 'artifacts');
    await writeIndexArtifacts(index, dir);
    const readJson = async (name: string): Promise<Record<string, unknown>> =>
      JSON.parse(await readFile(join(dir, name), 'utf8')) as Record<string, unknown>;
    const symbols = (await readJson('SYMBOL_REGISTRY.json')).symbols as { file: string; name: string }[];
    expect(symbols).toContainEqual(
      expect.objectContaining({ file: 'src/core/math.ts', name: 'add', kind: 'function' }),
    );
    const dependencies = await readJson('DEPENDENCY_GRAPH.json');
    expect((dependencies.dependencies as Record<string, string[]>)['src/app/cli.ts']).toEqual(['src/app/service.ts']);
    expect((dependencies.unresolved as Record<string, string[]>)['src/app/cli.ts']).toEqual(['commander']);
    const calls = (await readJson('CALL_GRAPH.json')).calls as Record<string, string[]>;
    expect(calls['src/core/math.ts#square']).toEqual(['src/core/math.ts#multiply']);
    const risk = await readJson('RISK_REGISTER.json');
    expect(risk.formula).toMatch(/^score = /);
    expect((risk.entries as { path: string }[])[0]?.path).toBe(index.risk[0]?.path);
    const api = await readJson('CONTRACTS/public_api_snapshot.json');
    expect(Object.keys(api.modules as object)).toContain('src/core/math.ts');
    const snapshot = await readFile(join(dir, 'ARCHITECTURE_SNAPSHOT.md'), 'utf8');
    expect(snapshot).toContain('# Architecture snapshot');
    expect(snapshot).toContain('| src/core/math.ts | 4 |');
    expect(snapshot).toContain('src/app');
    expect(await readFile(join(dir, 'TASK_LEDGER.jsonl'), 'utf8')).toBe('');

    await writeFile(join(dir, 'TASK_LEDGER.jsonl'), '{"batch":1}\n');
    await writeIndexArtifacts(index, dir);
    expect(await readFile(join(dir, 'TASK_LEDGER.jsonl'), 'utf8')).toBe('{"batch":1}\n');
  });

  it('writes no key into the artifacts when given the redactor, though the code quotes one', async () => {
    const key = 'sk-ant-api03-artifactKEY0123456789abcdefghij';
    await repo.write({
      'src/keyed.ts': `/** Calls the API with ${key}. */\nexport function keyed(): string {\n  return 'x';\n}\n`,
    });
    await repo.git.commitAll('a doc comment that quotes a key');
    const keyed = await buildIndex({
      root: repo.dir,
      cacheDir: join(repo.dir, '.ratchet', 'index'),
      excludes: [],
      git: repo.git,
    });
    const plain = await writeIndexArtifacts(keyed, join(repo.root, 'plain'));
    const texts = async (files: string[]): Promise<string> =>
      (await Promise.all(files.map((path) => readFile(path, 'utf8')))).join('\n');
    expect(await texts(plain.files)).toContain(key); // The doc comment reaches the symbol registry.
    const redacted = await writeIndexArtifacts(keyed, join(repo.root, 'redacted'), { redact: createRedactor([key]) });
    const written = await texts(redacted.files);
    expect(written).not.toContain(key);
    expect(written).toContain('Calls the API with');
    for (const path of redacted.files.filter((path) => path.endsWith('.json')))
      expect(() => JSON.parse(readFileSync(path, 'utf8')) as unknown, path).not.toThrow();
  });

  it('summarises the index for --json', () => {
    const summary = summarizeIndex(index);
    expect(summary).toMatchObject({
      root: repo.dir,
      files: index.files.length,
      sourceFiles: 7,
      testFiles: 1,
      languages: { javascript: 1, typescript: 6 },
      parsed: 7,
      reused: 0,
      removed: 0,
      git: true,
    });
    // cli: program, main; legacy: math, legacyAdd; service: Service, run, format; math: add, square,
    // multiply; strings: shout. Exported: main, legacyAdd, Service, run, add, square, shout.
    expect(summary.symbols).toBe(11);
    expect(summary.exportedSymbols).toBe(7);
    expect(summary.importEdges).toBe(7);
    // The edges of the call graph test above, and the test module's call of add.
    expect(summary.callEdges).toBe(8);
    expect(summary.durationMs).toBe(index.stats.durationMs);
    expect(summary.riskiest).toEqual([
      { path: 'src/app/service.ts', score: 50 },
      { path: 'src/core/strings.ts', score: 45 },
      { path: 'src/app/cli.ts', score: 35 },
      { path: 'src/app/legacy.js', score: 34 },
      { path: 'src/core/index.ts', score: 33 },
    ]);
  });
});
