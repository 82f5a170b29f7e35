import { createHash } from 'node:crypto';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import picomatch from 'picomatch';
import { parse as parseToml } from 'smol-toml';
import { leadingCd } from '../detect.js';

/*
 * The parts of the mixed files (`package.json`, `pyproject.toml`, `setup.cfg`, `Cargo.toml`,
 * `go.mod`, `pom.xml`) that decide how tests run: see `lockVerification`.
 */

/** Files of which only some parts are locked in TDD (whole in refactor admission). */
export const PARTIAL_FILES = [
  'package.json',
  'pyproject.toml',
  'setup.cfg',
  'Cargo.toml',
  'go.mod',
  'pom.xml',
] as const;
export type PartialFile = (typeof PARTIAL_FILES)[number];

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

export interface Parts {
  digests: Record<string, string>;
  /** The locked parts' text, searched for files they name. */
  text: string;
}

export function partsOf(
  name: PartialFile,
  text: string,
  file: string,
  commands: readonly string[],
  root: string,
): Parts {
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
export function scriptReferences(command: string): string[] {
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

/** `value` when it is a plain object, else an empty one. */
export function record(value: unknown): Record<string, unknown> {
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

/** Hex sha256 of `content`. */
export function sha256(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}
