import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

/**
 * `npm test` without npm: the package's `test` script run as npm runs it, with no npm process in
 * between. npm itself costs about 120 ms of CPU per run before the script starts (measured with
 * npm 11 on Node 24, `npm test` 0.22 s against the script alone 0.10 s), and the TDD pipeline
 * runs the suite after every stage of every task: in a pool of eight tasks npm was a third of all
 * the CPU the run used, on a machine where that CPU is the wall time.
 *
 * What npm does for a script that has no `pre`/`post` scripts, and what is done here: `sh -c`
 * with the script (and the arguments after `--`, appended), in the package's directory, with
 * `node_modules/.bin` of that directory and of every directory above it first on PATH, and
 * npm's variables that scripts and tools read (`npm_lifecycle_event`, `npm_lifecycle_script`,
 * `npm_package_name`, `npm_package_version`, `npm_package_json`, `npm_command`, `INIT_CWD`). The
 * exit code is the script's, as npm's is. npm stays in between whenever it might do more: `pre`
 * or `post` scripts, a project `.npmrc` (it may set `script-shell` or `node-options`), the same
 * settings in the user's `.npmrc` or in `npm_config_*` variables, a command line with shell
 * syntax, no PATH to extend, Windows, or a package.json that cannot be read.
 *
 * The `.bin` folders are put on PATH by the command itself, as npm does it, never in the
 * environment the command is started with: a sandboxed runner finds its own programs (`bwrap`,
 * `prlimit`, `sh`) on that PATH outside the sandbox, and the worktree's `node_modules/.bin` is
 * the model's to write. The script's shell is `/bin/sh` itself, not a `sh` found on that PATH.
 */

const NPM_TEST_COMMAND = /^npm\s+(?:test|t|run\s+test|run-script\s+test)$/;
const SHELL_SYNTAX = /[;&|<>`$()\n]/;
const NPM_SCRIPT_SETTINGS = /^\s*(?:script-shell|node-options)\s*=/im;

const packageSchema = z.looseObject({
  name: z.string().optional(),
  version: z.string().optional(),
  scripts: z.record(z.string(), z.string()).optional(),
});

/** The test script run directly: its command line (PATH set inside it) and the variables npm would give it. */
export interface DirectNpmScript {
  command: string;
  env: Record<string, string>;
}

/**
 * `command` (`npm test`, `npm t`, `npm run test`, optionally with `-- args`) as the script it
 * runs, in `cwd` with `env`; undefined when npm must run it (see above).
 */
export async function directNpmTest(
  command: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<DirectNpmScript | undefined> {
  const trimmed = command.trim();
  if (process.platform === 'win32' || env.PATH === undefined || SHELL_SYNTAX.test(trimmed)) return undefined;
  const separator = trimmed.search(/\s--(?:\s|$)/);
  const head = separator === -1 ? trimmed : trimmed.slice(0, separator);
  const args = separator === -1 ? '' : trimmed.slice(separator).replace(/^\s--/, '').trim();
  if (!NPM_TEST_COMMAND.test(head)) return undefined;
  if (await npmSettingsMayChangeScripts(cwd, env)) return undefined;
  const file = path.join(cwd, 'package.json');
  let parsed: z.infer<typeof packageSchema>;
  try {
    const result = packageSchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
    if (!result.success) return undefined;
    parsed = result.data;
  } catch {
    return undefined;
  }
  const scripts = parsed.scripts ?? {};
  const script = scripts.test;
  if (script === undefined || script.trim() === '' || 'pretest' in scripts || 'posttest' in scripts) return undefined;
  const bins = binDirectories(cwd).map(shellQuote).join(':');
  return {
    command: `export PATH=${bins}:"$PATH" && exec /bin/sh -c ${shellQuote(args === '' ? script : `${script} ${args}`)}`,
    env: {
      npm_lifecycle_event: 'test',
      npm_lifecycle_script: script,
      npm_command: 'test',
      npm_package_json: file,
      ...(parsed.name === undefined ? {} : { npm_package_name: parsed.name }),
      ...(parsed.version === undefined ? {} : { npm_package_version: parsed.version }),
      INIT_CWD: cwd,
    },
  };
}

/** Quotes a word for `/bin/sh`. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `node_modules/.bin` of `dir` and of each directory above it, nearest first (npm's order). */
function binDirectories(dir: string): string[] {
  const found: string[] = [];
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    found.push(path.join(current, 'node_modules', '.bin'));
    if (path.dirname(current) === current) return found;
  }
}

async function npmSettingsMayChangeScripts(
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<boolean> {
  if (existsSync(path.join(cwd, '.npmrc'))) return true;
  if (Object.keys(env).some((name) => /^npm_config_(?:script_shell|node_options|userconfig)$/i.test(name))) return true;
  if (env.HOME === undefined) return false;
  const user = await readFile(path.join(env.HOME, '.npmrc'), 'utf8').catch(() => '');
  return NPM_SCRIPT_SETTINGS.test(user);
}
