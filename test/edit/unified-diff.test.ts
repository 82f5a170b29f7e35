import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { locTouched, normaliseDiff, parseUnifiedDiff, touchedFiles } from '../../src/edit/unified-diff.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { numberedLines, realDiff } from './helpers.js';

let repo: TempRepo;
beforeEach(async () => {
  repo = await createTempRepo({
    files: {
      'src/app.ts': numberedLines(20),
      'src/old-name.ts': numberedLines(10, 'keep'),
      'docs/gone.md': 'bye\nfor now\n',
      'bin/run.sh': '#!/bin/sh\necho hi\n',
      'img/logo.bin': 'old\0binary\n',
    },
  });
});
afterEach(async () => {
  await repo.cleanup();
});

/** Applies `patchText` for real and returns whether git accepted it. */
async function applies(patchText: string): Promise<boolean> {
  return (await repo.git.applyCheck(patchText)).ok;
}

describe('parseUnifiedDiff on real git diff output', () => {
  it('reads modified, added, deleted, renamed, mode-changed and binary files', async () => {
    const text = await realDiff(repo, {
      'src/app.ts': numberedLines(20).replace('line3\n', 'LINE3\nextra\n').replace('line18\n', ''),
      'src/new.ts': 'export const x = 1;\n',
      'docs/gone.md': null,
      'src/old-name.ts': { renameTo: 'src/new-name.ts' },
      'bin/run.sh': { mode: 0o755 },
      'img/logo.bin': Buffer.from([0, 1, 2, 3, 255, 0, 9]),
    });
    // Every path the diff touches, both names of the renamed file included.
    const everyPath = [
      'bin/run.sh',
      'docs/gone.md',
      'img/logo.bin',
      'src/app.ts',
      'src/new-name.ts',
      'src/new.ts',
      'src/old-name.ts',
    ].sort();
    const patch = parseUnifiedDiff(text);
    expect(patch.errors).toEqual([]);
    const byPath = new Map(patch.files.map((file) => [file.newPath ?? file.oldPath, file]));

    expect(byPath.get('src/app.ts')).toMatchObject({ status: 'modified', added: 2, deleted: 2, binary: false });
    expect(byPath.get('src/new.ts')).toMatchObject({ status: 'added', oldPath: null, newMode: '100644', added: 1 });
    expect(byPath.get('docs/gone.md')).toMatchObject({ status: 'deleted', newPath: null, deleted: 2 });
    expect(byPath.get('src/new-name.ts')).toMatchObject({
      status: 'renamed',
      oldPath: 'src/old-name.ts',
      similarity: '100%',
      added: 0,
      deleted: 0,
    });
    expect(byPath.get('bin/run.sh')).toMatchObject({ status: 'modified', oldMode: '100644', newMode: '100755' });
    const binary = byPath.get('img/logo.bin');
    expect(binary?.binary).toBe(true);
    expect(binary?.binaryPatch?.[0]).toMatch(/^(literal|delta) \d+$/);

    expect(touchedFiles(patch).sort()).toEqual(everyPath);
    expect(locTouched(patch)).toBe(2 + 2 + 1 + 2);

    // What normaliseDiff prints applies, and gives the same tree as the original diff.
    const normalised = normaliseDiff(text);
    expect(normaliseDiff(normalised)).toBe(normalised);
    expect(await applies(normalised)).toBe(true);
    await repo.git.apply(normalised);
    const status = await repo.git.status();
    expect(status.files.map((file) => file.path).sort()).toEqual(everyPath);
    expect(await readFile(join(repo.dir, 'img/logo.bin'))).toEqual(Buffer.from([0, 1, 2, 3, 255, 0, 9]));
  });

  it('marks "Binary files ... differ" sections as binary without data', async () => {
    const text = await realDiff(repo, { 'img/logo.bin': Buffer.from([9, 0, 9]) });
    const marker = text.replace(/GIT binary patch[\s\S]*$/, 'Binary files a/img/logo.bin and b/img/logo.bin differ\n');
    const patch = parseUnifiedDiff(marker);
    expect(patch.errors).toEqual([]);
    expect(patch.files).toMatchObject([{ newPath: 'img/logo.bin', binary: true, binaryPatch: null, added: 0 }]);
    expect(normaliseDiff(patch)).toContain('Binary files a/img/logo.bin and b/img/logo.bin differ');
  });

  it('reads diffs made with --no-prefix', async () => {
    const text = await realDiff(repo, { 'src/app.ts': numberedLines(20).replace('line5\n', 'five\n') }, [
      '--no-prefix',
    ]);
    expect(text).toContain('--- src/app.ts');
    const patch = parseUnifiedDiff(text);
    expect(patch.files).toMatchObject([{ oldPath: 'src/app.ts', newPath: 'src/app.ts', added: 1, deleted: 1 }]);
    expect(await applies(normaliseDiff(patch))).toBe(true);
  });

  it('reads body lines that look like headers, several hunks and missing final newlines', async () => {
    await repo.write({ 'db/q.sql': '-- comment\nselect 1;\n' + numberedLines(20) + 'end' });
    await repo.git.commitAll('sql');
    const text = await realDiff(repo, {
      'db/q.sql': '++ counter\nselect 1;\n' + numberedLines(20).replace('line15\n', 'fifteen\n') + 'END',
    });
    expect(text).toContain('\n--- comment\n+++ counter\n');
    expect(text).toContain('\\ No newline at end of file');
    const patch = parseUnifiedDiff(text);
    expect(patch.errors).toEqual([]);
    expect(patch.files).toHaveLength(1);
    expect(patch.files[0]).toMatchObject({ added: 3, deleted: 3 });
    expect(patch.files[0]?.hunks).toHaveLength(2);
    expect(patch.repairs).toEqual([]);
    expect(await applies(normaliseDiff(patch))).toBe(true);
  });

  it('reads quoted paths with special characters', async () => {
    const text = await realDiff(repo, { 'src/tab\there "q".ts': 'x\n' });
    expect(text).toContain('"b/src/tab\\there \\"q\\".ts"');
    const patch = parseUnifiedDiff(text);
    expect(patch.files[0]?.newPath).toBe('src/tab\there "q".ts');
    expect(await applies(normaliseDiff(patch))).toBe(true);
  });
});

describe('model quirks', () => {
  let diff: string;
  beforeEach(async () => {
    diff = await realDiff(repo, { 'src/app.ts': numberedLines(20).replace('line10\n', 'ten\n') });
  });

  it('unwraps a ```diff fence with prose around it', async () => {
    const text = `Here is the change:\n\n\`\`\`diff\n${diff}\`\`\`\n\nThis renames nothing.\n`;
    const patch = parseUnifiedDiff(text);
    expect(patch.errors).toEqual([]);
    expect(patch.repairs).toContain('removed the Markdown code fence around the diff');
    expect(touchedFiles(patch)).toEqual(['src/app.ts']);
    expect(await applies(normaliseDiff(text))).toBe(true);
  });

  it('reads CRLF diffs', async () => {
    const text = diff.replaceAll('\n', '\r\n');
    const patch = parseUnifiedDiff(text);
    expect(patch.repairs).toContain('converted CRLF line endings to LF');
    expect(patch.files[0]).toMatchObject({ added: 1, deleted: 1 });
    expect(normaliseDiff(text)).not.toContain('\r');
    expect(await applies(normaliseDiff(text))).toBe(true);
  });

  it('reads plain ---/+++ headers without diff --git, with or without a/ b/ prefixes', async () => {
    const hunks = diff.slice(diff.indexOf('@@'));
    for (const [oldName, newName] of [
      ['a/src/app.ts', 'b/src/app.ts'],
      ['src/app.ts', 'src/app.ts'],
      ['src/app.ts\t2024-01-01 10:00:00', 'src/app.ts\t2024-01-02 10:00:00'],
    ]) {
      const text = `--- ${oldName}\n+++ ${newName}\n${hunks}`;
      const patch = parseUnifiedDiff(text);
      expect(patch.errors).toEqual([]);
      expect(patch.files).toMatchObject([{ oldPath: 'src/app.ts', newPath: 'src/app.ts', status: 'modified' }]);
      expect(await applies(normaliseDiff(patch))).toBe(true);
    }
  });

  it('treats /dev/null as file creation and deletion in plain diffs', async () => {
    const text =
      '--- /dev/null\n+++ b/src/fresh.ts\n@@ -0,0 +1,2 @@\n+a\n+b\n--- a/docs/gone.md\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-bye\n-for now\n';
    const patch = parseUnifiedDiff(text);
    expect(patch.files).toMatchObject([
      { oldPath: null, newPath: 'src/fresh.ts', status: 'added', added: 2 },
      { oldPath: 'docs/gone.md', newPath: null, status: 'deleted', deleted: 2 },
    ]);
    const normalised = normaliseDiff(patch);
    expect(normalised).toContain('new file mode 100644');
    expect(normalised).toContain('deleted file mode 100644');
    expect(await applies(normalised)).toBe(true);
  });

  it('recounts wrong hunk line counts and fills in missing line numbers', async () => {
    const wrongCounts = diff.replace(/^@@ .* @@/m, '@@ -7,99 +7,1 @@');
    const patch = parseUnifiedDiff(wrongCounts);
    expect(patch.errors).toEqual([]);
    expect(patch.repairs).toContain('recounted hunk line counts');
    expect(patch.files[0]?.hunks[0]).toMatchObject({ oldLines: 7, newLines: 7 });
    expect(await applies(normaliseDiff(patch))).toBe(true);

    const noNumbers = diff.replace(/^@@ .* @@/m, '@@ ... @@');
    const repaired = parseUnifiedDiff(noNumbers);
    expect(repaired.repairs).toContain('added missing hunk line numbers');
    expect(await applies(normaliseDiff(repaired))).toBe(true);
  });

  it('restores blank context lines that lost their leading space', async () => {
    await repo.write({ 'src/blank.ts': 'a\n\nb\nc\n' });
    await repo.git.commitAll('blank');
    const text = '--- a/src/blank.ts\n+++ b/src/blank.ts\n@@ -1,4 +1,4 @@\n a\n\n-b\n+B\n c\n';
    const patch = parseUnifiedDiff(text);
    expect(patch.repairs).toContain('restored the leading space of blank context lines');
    expect(await applies(normaliseDiff(patch))).toBe(true);
  });

  it('reports hunks without a file header and empty input', () => {
    const orphan = parseUnifiedDiff('@@ -1,1 +1,1 @@\n-a\n+b\n');
    expect(orphan.files).toEqual([]);
    expect(orphan.errors[0]).toMatch(/no file header/);
    expect(parseUnifiedDiff('Sorry, no changes needed.')).toEqual({ files: [], errors: [], repairs: [] });
  });
});
