import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { leadingCd } from '../detect.js';
import { record, scriptReferences } from './verification-parts.js';

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
export function filesNamedByCommands(commands: readonly string[], root: string): Map<string, string> {
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
export function filesNamedIn(text: string, dir: string, root: string): string[] {
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

function readFileText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
