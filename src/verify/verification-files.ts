import { readFile } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { glob } from 'tinyglobby';
import { filesNamedByCommands, filesNamedIn } from './internal/named-files.js';
import { PARTIAL_FILES, partsOf, sha256, type PartialFile } from './internal/verification-parts.js';

/*
 * The files that decide how a project's tests (and its lint and typecheck) run and are reported:
 * one definition for the TDD gates, which lock them after RED as they lock the test files, and for
 * refactor admission, which refuses every patch to them. A change to any of them could make a
 * failing suite report a pass without touching a test: a test script that rewrites the report,
 * a `conftest.py` hook that turns failures into passes, `testFailureIgnore` in Surefire, a
 * `.cargo/config` runner, an `.npmrc` that swaps the shell npm runs scripts with.
 *
 * Some files hold settings of every kind (`package.json`, `pyproject.toml`, `setup.cfg`,
 * `Cargo.toml`, `go.mod`, `pom.xml`): for those the TDD lock covers only the parts that decide
 * how tests run (see `PARTS`), so GREEN can still add an `exports` entry or a dependency. A file
 * whose parts cannot be read (it does not parse) is locked whole. Refactor admission refuses
 * every patch to them, parts or not.
 *
 * `tsconfig*.json`, `babel.config.*` and the linters' settings are locked too: a transform decides
 * what code runs under test, and VERIFY's typecheck and lint are gates as much as the tests are.
 */

/** Locked whole, by name. */
const WHOLE_FILE_GLOBS = [
  '.refactor-bot.config.json',
  '.ratchet/**',
  // JavaScript test runners, coverage gates, and what npm/yarn/pnpm run scripts with.
  '**/{jest,vitest,vite,karma,playwright,cypress,ava,wdio,nightwatch}.config.*',
  '**/vitest.{workspace,projects}.*',
  '**/.mocharc*',
  '**/{.c8rc,.c8rc.json,.nycrc,.nycrc.json,.nycrc.yml,.nycrc.yaml,nyc.config.*,.taprc}',
  '**/{.npmrc,.yarnrc,.yarnrc.yml,.pnpmfile.cjs,bunfig.toml,node.config.json}',
  // Python: runner settings, hooks pytest and the interpreter load by themselves.
  '**/{pytest.ini,tox.ini,noxfile.py,conftest.py,sitecustomize.py,usercustomize.py,.coveragerc}',
  '**/*.pth',
  // Rust: a `runner` there replaces every test binary.
  '**/.cargo/{config,config.toml}',
  // Build tools whose test settings cannot be told apart from the rest robustly.
  '**/{build.gradle,build.gradle.kts,settings.gradle,settings.gradle.kts,gradle.properties}',
  '**/{Makefile,makefile,GNUmakefile,justfile,Justfile,Taskfile.yml,Taskfile.yaml}',
  // Compiler, type checker, transform and linter settings: loosening them lets a change pass.
  '**/{tsconfig,jsconfig}*.json',
  '**/{eslint.config.*,.eslintrc,.eslintrc.*,.eslintignore,biome.json,biome.jsonc,.oxlintrc.json}',
  '**/{babel.config.*,.babelrc,.babelrc.*,.swcrc}',
  '**/{.prettierrc,.prettierrc.*,prettier.config.*,.prettierignore,.editorconfig}',
  '**/{ruff.toml,.ruff.toml,.flake8,mypy.ini,.mypy.ini,.pylintrc,pylintrc,pyrightconfig.json}',
  '**/{.golangci.yml,.golangci.yaml,.golangci.toml,clippy.toml,.clippy.toml,rustfmt.toml,.rustfmt.toml,rust-toolchain,rust-toolchain.toml}',
];

/** What the glob for locked files skips: dependencies, VCS data, Ratchet's run data, build output. */
const NOT_SEARCHED = [
  '**/node_modules/**',
  '**/.git/**',
  '**/.venv/**',
  '**/venv/**',
  '**/__pycache__/**',
  '**/.pytest_cache/**',
  '**/.ratchet/{runs,index}/**',
  '**/.ratchet/ledger.db*',
  '**/dist/**',
  '**/target/**',
  '**/coverage/**',
];

/**
 * Settings whose text is searched for the files it names (a setup file, a custom reporter, a babel
 * plugin, a module `node-options` preloads): runner and transform configuration. Not the compiler's
 * and linters' settings, whose paths (`files`, `include`, ignore lists) name code under test.
 */
const NAMES_CODE = picomatch(
  [
    '**/{jest,vitest,vite,karma,playwright,cypress,ava,wdio,nightwatch}.config.*',
    '**/vitest.{workspace,projects}.*',
    '**/.mocharc*',
    '**/{.c8rc,.c8rc.json,.nycrc,.nycrc.json,.nycrc.yml,.nycrc.yaml,nyc.config.*,.taprc}',
    '**/{.npmrc,.yarnrc,.yarnrc.yml,bunfig.toml,node.config.json}',
    '**/{pytest.ini,tox.ini,noxfile.py,conftest.py}',
    '**/{babel.config.*,.babelrc,.babelrc.*,.swcrc}',
    '**/{package.json,pyproject.toml,setup.cfg}',
  ],
  { dot: true },
);

const byName = picomatch([...WHOLE_FILE_GLOBS, ...PARTIAL_FILES.map((name) => `**/${name}`)], { dot: true });

/** True when `file` (repository-relative, POSIX) is, by its name, a file that defines verification. */
export function isVerificationFile(file: string): boolean {
  return byName(file);
}

/**
 * The files no refactoring patch may change: those that define verification by name, and every
 * file the verifier commands (and the `package.json` scripts they run) execute or load.
 */
export function verificationFileMatcher(commands: readonly string[], root: string): (file: string) => boolean {
  const named = new Set(filesNamedByCommands(commands, root).keys());
  return (file) => byName(file) || named.has(file);
}

/** What was locked: the files that define verification, each as the digests of its locked parts. */
export interface VerificationLock {
  /** Files locked whole (repository-relative): no stage after RED may write them. */
  files: string[];
  /** `path -> part -> sha256` of what each locked file held; a file locked whole has the part `''`. */
  digests: Record<string, Record<string, string>>;
  /** For a file locked because something names it: what does (`the test command`, `jest.config.js`). */
  namedBy: Record<string, string>;
  /** What each locked file held, to put it back. */
  contents: Record<string, string>;
}

/** One locked part that differs between two locks. */
export interface VerificationChange {
  file: string;
  /** `''` for a file locked whole, else the part (`scripts.test`, `[tool.pytest.ini_options]`). */
  part: string;
  change: 'changed' | 'added' | 'removed';
}

/**
 * Fingerprints the files that decide how `commands` (the test, lint and typecheck commands) run
 * in `root`: the runner configuration and settings by name (parts of the mixed files), and the
 * files those commands, the `package.json` scripts they run and the runner configuration name
 * (a setup file, a custom reporter, a script).
 */
export async function lockVerification(root: string, commands: readonly string[]): Promise<VerificationLock> {
  // Every file, then those `byName` matches: tinyglobby compiles the patterns it is given on
  // each call, and every task locks five or six times; `byName` is compiled once (the walk is
  // the same: every pattern starts at the top, so no directory could be skipped anyway).
  const found = (
    await glob(['**/*'], {
      cwd: root,
      ignore: NOT_SEARCHED,
      onlyFiles: true,
      dot: true,
      followSymbolicLinks: false,
    })
  ).filter((file) => byName(toPosix(file)));
  const digests: Record<string, Record<string, string>> = {};
  const contents: Record<string, string> = {};
  const namedBy = new Map<string, string>();
  const configTexts: Array<{ file: string; text: string }> = [];
  for (const file of found.map(toPosix).sort()) {
    const text = await readFile(path.join(root, file), 'utf8').catch(() => null);
    if (text === null) continue;
    contents[file] = text;
    const name = path.posix.basename(file) as PartialFile;
    if ((PARTIAL_FILES as readonly string[]).includes(name)) {
      const parts = partsOf(name, text, file, commands, root);
      digests[file] = parts.digests;
      if (NAMES_CODE(file)) configTexts.push({ file, text: parts.text });
    } else {
      digests[file] = { '': sha256(text) };
      if (NAMES_CODE(file)) configTexts.push({ file, text });
    }
  }
  for (const [file, by] of filesNamedByCommands(commands, root)) namedBy.set(file, by);
  for (const { file, text } of configTexts) {
    for (const named of filesNamedIn(text, path.posix.dirname(file), root)) {
      if (!namedBy.has(named) && digests[named] === undefined) namedBy.set(named, file);
    }
  }
  for (const file of namedBy.keys()) {
    if (digests[file] !== undefined) continue;
    const content = await readFile(path.join(root, file), 'utf8').catch(() => null);
    if (content === null) continue;
    digests[file] = { '': sha256(content) };
    contents[file] = content;
  }
  const files = Object.entries(digests)
    .filter(([, parts]) => parts[''] !== undefined)
    .map(([file]) => file)
    .sort();
  return {
    files,
    digests,
    namedBy: Object.fromEntries([...namedBy].filter(([file]) => digests[file] !== undefined)),
    contents,
  };
}

/** The locked parts that differ from `before` to `after`, sorted by file. */
export function diffVerification(before: VerificationLock, after: VerificationLock): VerificationChange[] {
  const changes: VerificationChange[] = [];
  const files = [...new Set([...Object.keys(before.digests), ...Object.keys(after.digests)])].sort();
  for (const file of files) {
    const a = before.digests[file] ?? {};
    const b = after.digests[file] ?? {};
    // Named files are locked as long as something named them before.
    if (before.digests[file] === undefined && after.namedBy[file] !== undefined && !isVerificationFile(file)) continue;
    for (const part of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const was = a[part];
      const now = b[part];
      if (was === now) continue;
      changes.push({ file, part, change: was === undefined ? 'added' : now === undefined ? 'removed' : 'changed' });
    }
  }
  return changes;
}

/** `package.json (scripts.test, changed)`, one per file. */
export function describeVerificationChanges(changes: readonly VerificationChange[]): string[] {
  const byFile = new Map<string, string[]>();
  for (const change of changes) {
    const list = byFile.get(change.file) ?? [];
    list.push(change.part === '' ? change.change : `${change.part} ${change.change}`);
    byFile.set(change.file, list);
  }
  return [...byFile].map(([file, parts]) => `${file} (${parts.join(', ')})`);
}

function toPosix(file: string): string {
  return file.split(path.sep).join('/');
}
