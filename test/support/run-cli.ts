/**
 * Runs the BUILT Ratchet CLI (`dist/bundle/main.js`, the bundle `ratchet` runs) as a subprocess, for end-to-end tests.
 *
 * The child gets a clean environment: the parent's, minus anything that would change what
 * Ratchet does (provider keys and URLs, `TDD_*`, `RATCHET_*`, `GIT_*`, Vitest's and npm's own
 * variables), with colours off, plus what the test passes. Nothing is mocked: the child runs
 * real git, real test commands and the real provider adapters (against a loopback fake).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { z } from 'zod';

export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(PACKAGE_ROOT, 'dist', 'bundle', 'main.js');

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  cwd: string;
  /** Added to the clean environment (see `cliEnv`). */
  env: Record<string, string>;
  /** Default 120 s: a hung run fails the test instead of the suite. */
  timeoutMs?: number;
}

const DROPPED = /^(ANTHROPIC_|OPENAI_|OLLAMA_|TDD_|RATCHET_|GIT_|VITEST|npm_|NODE_OPTIONS$|NODE_ENV$|FORCE_COLOR$)/;

/** The parent's environment without the variables that would leak into Ratchet's behaviour. */
export function cliEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !DROPPED.test(name)) env[name] = value;
  }
  return { ...env, NO_COLOR: '1', ...extra };
}

/** Runs `node dist/bundle/main.js ...args`; never throws on a non-zero exit. */
export async function runCli(args: readonly string[], options: RunCliOptions): Promise<CliResult> {
  const result = await execa(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: cliEnv(options.env),
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: options.timeoutMs ?? 120_000,
    forceKillAfterDelay: 2_000,
  });
  const cli = { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
  if (result.timedOut)
    throw new Error(
      `ratchet ${args.join(' ')} timed out after ${options.timeoutMs ?? 120_000} ms: ${describeResult(cli)}`,
    );
  return cli;
}

/** Describes a result for assertion messages. */
export function describeResult(result: CliResult): string {
  const tail = (text: string): string =>
    text
      .split('\n')
      .slice(-30)
      .map((line) => (line.length > 400 ? `${line.slice(0, 400)}…` : line))
      .join('\n');
  return `exit ${result.exitCode}\n--- stdout (tail)\n${tail(result.stdout)}\n--- stderr (tail)\n${tail(result.stderr)}`;
}

/** The files of `src/` changed since the build of `dist/` (all of them when there is no build). */
export function sourcesNewerThanBuild(): string[] {
  const built = existsSync(CLI) ? statSync(CLI).mtimeMs : -Infinity;
  const newer: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(entry.name) && statSync(path).mtimeMs > built) newer.push(path);
    }
  };
  walk(join(PACKAGE_ROOT, 'src'));
  return newer;
}

/**
 * Throws unless `dist/` is built from the current `src/`: these tests run the built CLI. The e2e
 * project's global setup (`fresh-build.ts`) builds before they start when `src/` is newer; a
 * file changed since then would have the tests exercise old code, so that fails too.
 */
export function assertFreshBuild(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} does not exist: run \`npm run build\` before the end-to-end tests.`);
  const newer = sourcesNewerThanBuild();
  if (newer.length > 0) {
    throw new Error(
      `dist/ is older than ${newer.length} source file(s) (e.g. ${newer[0] ?? ''}), changed after the build: run \`npm run build\` (or the tests again) to test the current code.`,
    );
  }
}

/** One line of `--json` output (NDJSON): an engine event, or the CLI's error object. */
export const JsonLineSchema = z.looseObject({ type: z.string() });
export type JsonLine = z.infer<typeof JsonLineSchema>;

/** Parses `--json` stdout; every non-empty line must be a JSON object with a `type`. */
export function parseNdjson(stdout: string): JsonLine[] {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, index) => {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new Error(`--json output line ${index + 1} is not JSON: ${line.slice(0, 200)}`);
      }
      return JsonLineSchema.parse(value);
    });
}
