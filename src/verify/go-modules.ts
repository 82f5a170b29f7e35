import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { detectFramework, leadingCd, shellWord } from './detect.js';

/**
 * Go modules below the directory a `go test ./...` command tests (a nested `go.mod`:
 * golang-lru's `arc/`), which that command does not test: `./...` stops at a module boundary,
 * also in workspace mode. A change there would pass every gate untested. Empty for any other
 * command, or one that names more packages than `./...`.
 */
export async function untestedGoModules(root: string, command: string): Promise<string[]> {
  const cd = leadingCd(command);
  const dir = path.resolve(root, cd?.dir ?? '.');
  const rest = (cd?.rest ?? command).trim();
  if (detectFramework(rest) !== 'go') return [];
  const patterns = rest.split(/\s+/).filter((word) => /^\.{1,2}\//.test(word) || word === '.');
  if (patterns.length !== 1 || patterns[0] !== './...') return [];
  if (!existsSync(path.join(dir, 'go.mod'))) return [];
  const found = await glob('**/go.mod', {
    cwd: dir,
    ignore: ['**/node_modules/**', '**/vendor/**', '**/testdata/**', '**/.*/**'],
    deep: 6,
  });
  return found
    .filter((file) => file !== 'go.mod')
    .map((file) => path.posix.dirname(file))
    .sort();
}

/**
 * The nested Go modules (relative to `root`) that none of `commands` tests: those each Go test
 * command among them leaves out (see `untestedGoModules`), and none tests otherwise (`go test
 * ./... ./arc/...`, or `cd arc && go test ./...`). Empty when no command runs Go's tests.
 */
export async function untestedGoModulesOf(root: string, commands: readonly string[]): Promise<string[]> {
  let untested: string[] | undefined;
  for (const command of commands) {
    const cd = leadingCd(command);
    if (detectFramework((cd?.rest ?? command).trim()) !== 'go') continue;
    const left = (await untestedGoModules(root, command)).map((dir) => path.posix.join(cd?.dir ?? '.', dir));
    untested = untested === undefined ? left : untested.filter((dir) => left.includes(dir));
  }
  return untested ?? [];
}

/**
 * The `go.work` that `go` uses in `dir` (its own, or one in a directory above it, up to `root`):
 * the directories its `use` directives name, relative to `root`; null without one.
 */
async function goWorkUses(root: string, dir: string): Promise<string[] | null> {
  for (let at = dir; ; at = path.posix.dirname(at)) {
    const text = await readFile(path.join(root, at, 'go.work'), 'utf8').catch(() => undefined);
    if (text !== undefined) {
      // `use ./arc` or a `use ( ... )` block, one directory a line; `//` comments.
      const lines = text.replace(/\/\/.*$/gm, '');
      const block = [...lines.matchAll(/^\s*use\s*\(([^)]*)\)/gm)].flatMap((match) => (match[1] ?? '').split('\n'));
      const single = [...lines.matchAll(/^\s*use\s+([^\s(]+)\s*$/gm)].map((match) => match[1] ?? '');
      return [...block, ...single]
        .map((word) => word.trim().replace(/^"(.*)"$/, '$1'))
        .filter((word) => word !== '')
        .map((word) => path.posix.join(at, word));
    }
    if (at === '.' || at === '') return null;
  }
}

/** Where a Go test command runs (relative to the repository root), and the go.work there. */
export interface GoTestPlace {
  /** The directory of the module `go test ./...` tests (the command's leading `cd`), `.` for the root. */
  dir: string;
  /** The directories the go.work that applies there uses (relative to the root); null without one. */
  workspace: string[] | null;
}

/**
 * The nested modules a Go test command leaves out, relative to the repository root, with where it
 * runs (see `GoTestPlace`): what `untestedGoModulesText` needs to say how to test them all.
 */
export async function untestedGoModulesAt(
  root: string,
  command: string,
): Promise<{ modules: string[]; place: GoTestPlace }> {
  const dir = path.posix.normalize(leadingCd(command)?.dir ?? '.');
  const modules = (await untestedGoModules(root, command)).map((module) => path.posix.join(dir, module));
  return { modules, place: modules.length === 0 ? { dir, workspace: null } : await goTestPlace(root, dir) };
}

/** `dir` (relative to `root`) as a place Go tests run in: with the go.work that applies there. */
export async function goTestPlace(root: string, dir = '.'): Promise<GoTestPlace> {
  return { dir, workspace: await goWorkUses(root, dir) };
}

/**
 * What to say about them (relative to the repository root): the modules, and a test command
 * that tests them all in the same run, to paste as it is (it runs from the repository root, as
 * the test command does). In a workspace that uses them, one `go test` names each; else each
 * module is tested from its own directory, chained with `&&` (`./...` stops at a module).
 */
export function untestedGoModulesText(
  modules: readonly string[],
  place: GoTestPlace = { dir: '.', workspace: null },
): { detail: string; hint: string } {
  const one = modules.length === 1;
  const listed = modules.map((dir) => `${dir}/`).join(', ');
  const cd = place.dir === '.' ? '' : `cd ${shellWord(place.dir)} && `;
  const relative = modules.map((dir) => `./${path.posix.relative(place.dir, dir)}`);
  const named = `go test ./... ${relative.map((dir) => `${dir}/...`).join(' ')}`;
  const detail = `${listed} ${one ? 'is a Go module' : 'are Go modules'} of ${one ? 'its' : 'their'} own, which \`go test ./...\` here does not test: a change there passes untested`;
  const set = (command: string) => `set [test] command = ${JSON.stringify(`${cd}${command}`)} in .ratchet/config.toml`;
  if (place.workspace === null) {
    const chained = [
      'go test ./...',
      ...modules.map((dir) => `(cd ${shellWord(path.posix.relative(place.dir, dir))} && go test ./...)`),
    ].join(' && ');
    return { detail, hint: `To test ${one ? 'it' : 'them'} in the same run, ${set(chained)}.` };
  }
  const uses = new Set(place.workspace.map((dir) => path.posix.normalize(dir)));
  const missing = relative.filter((_dir, index) => !uses.has(path.posix.normalize(modules[index] ?? '')));
  if (missing.length === 0)
    return {
      detail,
      hint: `Your go.work uses ${one ? 'it' : 'them'}: to test ${one ? 'it' : 'them'} in the same run, ${set(named)}.`,
    };
  return {
    detail,
    hint: `To test ${one ? 'it' : 'them'} in the same run, add ${missing.length === 1 ? 'it' : 'them'} to your go.work (\`${cd}go work use ${missing.join(' ')}\`) and ${set(named)}.`,
  };
}
