import { describe, expect, it } from 'vitest';
import { applySearchReplace, parseSearchReplace, type SearchReplaceBlock } from '../../src/edit/search-replace.js';

const RESPONSE = `I'll rename the constant and fix the greeting.

src/app.ts
\`\`\`ts
<<<<<<< SEARCH
const a = 1;
=======
const answer = 1;
>>>>>>> REPLACE
\`\`\`

<<<<<<< SEARCH
  return 'hi';
=======
  return 'hello';
>>>>>>> REPLACE

**src/new.ts**
<<<<<<< SEARCH
=======
export const created = true;
>>>>>>> REPLACE
`;

const APP = "const a = 1;\nexport function greet() {\n  return 'hi';\n}\n";

describe('parseSearchReplace', () => {
  it('reads blocks with the path before the block or its fence, reusing the previous path', () => {
    const parsed = parseSearchReplace(RESPONSE);
    expect(parsed.errors).toEqual([]);
    expect(parsed.blocks).toEqual([
      { path: 'src/app.ts', search: 'const a = 1;\n', replace: 'const answer = 1;\n' },
      { path: 'src/app.ts', search: "  return 'hi';\n", replace: "  return 'hello';\n" },
      { path: 'src/new.ts', search: '', replace: 'export const created = true;\n' },
    ]);
  });

  it('reads CRLF responses and reports malformed blocks', () => {
    expect(parseSearchReplace(RESPONSE.replaceAll('\n', '\r\n')).blocks).toHaveLength(3);
    expect(parseSearchReplace('Here you go:\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n').errors[0]).toMatch(
      /Line 2: .*no file path/,
    );
    expect(parseSearchReplace('x.ts\n<<<<<<< SEARCH\na\n').errors[0]).toMatch(/no '=======' line/);
    expect(parseSearchReplace('x.ts\n<<<<<<< SEARCH\na\n=======\nb\n').errors[0]).toMatch(/no '>>>>>>> REPLACE' line/);
  });

  it("reads seed 004's <edit> notation", () => {
    const text =
      '<edit file="src/app.ts"><search>\nconst a = 1;\n</search><replacement>\nconst b = 2;\n</replacement></edit>';
    expect(parseSearchReplace(text)).toEqual({
      blocks: [{ path: 'src/app.ts', search: 'const a = 1;\n', replace: 'const b = 2;\n' }],
      errors: [],
    });
  });
});

describe('applySearchReplace', () => {
  it('applies blocks that each match exactly once, in order, and creates new files', () => {
    const files = new Map([['src/app.ts', APP]]);
    const result = applySearchReplace(files, parseSearchReplace(RESPONSE).blocks);
    expect(result).toEqual({
      ok: true,
      files: new Map([
        ['src/app.ts', "const answer = 1;\nexport function greet() {\n  return 'hello';\n}\n"],
        ['src/new.ts', 'export const created = true;\n'],
      ]),
    });
    expect(files.get('src/app.ts')).toBe(APP); // the input is not modified
  });

  it('names the file and count when SEARCH matches zero times', () => {
    const result = applySearchReplace(new Map([['src/app.ts', APP]]), [
      { path: 'src/app.ts', search: 'const z = 9;\n', replace: '' },
    ]);
    expect(result).toMatchObject({
      ok: false,
      failures: [{ block: 0, kind: 'not-found', matches: 0, path: 'src/app.ts' }],
    });
    if (result.ok) return;
    expect(result.failures[0]?.message).toMatch(/SEARCH matches 0 times in src\/app\.ts; it must match exactly once/);
  });

  it('hints when SEARCH differs from the file only in whitespace', () => {
    const result = applySearchReplace(new Map([['src/app.ts', APP]]), [
      { path: 'src/app.ts', search: "export function greet() {\n    return 'hi';\n", replace: '' },
    ]);
    if (result.ok) throw new Error('expected a failure');
    expect(result.failures[0]?.message).toMatch(/matches only if whitespace is ignored, at line 2/);
  });

  it('names the count and lines when SEARCH matches many times', () => {
    const result = applySearchReplace(new Map([['x.ts', 'a();\nb();\na();\n']]), [
      { path: 'x.ts', search: 'a();\n', replace: 'c();\n' },
    ]);
    expect(result).toMatchObject({ ok: false, failures: [{ kind: 'ambiguous', matches: 2 }] });
    if (result.ok) return;
    expect(result.failures[0]?.message).toContain('SEARCH matches 2 times in x.ts (lines 1, 3)');
  });

  it('is all or nothing: one failing block returns no texts and lists every failure', () => {
    const blocks: SearchReplaceBlock[] = [
      { path: 'src/app.ts', search: 'const a = 1;\n', replace: 'const a = 2;\n' },
      { path: 'src/missing.ts', search: 'x', replace: 'y' },
      { path: 'src/app.ts', search: APP, replace: '' }, // no longer matches after block 1
      { path: 'src/app.ts', search: '', replace: 'clobber' },
    ];
    const result = applySearchReplace(new Map([['src/app.ts', APP]]), blocks);
    expect(result).toMatchObject({
      ok: false,
      failures: [
        { block: 1, kind: 'missing-file' },
        { block: 2, kind: 'not-found' },
        { block: 3, kind: 'file-exists' },
      ],
    });
    expect('files' in result).toBe(false);
  });

  it('keeps CRLF files CRLF and matches a last line without a final newline', () => {
    const crlf = applySearchReplace(new Map([['w.ts', 'one\r\ntwo\r\n']]), [
      { path: 'w.ts', search: 'two\n', replace: 'TWO\n' },
    ]);
    expect(crlf).toEqual({ ok: true, files: new Map([['w.ts', 'one\r\nTWO\r\n']]) });
    const noEol = applySearchReplace(new Map([['n.ts', 'one\ntwo']]), [
      { path: 'n.ts', search: 'two\n', replace: 'TWO\n' },
    ]);
    expect(noEol).toEqual({ ok: true, files: new Map([['n.ts', 'one\nTWO']]) });
  });
});
