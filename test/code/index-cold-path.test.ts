import { hash } from 'node:crypto';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processWork } from '../../src/code/index/build-steps.js';
import { pathUnderRoot } from '../../src/code/index/path-under-root.js';
import { processFile, type FileOutcome } from '../../src/code/index/process-file.js';
import { ImportResolver, NO_MANIFESTS } from '../../src/code/index/resolve-imports.js';
import { SourceExtractor } from '../../src/code/index/source-extractor.js';

/**
 * What the cold path's shortcuts must not change: files are read into one shared buffer, relative
 * JavaScript imports are resolved once per directory and specifier, and extraction answers without
 * a promise once oxc is loaded.
 */
describe('the cold index path', () => {
  let root: string;
  let extractor: SourceExtractor;

  beforeEach(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'ratchet-index-cold-')));
    extractor = new SourceExtractor();
  });

  afterEach(async () => {
    extractor[Symbol.dispose]();
    await rm(root, { recursive: true, force: true });
  });

  const outcomeOf = async (path: string, size: number): Promise<FileOutcome | undefined> =>
    await processFile(extractor, root, { path, size }, 4 * 1024 * 1024);

  it('reads every file whole, whatever was read before it and whatever size the listing gave', async () => {
    const long = `export function long(): string {\n  return '${'x'.repeat(5000)}';\n}\n`;
    const short = 'export const short = 1;\n';
    // Grown past the shared buffer since it was listed as 10 bytes: read whole all the same.
    const grown = `export const grown = '${'y'.repeat(1536 * 1024)}';\n`;
    await writeFile(join(root, 'long.ts'), long);
    await writeFile(join(root, 'short.ts'), short);
    await writeFile(join(root, 'grown.ts'), grown);

    for (const [path, text, listed] of [
      ['long.ts', long, long.length],
      ['short.ts', short, short.length],
      ['grown.ts', grown, 10],
      ['short.ts', short, short.length],
    ] as const) {
      const outcome = await outcomeOf(path, listed);
      expect(outcome?.size, path).toBe(Buffer.byteLength(text));
      expect(outcome?.hash, path).toBe(hash('sha256', text));
      expect(outcome?.lines, path).toBe(text.split('\n').length - 1);
      const parse = outcome?.parse;
      expect(typeof parse === 'object' && parse !== null ? parse.symbols.map((symbol) => symbol.name) : parse).toEqual([
        path.slice(0, -3),
      ]);
    }
    expect(await outcomeOf('missing.ts', 10)).toBeUndefined();
  });

  it('counts the lines of a file it parses (from the text) as of a file it does not parse (from the bytes)', async () => {
    const cases: [string, Buffer][] = [
      ['empty', Buffer.from('')],
      ['one line without its newline', Buffer.from('export const a = 1;')],
      ['a blank last line', Buffer.from('export const a = 1;\n\n')],
      ['CRLF', Buffer.from('export const a = 1;\r\nexport const b = 2;\r\n')],
      // A multi-byte sequence cut short before a newline: decoding replaces it, the newline stays.
      [
        'invalid UTF-8',
        Buffer.concat([Buffer.from('export const a = "'), Buffer.from([0xe2, 0x82]), Buffer.from('";\nx')]),
      ],
    ];
    for (const [name, bytes] of cases) {
      let expected = 0;
      for (const byte of bytes) if (byte === 10) expected++;
      if (bytes.length > 0 && bytes[bytes.length - 1] !== 10) expected++;
      await writeFile(join(root, 'parsed.ts'), bytes);
      await writeFile(join(root, 'not-parsed.txt'), bytes);
      const parsed = await outcomeOf('parsed.ts', bytes.length);
      expect(typeof parsed?.parse, name).toBe('object');
      expect(parsed?.lines, name).toBe(expected);
      expect((await outcomeOf('not-parsed.txt', bytes.length))?.lines, name).toBe(expected);
    }
  });

  it('parses a copy of a file once, but the same text under another kind of name again', async () => {
    const text = 'export function run(): void {\n  helper();\n}\n';
    for (const path of ['a.ts', 'copy/a.ts', 'a.d.ts', 'b.mts']) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
    const work = ['a.ts', 'copy/a.ts', 'a.d.ts', 'b.mts'].map((path) => ({ path, size: text.length }));
    const { outcomes } = await processWork(root, work, {
      maxParseBytes: 1024 * 1024,
      workers: 0,
      javaScriptInThread: true,
    });
    const [first, copy, declaration, module] = outcomes.map((outcome) => outcome?.parse);
    expect(copy).toBe(first);
    // A declaration file has no calls; another extension may parse differently: each its own parse.
    expect(declaration).not.toBe(first);
    expect(declaration).toMatchObject({ calls: [] });
    expect(first).toMatchObject({ calls: [{ caller: 'run', callee: 'helper' }] });
    expect(module).not.toBe(first);
    expect(module).toEqual(first);
  });

  it('joins a listed path to the root as path.join does', () => {
    for (const path of [
      'a.ts',
      'src/a.ts',
      '.github/x.yml',
      'a/.b/c',
      'a/../b',
      './a',
      'a//b',
      'a/',
      '',
      '/a',
      'a\\b',
      'a/..',
    ])
      expect(pathUnderRoot(root, path), path).toBe(join(root, path));
  });

  it('resolves the same relative specifier from two directories to each directory’s own file', () => {
    const resolver = new ImportResolver(['a/index.ts', 'a/util.ts', 'b/index.ts', 'b/util/index.ts'], NO_MANIFESTS);
    const fromA = resolver.resolve('a/index.ts', 'typescript', { specifier: './util.js', names: [], line: 1 });
    fromA.push('changed by the caller');
    expect(resolver.resolve('a/index.ts', 'typescript', { specifier: './util.js', names: [], line: 2 })).toEqual([
      'a/util.ts',
    ]);
    expect(resolver.resolve('b/index.ts', 'typescript', { specifier: './util.js', names: [], line: 1 })).toEqual([]);
    expect(resolver.resolve('b/index.ts', 'typescript', { specifier: './util', names: [], line: 1 })).toEqual([
      'b/util/index.ts',
    ]);
  });

  it('extracts JavaScript and TypeScript without a promise once oxc is loaded', async () => {
    const first = extractor.extractNow('a.ts', 'export function a(): void {}\n');
    expect(first).toBeInstanceOf(Promise);
    expect((await first)?.symbols.map((symbol) => symbol.name)).toEqual(['a']);
    const next = extractor.extractNow('b.js', 'function b() { return a(); }\n');
    expect(next).not.toBeInstanceOf(Promise);
    expect(next).toMatchObject({ language: 'javascript', calls: [{ caller: 'b', callee: 'a' }] });
    // A file oxc rejects still goes to tree-sitter, which needs loading: a promise again.
    const broken = extractor.extractNow(
      'c.ts',
      'export function c(): void {}\n\nexport function editing(value: number {\n',
    );
    expect(broken).toBeInstanceOf(Promise);
    expect((await broken)?.symbols.map((symbol) => symbol.name)).toContain('c');
  });
});
