import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import picomatch from 'picomatch';
import { parse as parseToml } from 'smol-toml';
import { glob } from 'tinyglobby';
import { leadingCd } from './detect.js';

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

/** Files of which only some parts are locked in TDD (whole in refactor admission). */
const PARTIAL_FILES = ['package.json', 'pyproject.toml', 'setup.cfg', 'Cargo.toml', 'go.mod', 'pom.xml'] as const;
type PartialFile = (typeof PARTIAL_FILES)[number];

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
  const found = await glob([...WHOLE_FILE_GLOBS, ...PARTIAL_FILES.map((name) => `**/${name}`)], {
    cwd: root,
    ignore: NOT_SEARCHED,
    onlyFiles: true,
    dot: true,
    followSymbolicLinks: false,
  });
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

// ---------------------------------------------------------------------------------------------
// Parts of the mixed files

/** package.json keys read by test runners, coverage gates, transforms and linters, and module resolution of tests. */
const PACKAGE_KEYS = [
  'jest',
  'mocha',
  'ava',
  'c8',
  'nyc',
  'vitest',
  'tap',
  'xo',
  'standard',
  'eslintConfig',
  'prettier',
  'babel',
  'type',
  'imports',
  'config',
  'workspaces',
];
/** Of those, the runners' own settings, which name setup files and plugins (`imports` names modules under test). */
const PACKAGE_RUNNER_KEYS = ['jest', 'mocha', 'ava', 'c8', 'nyc', 'vitest', 'tap', 'babel'];
const PYPROJECT_TOOLS = [
  'pytest',
  'coverage',
  'tox',
  'hatch',
  'poe',
  'pdm',
  'nox',
  'ruff',
  'mypy',
  'pyright',
  'pylint',
];
const PYPROJECT_RUNNERS = ['pytest', 'tox', 'hatch', 'poe', 'pdm', 'nox'];
const SETUP_CFG_SECTIONS = /^(?:tool:pytest|pytest|coverage:.*|flake8|mypy(?:-.*)?|pycodestyle|pylint.*|isort|tox:.*)$/;
const CARGO_KEYS = ['lib', 'bin', 'test', 'bench', 'example', 'profile', 'lints', 'badges'];
const CARGO_PACKAGE_KEYS = ['build', 'autotests', 'autobins', 'autoexamples', 'autobenches', 'autolib'];
const CARGO_WORKSPACE_KEYS = ['members', 'exclude', 'default-members', 'lints'];
const GO_DIRECTIVES = ['replace', 'exclude', 'godebug', 'toolchain'];
const POM_KEYS = ['build', 'profiles', 'properties', 'reporting'];

interface Parts {
  digests: Record<string, string>;
  /** The locked parts' text, searched for files they name. */
  text: string;
}

function partsOf(name: PartialFile, text: string, file: string, commands: readonly string[], root: string): Parts {
  try {
    switch (name) {
      case 'package.json':
        return packageParts(text, file, commands, root);
      case 'pyproject.toml': {
        const tools = tomlTable(text, 'tool');
        const parts = pickParts(tools, PYPROJECT_TOOLS, (key) => `[tool.${key}]`);
        return { digests: parts.digests, text: pickParts(tools, PYPROJECT_RUNNERS, (key) => key).text };
      }
      case 'Cargo.toml': {
        const table = parseToml(text) as Record<string, unknown>;
        return mergeParts(
          pickParts(table, CARGO_KEYS, (key) => `[${key}]`),
          pickParts(record(table.package), CARGO_PACKAGE_KEYS, (key) => `package.${key}`),
          pickParts(record(table.workspace), CARGO_WORKSPACE_KEYS, (key) => `workspace.${key}`),
        );
        // `[lib] path` names the library's source: code under test, not configuration to search.
      }
      case 'setup.cfg':
        return iniParts(text);
      case 'go.mod':
        return goModParts(text);
      case 'pom.xml': {
        const parser = new XMLParser({ ignoreAttributes: false, parseTagValue: false });
        const project = record(record(parser.parse(text, true)).project);
        return pickParts(project, POM_KEYS, (key) => `<${key}>`);
      }
    }
  } catch {
    // Unreadable: locked whole (a change that breaks it is a change).
  }
  return { digests: { '(unparsed)': sha256(text) }, text };
}

function packageParts(text: string, file: string, commands: readonly string[], root: string): Parts {
  const json = record(JSON.parse(text));
  const scripts = Object.fromEntries(
    Object.entries(record(json.scripts)).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  const dir = path.posix.dirname(file);
  const names = lockedScripts(
    scripts,
    commands.flatMap((command) => scriptsRunBy(command, dir, root)),
  );
  const digests: Record<string, string> = {};
  const texts: string[] = [];
  for (const name of names) {
    const script = scripts[name];
    if (script === undefined) continue;
    digests[`scripts.${name}`] = sha256(script);
    texts.push(script);
  }
  const keys = pickParts(json, PACKAGE_KEYS, (key) => key);
  const runners = pickParts(json, PACKAGE_RUNNER_KEYS, (key) => key);
  return { digests: { ...digests, ...keys.digests }, text: [...texts, runners.text].join('\n') };
}

/**
 * The scripts that decide how the commands run: `test` with its `pre`/`post` hooks always, the
 * scripts the commands run (`npm run lint`), and, transitively, those the locked scripts run.
 */
function lockedScripts(scripts: Record<string, string>, run: readonly string[]): string[] {
  const names = new Set<string>();
  const queue = ['test', ...run];
  while (queue.length > 0) {
    const name = queue.shift() ?? '';
    const matching = name.includes('*') ? Object.keys(scripts).filter((key) => picomatch.isMatch(key, name)) : [name];
    for (const match of matching) {
      for (const hooked of [match, `pre${match}`, `post${match}`]) {
        if (names.has(hooked)) continue;
        names.add(hooked);
        const body = scripts[hooked];
        if (body !== undefined) queue.push(...scriptReferences(body));
      }
    }
  }
  return [...names].sort();
}

/** The package.json scripts a command line runs (`npm test`, `npm run a`, `yarn b`, `run-s c d`). */
function scriptReferences(command: string): string[] {
  const names: string[] = [];
  for (const simple of command.split(/&&|\|\||[;|&\n]/)) {
    const words = simple.trim().split(/\s+/).filter(Boolean);
    let index = 0;
    while (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[index] ?? '')) index += 1;
    const [program, ...rest] = words.slice(index);
    if (program === undefined) continue;
    const args = rest.filter((word) => !word.startsWith('-'));
    if (/^(?:npm|pnpm|yarn|bun)$/.test(program)) {
      const [first, second] = args;
      if (first === undefined) continue;
      if (/^(?:test|t|tst)$/.test(first)) names.push('test');
      else if (/^(?:run|run-script)$/.test(first)) {
        if (second !== undefined) names.push(second);
      } else if (program === 'yarn' || program === 'pnpm' || program === 'bun') names.push(first);
    } else if (/^(?:npm-run-all2?|run-s|run-p|concurrently)$/.test(program)) {
      names.push(...args.map((arg) => arg.replace(/^npm:/, '').replace(/^["']|["']$/g, '')));
    }
  }
  return names;
}

/** The package.json scripts `command` runs when it runs in `dir` (the package's directory). */
function scriptsRunBy(command: string, dir: string, root: string): string[] {
  const cd = leadingCd(command);
  const base = cd === undefined ? '.' : path.posix.normalize(cd.dir);
  if (path.posix.normalize(dir) !== base && !path.isAbsolute(base)) return [];
  if (path.isAbsolute(base) && path.resolve(root, dir) !== path.resolve(base)) return [];
  return scriptReferences(cd?.rest ?? command);
}

function tomlTable(text: string, key: string): Record<string, unknown> {
  return record((parseToml(text) as Record<string, unknown>)[key]);
}

function pickParts(table: Record<string, unknown>, keys: readonly string[], label: (key: string) => string): Parts {
  const digests: Record<string, string> = {};
  const texts: string[] = [];
  for (const key of keys) {
    if (table[key] === undefined) continue;
    const canonical = canonicalJson(table[key]);
    digests[label(key)] = sha256(canonical);
    texts.push(canonical);
  }
  return { digests, text: texts.join('\n') };
}

function mergeParts(...parts: Parts[]): Parts {
  return {
    digests: Object.assign({}, ...parts.map((part) => part.digests)) as Record<string, string>,
    text: parts.map((part) => part.text).join('\n'),
  };
}

/** `[section]` bodies of an INI file whose names say they configure tests or linters. */
function iniParts(text: string): Parts {
  const digests: Record<string, string> = {};
  const texts: string[] = [];
  let section: string | undefined;
  let body: string[] = [];
  const flush = (): void => {
    if (section === undefined || !SETUP_CFG_SECTIONS.test(section)) return;
    const normalised = body
      .map((line) => line.trimEnd())
      .filter((line) => line.trim() !== '' && !/^\s*[#;]/.test(line))
      .join('\n');
    digests[`[${section}]`] = sha256(normalised);
    if (/^(?:tool:pytest|pytest|tox:.*)$/.test(section)) texts.push(normalised);
  };
  for (const line of text.split(/\r?\n/)) {
    const header = /^\[([^\]]+)\]\s*$/.exec(line);
    if (header?.[1] !== undefined) {
      flush();
      section = header[1].trim();
      body = [];
    } else body.push(line);
  }
  flush();
  return { digests, text: texts.join('\n') };
}

/** go.mod's `replace`, `exclude`, `godebug` and `toolchain` directives (one line or a block each). */
function goModParts(text: string): Parts {
  const lines = text.split(/\r?\n/).map((line) => line.replace(/\/\/.*$/, '').trim());
  const found = new Map<string, string[]>();
  let block: string | undefined;
  for (const line of lines) {
    if (block !== undefined) {
      if (line === ')') block = undefined;
      else if (line !== '') found.get(block)?.push(line);
      continue;
    }
    const match = /^(\w+)\s*(\(?)\s*(.*)$/.exec(line);
    const directive = match?.[1];
    if (directive === undefined || !GO_DIRECTIVES.includes(directive)) continue;
    if (!found.has(directive)) found.set(directive, []);
    if (match?.[2] === '(') block = directive;
    else found.get(directive)?.push(match?.[3] ?? '');
  }
  const digests: Record<string, string> = {};
  for (const [directive, entries] of found) digests[directive] = sha256(entries.map(normaliseSpaces).sort().join('\n'));
  return { digests, text: [...found.values()].flat().join('\n') };
}

// ---------------------------------------------------------------------------------------------
// Files named by commands and by configuration

/** Programs that run the file named by their first argument. */
const INTERPRETERS =
  /^(?:node|nodejs|tsx|ts-node|bun|deno|sh|bash|zsh|dash|perl|ruby|php|python(?:\d+(?:\.\d+)?)?|pypy3?)$/;

/** Options whose value is code or configuration the command loads. */
const LOADING_OPTIONS = new Set([
  '--require',
  '-r',
  '--import',
  '--loader',
  '--experimental-loader',
  '--env-file',
  '--env-file-if-exists',
  '--config',
  '--config-file',
  '-c',
  '--rcfile',
  '--setup',
  '--file',
  '--test-reporter',
  '--reporter',
  '--ui',
  '-p',
  '--project',
  '-P',
  '-f',
  '--makefile',
  '--settings',
  '--tsconfig',
]);

/**
 * The files `commands` execute or load, with what names each: the program when it is a path
 * (`./scripts/test.sh`), the script an interpreter runs (`node scripts/lint.mjs`), the values of
 * options that load code or configuration (`--require test/setup.js`, `--import`, `-c`, `-p`),
 * and the same inside the `package.json` scripts they run. Files a command only checks or tests
 * (`mypy calc.py`, `pytest tests/`) are not among them: those are the code under test.
 */
function filesNamedByCommands(commands: readonly string[], root: string): Map<string, string> {
  const named = new Map<string, string>();
  const visit = (command: string, by: string, depth: number): void => {
    const cd = leadingCd(command);
    const base = cd === undefined ? '.' : cd.dir;
    const line = cd?.rest ?? command;
    for (const simple of line.split(/&&|\|\||[;|&\n]/)) {
      const words = shellWords(simple);
      let index = 0;
      while (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[index] ?? '')) index += 1;
      const rest = words.slice(index);
      const [program] = rest;
      if (program === undefined) continue;
      const candidates: string[] = [];
      if (program.includes('/')) candidates.push(program);
      let scriptTaken = !INTERPRETERS.test(path.basename(program));
      for (let i = 1; i < rest.length; i++) {
        const word = rest[i] ?? '';
        const [flag, inline] = word.startsWith('-') && word.includes('=') ? word.split(/=(.*)/s, 2) : [word, undefined];
        if (flag !== undefined && LOADING_OPTIONS.has(flag)) {
          const value = inline ?? rest[++i];
          if (value !== undefined) candidates.push(value);
          continue;
        }
        if (word === '-m' && /^python/.test(path.basename(program))) {
          const module = rest[++i];
          if (module !== undefined) candidates.push(module);
          scriptTaken = true;
          continue;
        }
        if (!scriptTaken && !word.startsWith('-')) {
          candidates.push(word);
          scriptTaken = true;
        }
      }
      for (const candidate of candidates) {
        const file = resolveNamed(candidate, base, root);
        if (file !== undefined && !named.has(file)) named.set(file, by);
      }
      if (depth < 4) {
        for (const script of scriptReferences(simple)) {
          const body = packageScript(root, base, script);
          for (const text of body) visit(text, by, depth + 1);
        }
      }
    }
  };
  for (const command of commands) visit(command, `\`${command}\``, 0);
  return named;
}

/** The text of `scripts[name]` (and its pre/post hooks) in `<root>/<dir>/package.json`. */
function packageScript(root: string, dir: string, name: string): string[] {
  const file = path.resolve(root, dir, 'package.json');
  try {
    const scripts = record(record(JSON.parse(readFileText(file))).scripts);
    return [name, `pre${name}`, `post${name}`]
      .map((key) => scripts[key])
      .filter((value): value is string => typeof value === 'string');
  } catch {
    return [];
  }
}

/** Files a configuration text names: string tokens that are files of the repository. */
function filesNamedIn(text: string, dir: string, root: string): string[] {
  const files = new Set<string>();
  const tokens = text.match(/[\w@.<>/${}-]*[\w@-][\w@.<>/${}-]*/g) ?? [];
  for (const token of new Set(tokens)) {
    if (token.length > 200 || !/[./]/.test(token)) continue;
    const file = resolveNamed(token.replace(/^<rootDir>\//, ''), dir, root);
    if (file !== undefined) files.add(file);
  }
  return [...files];
}

const CODE_EXTENSIONS = ['', '.js', '.cjs', '.mjs', '.ts', '.cts', '.mts', '.jsx', '.tsx', '.py', '.sh'];

/**
 * A word as a file of the repository: relative to `dir` (or the root), as given or with a code
 * extension, or as a Python module (`tests.plugin` -> `tests/plugin.py`). Undefined for anything
 * else: directories, globs, absolute paths, paths outside the root, dependencies.
 */
function resolveNamed(word: string, dir: string, root: string): string | undefined {
  const cleaned = word.replace(/^file:\/\//, '').replace(/^\.\//, '');
  if (cleaned === '' || cleaned.includes('*') || cleaned.includes('$') || path.isAbsolute(cleaned)) return undefined;
  const candidates = [cleaned, ...(/^[\w.]+$/.test(cleaned) ? [cleaned.split('.').join('/')] : [])];
  for (const base of new Set([dir, '.'])) {
    for (const candidate of candidates) {
      for (const extension of CODE_EXTENSIONS) {
        const relative = path.posix.normalize(path.posix.join(base, `${candidate}${extension}`));
        if (relative.startsWith('..') || /(?:^|\/)(?:node_modules|\.git|\.venv|venv)\//.test(relative)) continue;
        if (isFile(path.join(root, relative))) return relative;
      }
    }
  }
  return undefined;
}

function isFile(file: string): boolean {
  try {
    return existsSync(file) && statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Splits a simple command into words, honouring single and double quotes. */
function shellWords(command: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let match = pattern.exec(command); match !== null; match = pattern.exec(command)) {
    words.push(match[1] ?? match[2] ?? match[3] ?? '');
  }
  return words;
}

// ---------------------------------------------------------------------------------------------

function readFileText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** JSON with object keys sorted, so a reformatted file keeps its digest. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    typeof inner === 'object' && inner !== null && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : inner,
  );
}

function normaliseSpaces(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function sha256(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

function toPosix(file: string): string {
  return file.split(path.sep).join('/');
}
