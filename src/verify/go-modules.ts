import { existsSync } from 'node:fs';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { detectFramework, leadingCd } from './detect.js';

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

/** What to say about them: the modules, and how to test them in the same run. */
export function untestedGoModulesText(modules: readonly string[]): { detail: string; hint: string } {
  const listed = modules.map((dir) => `${dir}/`).join(', ');
  const patterns = ['./...', ...modules.map((dir) => `./${dir}/...`)].join(' ');
  return {
    detail: `${listed} ${modules.length === 1 ? 'is a Go module' : 'are Go modules'} of ${modules.length === 1 ? 'its' : 'their'} own, which \`go test ./...\` here does not test: a change there passes untested`,
    hint: `To test ${modules.length === 1 ? 'it' : 'them'} in the same run, list ${modules.length === 1 ? 'it' : 'them'} in a go.work (\`go work init . ${modules.map((dir) => `./${dir}`).join(' ')}\`) and set [test] command = "go test ${patterns}" in .ratchet/config.toml.`,
  };
}
