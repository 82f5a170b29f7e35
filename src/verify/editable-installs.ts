import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ProcessRunner } from '../process/types.js';

/*
 * Editable installs test the wrong code (issue 11, finding 8). A run's worktree shares the
 * checkout's virtual environment (`.venv` is linked, not copied), and an editable install there
 * points into the checkout: `import calc` in a test run in the worktree imports the user's
 * `src/calc`, not the one the agent changed. The installers write one of these into
 * site-packages (each shape checked against a real install):
 *
 * - a `.pth` file holding a directory (setuptools >= 64 for a src layout:
 *   `__editable__.calc-1.0.pth`; flit: `calc.pth`; hatchling: `_editable_impl_calc.pth`; the
 *   `easy-install.pth` of `setup.py develop`, whose `calc.egg-link` holds the same directory);
 * - a `.pth` file that imports a finder module holding the package's directory: setuptools'
 *   `__editable___calc_1_0_finder.py` (`MAPPING = {'calc': '/checkout/calc'}`), hatchling's
 *   exact mode through `editables` (`F.map_module('calc', '/checkout/src/calc/__init__.py')`).
 *
 * The fix works with or without a sandbox: every command of the run gets the worktree's
 * counterparts of those directories first on `PYTHONPATH`. Entries of `PYTHONPATH` come before
 * site-packages and the directories `.pth` files add, and the path finder that reads them runs
 * before the editable finders, which are appended to `sys.meta_path`.
 */

/** The worktree's counterparts of the directories editable installs put on `sys.path`, in order. */
export async function editableInstallPaths(
  checkout: string,
  worktree: string,
  venvs: readonly string[],
): Promise<string[]> {
  const entries: string[] = [];
  for (const venv of venvs) {
    for (const sitePackages of await sitePackagesOf(path.join(checkout, venv))) {
      entries.push(...(await editableEntries(sitePackages)));
    }
  }
  const paths: string[] = [];
  for (const entry of entries) {
    const relative = path.relative(checkout, entry);
    if (relative.startsWith('..') || path.isAbsolute(relative)) continue;
    const mapped = path.join(worktree, relative);
    if (existsSync(mapped) && !paths.includes(mapped)) paths.push(mapped);
  }
  return paths;
}

/** `PYTHONPATH` with `paths` first (nothing to add: undefined). */
function pythonPathWith(paths: readonly string[], existing: string | undefined): string | undefined {
  if (paths.length === 0) return undefined;
  return [...paths, ...(existing ?? '').split(path.delimiter).filter(Boolean)].join(path.delimiter);
}

async function sitePackagesOf(venv: string): Promise<string[]> {
  const found: string[] = [];
  const windows = path.join(venv, 'Lib', 'site-packages');
  if (existsSync(windows)) found.push(windows);
  for (const lib of ['lib', 'lib64']) {
    const names = await readdir(path.join(venv, lib)).catch(() => [] as string[]);
    for (const name of names.filter((entry) => /^(?:python|pypy)\d/.test(entry)).sort()) {
      const dir = path.join(venv, lib, name, 'site-packages');
      if (existsSync(dir) && !found.includes(dir)) found.push(dir);
    }
  }
  return found;
}

/** The directories the editable installs of one site-packages put on `sys.path`. */
async function editableEntries(sitePackages: string): Promise<string[]> {
  const names = (await readdir(sitePackages).catch(() => [] as string[])).sort();
  const entries: string[] = [];
  for (const name of names) {
    const file = path.join(sitePackages, name);
    if (name.endsWith('.pth') || name.endsWith('.egg-link')) {
      const text = await readFile(file, 'utf8').catch(() => '');
      for (const line of text.split(/\r?\n/)) {
        const trimmed = line.trim();
        // `import ...` lines run code (a finder, read below); `..` in an .egg-link is relative.
        if (trimmed === '' || trimmed.startsWith('#') || /^import[\s\t]/.test(trimmed)) continue;
        if (name.endsWith('.egg-link')) {
          if (path.isAbsolute(trimmed)) entries.push(path.normalize(trimmed));
          break;
        }
        entries.push(path.resolve(sitePackages, trimmed));
      }
    } else if (/^(?:__editable___.*_finder|_editable_impl_.*)\.py$/.test(name)) {
      const text = await readFile(file, 'utf8').catch(() => '');
      for (const target of finderTargets(text)) entries.push(importRoot(target));
    }
  }
  return entries;
}

/** The absolute paths a finder module maps modules to (`MAPPING = {...}`, `map_module(...)`). */
function finderTargets(text: string): string[] {
  const targets: string[] = [];
  const mapping = /^MAPPING\s*(?::[^=]*)?=\s*(\{.*\})\s*$/m.exec(text)?.[1];
  const sources = [mapping ?? '', ...[...text.matchAll(/\bmap_module\(([^)]*)\)/g)].map((match) => match[1] ?? '')];
  for (const source of sources) {
    for (const match of source.matchAll(/(['"])((?:\\.|(?!\1).)*)\1/g)) {
      const value = (match[2] ?? '').replace(/\\\\/g, '\\');
      if (path.isAbsolute(value)) targets.push(path.normalize(value));
    }
  }
  return targets;
}

/** The `sys.path` directory from which a module or package at `target` is imported. */
function importRoot(target: string): string {
  const base = path.basename(target);
  if (base === '__init__.py') return path.dirname(path.dirname(target));
  return path.dirname(target);
}

/**
 * A runner whose every command has `paths` first on `PYTHONPATH` (see `editableInstallPaths`);
 * `runner` itself when there is nothing to add.
 */
export function withPythonPath(runner: ProcessRunner, paths: readonly string[]): ProcessRunner {
  if (paths.length === 0) return runner;
  return {
    ...(runner.scratchDir === undefined ? {} : { scratchDir: runner.scratchDir }),
    run(spec) {
      const inherited = spec.extendEnv === false ? undefined : process.env.PYTHONPATH;
      const existing = spec.env && 'PYTHONPATH' in spec.env ? spec.env.PYTHONPATH : inherited;
      return runner.run({ ...spec, env: { ...spec.env, PYTHONPATH: pythonPathWith(paths, existing) } });
    },
  };
}
