/**
 * Longer than 500 lines on purpose: the rules of every ecosystem (npm scripts, pytest and mypy
 * configurations, Go, Cargo, Maven and Gradle and their wrappers) for finding the test, lint and
 * typecheck commands, and for telling whether their program is installed (with its install
 * hint), stay side by side, so that an ecosystem is added or changed in one place.
 */
import { execFile } from 'node:child_process';
import { constants, type Dirent } from 'node:fs';
import { access, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { RatchetError } from '../core/errors.js';
import { iniMypyNamesTargets, pyprojectMypyNamesTargets } from './mypy-config.js';

/** The test frameworks Ratchet knows how to get per-test results from. */
/** The test frameworks Ratchet reads per-test results of (`custom`: only the exit code). */
export const FRAMEWORKS = [
  'maven',
  'gradle',
  'node-test',
  'jest',
  'vitest',
  'mocha',
  'ava',
  'npm',
  'pytest',
  'unittest',
  'go',
  'cargo',
  'custom',
] as const;
export type Framework = (typeof FRAMEWORKS)[number];

export interface DetectedTestCommand {
  command: string;
  framework: Framework;
  /** 'config' when the command came from `[test] command`, else 'detected'. */
  source: 'config' | 'detected';
  /** The file that decided (`pom.xml`, `package.json`, ...) or `config`. */
  marker: string;
}

export interface DetectOptions {
  /** The PATH searched for a `pytest` executable (default `process.env.PATH`). */
  pathEnv?: string;
  /**
   * Whether `cargo clippy` works here (default: `cargo clippy --version` succeeds with `pathEnv`).
   * Asked only of a Rust project; rustup installs the `cargo-clippy` proxy without the component,
   * so finding it on PATH says nothing.
   */
  clippyWorks?: () => Promise<boolean>;
}

const PYTHON_MARKERS = ['pytest.ini', 'pyproject.toml', 'setup.py', 'setup.cfg', 'conftest.py'];
const NPM_PLACEHOLDER = /no test specified/;

const packageJsonSchema = z.looseObject({
  scripts: z.record(z.string(), z.string()).optional(),
  dependencies: z.record(z.string(), z.string()).optional(),
  devDependencies: z.record(z.string(), z.string()).optional(),
});
type PackageJson = z.infer<typeof packageJsonSchema>;

/**
 * Finds the project's test command (seed 003, "Test Framework Auto-Detection", extended to
 * Go and Rust). First match wins: `pom.xml`, `build.gradle(.kts)`, `package.json` with a real
 * `scripts.test`, a pytest marker, `go.mod`, `Cargo.toml`. A configured command wins over all.
 * Maven and Gradle use the project's wrapper (`mvnw`, `gradlew`) when it has one.
 */
export async function detectTestCommand(
  root: string,
  override?: string,
  options: DetectOptions = {},
): Promise<DetectedTestCommand> {
  if (override !== undefined && override.trim() !== '') {
    const command = override.trim();
    let framework = detectFramework(command);
    const dir = path.resolve(root, leadingCd(command)?.dir ?? '.');
    // `cd frontend && npm test`: the script is in that directory's package.json.
    if (framework === 'npm') framework = await npmFramework(dir);
    // `npm run test-api`, `node test.js`: the script it runs, the file it runs.
    else if (framework === 'custom') framework = await customFramework(dir, leadingCd(command)?.rest ?? command);
    return { command, framework, source: 'config', marker: 'config' };
  }
  const found = await detectIn(root, options);
  if (found !== undefined) return found;
  const placeholder = NPM_PLACEHOLDER.test((await readPackageJson(root))?.scripts?.test ?? '')
    ? " (the test script of package.json is npm's placeholder)"
    : '';
  // A monorepo-ish layout: the projects are one level down, and which one to test is the user's call.
  const nested = await nestedCandidates(root, options);
  const suggestions = nested.map(
    ({ dir, found: { command } }) => `[test] command = ${JSON.stringify(`cd ${shellWord(dir)} && ${command}`)}`,
  );
  throw new RatchetError('config', `No test command found in ${root}: ${LOOKED_FOR}${placeholder}`, {
    hint:
      'Set [test] command = "..." in .ratchet/config.toml' +
      (suggestions.length === 0 ? '' : `, e.g. for the project in a subdirectory: ${suggestions.join(' or ')}`),
    details: { root, nested: nested.map(({ dir, found: { marker } }) => `${dir}/${marker}`) },
  });
}

const LOOKED_FOR =
  'none of pom.xml, build.gradle(.kts), package.json with a test script, pytest.ini, pyproject.toml, setup.py, setup.cfg, conftest.py, go.mod or Cargo.toml is there';

/** Directories never searched for nested projects. */
const NOT_PROJECTS = new Set(['node_modules', 'vendor', 'target', 'dist', 'build', 'venv', '__pycache__']);

/** The markers of `root` itself, in the seed's order; undefined when there is none. */
async function detectIn(root: string, options: DetectOptions): Promise<DetectedTestCommand | undefined> {
  if (await exists(root, 'pom.xml'))
    return detected((await exists(root, 'mvnw')) ? './mvnw test' : 'mvn test', 'maven', 'pom.xml');
  for (const marker of ['build.gradle', 'build.gradle.kts']) {
    if (await exists(root, marker)) {
      const command = (await exists(root, 'gradlew')) ? './gradlew test' : 'gradle test';
      return detected(command, 'gradle', marker);
    }
  }
  const pkg = await readPackageJson(root);
  const script = pkg?.scripts?.test;
  if (pkg !== undefined && script !== undefined && script.trim() !== '' && !NPM_PLACEHOLDER.test(script)) {
    const runner = runnerAfterChecks(script);
    if (runner !== undefined)
      return detected(runner.command, runner.framework, `package.json scripts.test without \`${runner.dropped}\``);
    return detected('npm test', await frameworkOfPackage(root, pkg), 'package.json');
  }
  for (const marker of PYTHON_MARKERS) {
    if (await exists(root, marker)) {
      const fromMake = await makeTestRecipe(root);
      if (fromMake !== undefined) return fromMake;
      const command = (await onPath('pytest', options.pathEnv ?? process.env.PATH ?? ''))
        ? 'pytest'
        : 'python3 -m pytest';
      return detected(command, 'pytest', marker);
    }
  }
  if (await exists(root, 'go.mod')) return detected('go test ./...', 'go', 'go.mod');
  if (await exists(root, 'Cargo.toml')) return detected('cargo test', 'cargo', 'Cargo.toml');
  return undefined;
}

/** A lint or typecheck command found in a project's own files (written by `ratchet init`). */
interface DetectedCheckCommand {
  command: string;
  /** Where it came from, e.g. `package.json scripts.lint` or `pyproject.toml [tool.ruff]`. */
  marker: string;
}

/** A tool the project configures but that is not installed (not on PATH), so no command runs it. */
interface UninstalledCheckTool {
  tool: string;
  /** Where the project configures it, e.g. `pyproject.toml [tool.ruff]`. */
  marker: string;
  /** How to install it, e.g. `pip install ruff`. */
  install: string;
  /** The command that would run it, e.g. `ruff check .`. */
  command: string;
  /** False for the usual tool of the project's language (clippy for a crate), which the project need not configure. */
  configured: boolean;
}

export interface DetectedCheckCommands {
  lint?: DetectedCheckCommand;
  typecheck?: DetectedCheckCommand;
  /** Per kind that has no command: the configured tool that is not installed. */
  notInstalled?: { lint?: UninstalledCheckTool; typecheck?: UninstalledCheckTool };
}

const TYPECHECK_SCRIPTS = ['typecheck', 'type-check', 'check-types', 'types', 'tsc'];
/** The npm package of tsgo, TypeScript's native compiler (its `tsgo` binary). */
const TSGO_PACKAGE = '@typescript/native-preview';

/**
 * The project's own lint and typecheck commands, for VERIFY: the `lint` and `typecheck` scripts
 * of package.json (else `npx tsgo --noEmit` for a TypeScript project that depends on tsgo,
 * `npx tsc --noEmit` for one on typescript), ruff or flake8 and mypy
 * when the project configures them and they are installed, `go vet ./...` (part of the Go
 * toolchain) for a Go module, and clippy for a Rust crate when `cargo clippy` works (else it is
 * named in `notInstalled`, with how to add it). A Python tool the project does not configure is not guessed; one
 * it configures but that is not installed is named in `notInstalled`. mypy runs as plain `mypy`
 * when its configuration names the files to check (`mypy .` would override them).
 */
export async function detectCheckCommands(root: string, options: DetectOptions = {}): Promise<DetectedCheckCommands> {
  const found: DetectedCheckCommands = {};
  const pathEnv = options.pathEnv ?? process.env.PATH ?? '';
  const pkg = await readPackageJson(root).catch(() => undefined); // The test command's detection reports it.
  if (pkg !== undefined) {
    const scripts = pkg.scripts ?? {};
    if (scripts.lint?.trim()) found.lint = { command: 'npm run lint', marker: 'package.json scripts.lint' };
    const script = TYPECHECK_SCRIPTS.find((name) => scripts[name]?.trim());
    if (script !== undefined)
      found.typecheck = { command: `npm run ${script}`, marker: `package.json scripts.${script}` };
    else if (await exists(root, 'tsconfig.json')) {
      const dependencies = { ...pkg.dependencies, ...pkg.devDependencies };
      // tsgo (TypeScript's native port) checks a project that moved to it, whose tsconfig.json
      // (and code) tsc may no longer accept; and typescript may not be installed at all.
      if (TSGO_PACKAGE in dependencies)
        found.typecheck = { command: 'npx tsgo --noEmit', marker: `package.json ${TSGO_PACKAGE}` };
      else if ('typescript' in dependencies) found.typecheck = { command: 'npx tsc --noEmit', marker: 'tsconfig.json' };
    }
  }
  const pyproject = await readText(root, 'pyproject.toml');
  const setupCfg = await readText(root, 'setup.cfg');
  const mypyMarker =
    (await firstExisting(root, ['mypy.ini', '.mypy.ini'])) ??
    (/^\[tool\.mypy[\].]/m.test(pyproject)
      ? 'pyproject.toml [tool.mypy]'
      : /^\[mypy\]/m.test(setupCfg)
        ? 'setup.cfg [mypy]'
        : undefined);
  const mypyNamesTargets =
    mypyMarker === undefined
      ? false
      : mypyMarker.startsWith('pyproject.toml')
        ? pyprojectMypyNamesTargets(pyproject)
        : iniMypyNamesTargets(mypyMarker.startsWith('setup.cfg') ? setupCfg : await readText(root, mypyMarker));
  const tools: Array<{
    kind: CheckKind;
    tool: string;
    command: string;
    marker?: string | undefined;
    install?: string;
    /** Whether it works here, when being on PATH does not say (default: on PATH). */
    works?: () => Promise<boolean>;
    /** The usual tool of the project's language, used without configuring it (clippy for a crate). */
    usual?: true;
  }> = [
    {
      kind: 'lint',
      tool: 'ruff',
      command: 'ruff check .',
      install: 'pip install ruff',
      marker:
        (await firstExisting(root, ['ruff.toml', '.ruff.toml'])) ??
        (/^\[tool\.ruff[\].]/m.test(pyproject) ? 'pyproject.toml [tool.ruff]' : undefined),
    },
    {
      kind: 'lint',
      tool: 'flake8',
      command: 'flake8',
      install: 'pip install flake8',
      marker:
        (await firstExisting(root, ['.flake8'])) ?? (/^\[flake8\]/m.test(setupCfg) ? 'setup.cfg [flake8]' : undefined),
    },
    {
      kind: 'typecheck',
      tool: 'mypy',
      command: mypyNamesTargets ? 'mypy' : 'mypy .',
      marker: mypyMarker,
      install: 'pip install mypy',
    },
    { kind: 'lint', tool: 'go', command: 'go vet ./...', marker: await firstExisting(root, ['go.mod']) },
    {
      kind: 'lint',
      tool: 'clippy',
      command: CLIPPY_LINT,
      marker: await firstExisting(root, ['Cargo.toml']),
      install: 'rustup component add clippy; Debian: apt-get install rust-clippy',
      works: options.clippyWorks ?? (() => clippyWorks(root, pathEnv)),
      usual: true,
    },
  ];
  const notInstalled: NonNullable<DetectedCheckCommands['notInstalled']> = {};
  for (const { kind, tool, command, marker, install, works, usual } of tools) {
    if (found[kind] !== undefined || marker === undefined) continue;
    if (await (works ?? (() => onPath(tool, pathEnv)))()) found[kind] = { command, marker };
    else if (install !== undefined)
      notInstalled[kind] ??= { tool, marker, install, command, configured: usual !== true };
  }
  for (const kind of CHECK_KINDS) if (found[kind] !== undefined) delete notInstalled[kind];
  if (Object.keys(notInstalled).length > 0) found.notInstalled = notInstalled;
  return found;
}

const CHECK_KINDS = ['lint', 'typecheck'] as const;
type CheckKind = (typeof CHECK_KINDS)[number];

/**
 * What `ratchet init` says about a kind of check: the command it found, the configured tool that
 * is not installed, or that it found none; each with what to do.
 */
export function describeCheckCommand(kind: CheckKind, checks: DetectedCheckCommands): string {
  const found = checks[kind];
  if (found !== undefined) return `detected ${kind} command: ${found.command} (from ${found.marker})`;
  const missing = checks.notInstalled?.[kind];
  if (missing !== undefined && !missing.configured)
    return `no ${kind} command: ${missing.tool}, the usual ${kind} of a ${missing.marker} project, is not installed; add it (${missing.install}) to have init propose it, or set [${kind}] command = "..." to run another in VERIFY`;
  if (missing !== undefined)
    return `${missing.tool} is configured in ${missing.marker} but not installed (not on PATH): install it (${missing.install}) or set [${kind}] command = "..." to run another in VERIFY`;
  return `no ${kind} command detected (set [${kind}] command = "..." to run one in VERIFY)`;
}

async function readText(root: string, name: string): Promise<string> {
  try {
    return await readFile(path.join(root, name), 'utf8');
  } catch {
    return '';
  }
}

async function firstExisting(root: string, names: readonly string[]): Promise<string | undefined> {
  for (const name of names) if (await exists(root, name)) return name;
  return undefined;
}

/** Projects one directory below `root` (at most three), for the hint of a root without markers. */
async function nestedCandidates(
  root: string,
  options: DetectOptions,
): Promise<Array<{ dir: string; found: DetectedTestCommand }>> {
  let entries: Dirent[];
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch {
    return [];
  }
  const dirs = entries
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && !NOT_PROJECTS.has(entry.name))
    .map((entry) => entry.name)
    .sort();
  const candidates: Array<{ dir: string; found: DetectedTestCommand }> = [];
  for (const dir of dirs) {
    if (candidates.length >= 3) break;
    try {
      const found = await detectIn(path.join(root, dir), options);
      if (found !== undefined) candidates.push({ dir, found });
    } catch {
      // A broken package.json down there is not this project's problem.
    }
  }
  return candidates;
}

/** `word` as one shell word: as it is when it needs no quoting, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** Why the program a test command starts cannot run. */
export interface MissingExecutable {
  /** The program as the command names it (`mvn`, `./gradlew`). */
  executable: string;
  /** `missing-module`: the program runs, but not the module the command names (`python3 -m pytest`). */
  reason: 'not-installed' | 'not-executable' | 'missing-module';
  /** What to do about it. */
  hint: string;
}

/** Words that start a command line but are not the program that runs the tests. */
const SHELL_WORDS = new Set([
  '.',
  ':',
  '[',
  'builtin',
  'cd',
  'command',
  'env',
  'eval',
  'exec',
  'export',
  'nice',
  'nohup',
  'set',
  'source',
  'time',
  'timeout',
  'ulimit',
  'xvfb-run',
  'if',
  'for',
  'while',
  'case',
  '!',
]);

const INSTALL_HINTS: Record<string, string> = {
  mvn: 'Install Maven (https://maven.apache.org/install.html; Debian/Ubuntu: apt-get install maven) or commit the Maven wrapper (mvnw), which Ratchet then uses',
  gradle:
    'Install Gradle (https://gradle.org/install/) or commit the Gradle wrapper (gradlew), which Ratchet then uses',
  cargo: 'Install Rust and cargo with rustup (https://rustup.rs)',
  go: 'Install Go (https://go.dev/dl/)',
  npm: 'Install Node.js, which comes with npm (https://nodejs.org)',
  npx: 'Install Node.js, which comes with npm and npx (https://nodejs.org)',
  node: 'Install Node.js (https://nodejs.org)',
  pytest: 'Install pytest (python3 -m pip install pytest)',
  python3: 'Install Python 3 (https://www.python.org/downloads/)',
  python: 'Install Python 3 (https://www.python.org/downloads/)',
};

/**
 * Checks that the program a test command starts exists: on `pathEnv` for a bare name, under
 * `cwd` (and executable) for a path such as `./gradlew`. Returns undefined when it does, or when
 * the command line is too clever to tell (a variable, a subshell, a shell built-in first).
 */
export async function missingExecutable(
  command: string,
  cwd: string,
  pathEnv: string = process.env.PATH ?? '',
  /** The config table the command comes from, named in the hint. */
  setting: 'test' | 'lint' | 'typecheck' = 'test',
): Promise<MissingExecutable | undefined> {
  const words = command.trim().split(/\s+/);
  let index = 0;
  while (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[index] ?? '')) index += 1;
  const program = words[index];
  if (program === undefined || program === '' || SHELL_WORDS.has(program) || /[$`'"\\*?(){};|&<>~]/.test(program))
    return undefined;
  const otherwise = `or set [${setting}] command = "..." in .ratchet/config.toml`;
  if (program.includes('/')) {
    const file = path.resolve(cwd, program);
    try {
      await access(file, constants.X_OK);
      return await missingPythonModule(words.slice(index), cwd, pathEnv, setting);
    } catch {
      // Missing, or there but not executable: tell which.
    }
    const present = await access(file).then(
      () => true,
      () => false,
    );
    return present
      ? {
          executable: program,
          reason: 'not-executable',
          hint: `Make it executable (chmod +x ${program}, then commit the mode: git update-index --chmod=+x ${program}), ${otherwise}.`,
        }
      : { executable: program, reason: 'not-installed', hint: `${program} does not exist in ${cwd}: ${otherwise}.` };
  }
  if (await onPath(program, pathEnv)) return missingPythonModule(words.slice(index), cwd, pathEnv, setting);
  const install = INSTALL_HINTS[program] ?? `Install ${program} (it is not on PATH)`;
  return { executable: program, reason: 'not-installed', hint: `${install}, ${otherwise}.` };
}

const PYTHON = /^python(?:\d+(?:\.\d+)?)?$/;

/**
 * `python3 -m pytest` with a python that has no pytest (`ratchet init` writes that command when
 * no `pytest` executable is on PATH): every run would fail with "No module named pytest".
 * Asks that python to import pytest; undefined when it can, or when asking failed otherwise.
 */
async function missingPythonModule(
  words: string[],
  cwd: string,
  pathEnv: string,
  setting: 'test' | 'lint' | 'typecheck',
): Promise<MissingExecutable | undefined> {
  const [program, flag, module] = words;
  if (setting !== 'test' || program === undefined || !PYTHON.test(path.basename(program))) return undefined;
  if (flag !== '-m' || module !== 'pytest') return undefined;
  const importable = await new Promise<boolean>((resolve) => {
    execFile(
      program.includes('/') ? path.resolve(cwd, program) : program,
      ['-c', 'import pytest'],
      { cwd, timeout: 30_000, env: { ...process.env, PATH: pathEnv } },
      (error, _stdout, stderr) => resolve(error === null || !/No module named/.test(String(stderr))),
    );
  });
  if (importable) return undefined;
  return {
    executable: program,
    reason: 'missing-module',
    hint: `Install pytest (${program} -m pip install pytest), or set [test] command = "${program} -m unittest"`,
  };
}

/**
 * Guesses the framework a command line runs. `npm test` alone says nothing about the
 * framework and yields 'npm'; an unknown command yields 'custom'.
 */
export function detectFramework(command: string): Framework {
  const cd = leadingCd(command);
  if (cd !== undefined) return detectFramework(cd.rest);
  const text = command.trim();
  if (/(?:^|[\s/])mvnw?(?:\s|$)/.test(text)) return 'maven';
  if (/(?:^|[\s/])gradlew?(?:\s|$)/.test(text)) return 'gradle';
  if (/\bvitest\b/.test(text)) return 'vitest';
  if (/\bjest\b/.test(text)) return 'jest';
  if (/\bmocha\b/.test(text)) return 'mocha';
  if (/(?:^|[\s/])ava(?:\s|$)/.test(text)) return 'ava';
  if (/(?:^|[\s/])node(?:\s+\S+)*?\s+--test\b/.test(text)) return 'node-test';
  if (/(?:^|[\s/])(?:py\.test|pytest)(?:\s|$)|-m\s+pytest\b/.test(text)) return 'pytest';
  if (/-m\s+unittest\b/.test(text)) return 'unittest';
  if (/(?:^|\s)go\s+test\b/.test(text)) return 'go';
  if (/(?:^|\s)cargo\s+(?:\+\S+\s+)?(?:test|nextest)\b/.test(text)) return 'cargo';
  if (/^(?:npm|pnpm|yarn)\s+(?:test|t|run\s+test|run-script\s+test)(?:\s|$)/.test(text)) return 'npm';
  return 'custom';
}

/**
 * The test command a Python project's Makefile declares, when its `test` target is one runner
 * call Ratchet reads: python-json-pointer's `python3 -munittest` runs `tests.py`, which pytest's
 * default discovery never collects (it found no tests). `-munittest` is spelt `-m unittest`, the
 * form Ratchet adds its verbose flag to.
 */
async function makeTestRecipe(root: string): Promise<DetectedTestCommand | undefined> {
  for (const name of ['GNUmakefile', 'makefile', 'Makefile']) {
    const text = await readFile(path.join(root, name), 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    const recipe = /^test:[^\n=]*\n((?:\t[^\n]*\n?)+)/m.exec(text)?.[1];
    const lines = (recipe ?? '')
      .split('\n')
      .map((line) => line.trim().replace(/^[@-]+/, ''))
      .filter(Boolean);
    const [line] = lines;
    if (lines.length !== 1 || line === undefined || /[$;|&`<>]/.test(line)) return undefined;
    const command = line.replace(/(^|\s)-m(unittest|pytest)\b/, '$1-m $2');
    const framework = detectFramework(command);
    if (framework !== 'pytest' && framework !== 'unittest') return undefined;
    return detected(command, framework, `${name} test target`);
  }
  return undefined;
}

/** A step of a test script that checks the code rather than testing it: lint, format, typecheck. */
// `test:types` too (defu's `pnpm lint && pnpm test:types && pnpm vitest run`), never `test:unit`.
const CHECK_STEP =
  /^(?:(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:lint|format|prettier|typecheck|type-check|types|check-types|tsc|test:(?:types?|typecheck|type-check|tsc|lint|format))(?:[:\s]|$)|(?:npx\s+)?(?:eslint|prettier|tsc|biome|oxlint|xo|standard|vue-tsc)(?:\s|$))/;
const JS_RUNNERS = new Set<Framework>(['vitest', 'jest', 'mocha', 'ava', 'node-test']);

/**
 * The test runner of a script that checks first and tests last (`pnpm lint && vitest run`, ufo's):
 * Ratchet reads per-test results only from a bare runner call, and runs lint and typecheck as
 * gates of their own, so the runner part alone is the test command. Undefined for anything else
 * (a build step, a pipe, a variable): those stay `npm test`, read or refused as they are.
 */
function runnerAfterChecks(script: string): { command: string; framework: Framework; dropped: string } | undefined {
  if (/\|\||[;|`\n]|\$\(/.test(script.replace(/&&/g, ''))) return undefined;
  const steps = script.split('&&').map((step) => step.trim());
  const last = steps.at(-1) ?? '';
  const framework = detectFramework(last);
  if (steps.length < 2 || !JS_RUNNERS.has(framework)) return undefined;
  if (!steps.slice(0, -1).every((step) => CHECK_STEP.test(step))) return undefined;
  const bare = /^(?:(?:pnpm|yarn|bun)\s+(?:exec\s+)?|bunx\s+|npx\s+)?((?:vitest|jest|mocha|ava)(?:\s.*)?)$/.exec(
    last,
  )?.[1];
  const command = bare !== undefined ? `npx ${bare}` : /^node\s/.test(last) ? last : undefined;
  return command === undefined ? undefined : { command, framework, dropped: steps.slice(0, -1).join(' && ') };
}

/** A command that first changes into a directory: `cd frontend && npm test`. */
export interface LeadingCd {
  /** The directory, relative to where the command starts (or absolute); nested `cd`s joined. */
  dir: string;
  /** The text up to the command proper, `cd frontend && `. */
  prefix: string;
  /** The command run in `dir`, `npm test`. */
  rest: string;
}

/** One shell word a `cd` may take: plain, or quoted without expansions. */
const CD_WORD = /^cd\s+(?:([^\s;&|<>()'"`$\\~-][^\s;&|<>()'"`$\\]*)|'([^']+)'|"([^"$`\\]+)")\s*&&\s*/;

/**
 * Splits a leading `cd <dir> &&` (repeated: `cd a && cd b && ...`) off a command, so a
 * monorepo's `cd frontend && npm test` is read as `npm test` run in `frontend`. Undefined when
 * the command does not start so, or the directory is not a plain word (`cd $DIR`, `cd ~/x`).
 */
export function leadingCd(command: string): LeadingCd | undefined {
  const text = command.trimStart();
  let offset = command.length - text.length;
  let dir: string | undefined;
  for (;;) {
    const match = CD_WORD.exec(command.slice(offset));
    const word = match?.[1] ?? match?.[2] ?? match?.[3];
    if (match === null || word === undefined) break;
    dir = dir === undefined || path.posix.isAbsolute(word) ? word : path.posix.join(dir, word);
    offset += match[0].length;
  }
  const rest = command.slice(offset).trim();
  if (dir === undefined || rest === '') return undefined;
  return { dir, prefix: command.slice(0, offset), rest };
}

/** The `scripts.test` of `<root>/package.json`, when there is one. */
export async function readTestScript(root: string): Promise<string | undefined> {
  return (await readPackageJson(root))?.scripts?.test;
}

async function frameworkOfPackage(root: string, pkg: PackageJson): Promise<Framework> {
  const fromScript = await scriptFramework(root, pkg.scripts ?? {}, pkg.scripts?.test ?? '', 0);
  if (fromScript !== 'custom' && fromScript !== 'npm') return fromScript;
  const dependencies = { ...pkg.dependencies, ...pkg.devDependencies };
  for (const name of ['vitest', 'jest', 'mocha', 'ava'] as const) if (name in dependencies) return name;
  return 'npm';
}

/** Where a script runs another script of the package: `npm run test:unit`, `yarn test:unit`, `c8 -- npm run test-api`. */
const SCRIPT_CALL = /(?:^|\s)(?:npm|pnpm|yarn|bun)\s+(?:run(?:-script)?\s+)?([\w:.-]+)(?=\s|$)/g;

/**
 * The framework a script runs, following the package's own scripts it calls and the file a
 * `node` step runs: fastify's `npm run test:unit && npm run test:typescript` runs
 * `c8 --100 node --test`; remark's `c8 --100 -- npm run test-api` runs
 * `node --conditions development test.js`, a file of node:test tests. A script that calls
 * scripts of more than one JavaScript runner (or of none) keeps what its own text says. Three
 * levels deep at most (a script may call itself).
 */
async function scriptFramework(
  root: string,
  scripts: Readonly<Record<string, string>>,
  script: string,
  depth: number,
): Promise<Framework> {
  const direct = detectFramework(script);
  if ((direct !== 'custom' && direct !== 'npm') || depth >= 3) return direct;
  const found = new Set<Framework>();
  for (const step of script.split(/&&|\|\||;/)) {
    const file = await nodeTestFile(root, step);
    if (file) found.add('node-test');
    for (const [, name] of step.matchAll(SCRIPT_CALL)) {
      const called = name === undefined ? undefined : scripts[name];
      if (called === undefined) continue;
      const framework = await scriptFramework(root, scripts, called, depth + 1);
      if (JS_RUNNERS.has(framework)) found.add(framework);
    }
  }
  const [only] = found;
  return found.size === 1 && only !== undefined ? only : direct;
}

/** A configured command that names no runner: the package script it runs, or the node:test file. */
async function customFramework(dir: string, command: string): Promise<Framework> {
  const pkg = await readPackageJson(dir).catch(() => undefined);
  const framework = await scriptFramework(dir, pkg?.scripts ?? {}, command, 0);
  return framework === 'npm' ? 'custom' : framework;
}

/**
 * Whether a step runs one file with `node` (`node --conditions development test.js`) that
 * imports `node:test`: run so, its tests report through the reporters NODE_OPTIONS names, as
 * under `node --test`.
 */
async function nodeTestFile(root: string, step: string): Promise<boolean> {
  const words = step.trim().split(/\s+/);
  const file = words.at(-1) ?? '';
  if (!/(?:^|\/)node$/.test(words[0] ?? '') || words.length < 2 || !/\.[cm]?js$/.test(file)) return false;
  const text = await readFile(path.resolve(root, file), 'utf8').catch(() => '');
  return /(?:from\s+|require\(\s*|import\(\s*)['"]node:test['"]/.test(text);
}

async function npmFramework(root: string): Promise<Framework> {
  const pkg = await readPackageJson(root);
  return pkg === undefined ? 'npm' : frameworkOfPackage(root, pkg);
}

async function readPackageJson(root: string): Promise<PackageJson | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(root, 'package.json'), 'utf8');
  } catch {
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new RatchetError('config', `${path.join(root, 'package.json')} is not valid JSON`, {
      cause: error,
      hint: 'Fix package.json or set [test] command = "..." in .ratchet/config.toml',
    });
  }
  const parsed = packageJsonSchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

function detected(command: string, framework: Framework, marker: string): DetectedTestCommand {
  return { command, framework, source: 'detected', marker };
}

async function exists(root: string, name: string): Promise<boolean> {
  try {
    await access(path.join(root, name));
    return true;
  } catch {
    return false;
  }
}

/** Clippy as a lint: every target (tests, examples, benches too), its warnings failing the check. */
const CLIPPY_LINT = 'cargo clippy --all-targets -- -D warnings';

/** Whether `cargo clippy --version` succeeds (with `pathEnv` as PATH) in `root`. */
async function clippyWorks(root: string, pathEnv: string): Promise<boolean> {
  if (!(await onPath('cargo', pathEnv))) return false;
  return new Promise<boolean>((resolve) => {
    execFile(
      'cargo',
      ['clippy', '--version'],
      { cwd: root, timeout: 60_000, env: { ...process.env, PATH: pathEnv } },
      (error) => resolve(error === null),
    );
  });
}

async function onPath(executable: string, pathEnv: string): Promise<boolean> {
  for (const dir of pathEnv.split(path.delimiter)) {
    if (dir === '') continue;
    try {
      await access(path.join(dir, executable), constants.X_OK);
      return true;
    } catch {
      // Not in this directory.
    }
  }
  return false;
}
