import { constants } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { RatchetError } from '../core/errors.js';

/** The test frameworks Ratchet knows how to get per-test results from. */
export type Framework =
  | 'maven'
  | 'gradle'
  | 'node-test'
  | 'jest'
  | 'vitest'
  | 'mocha'
  | 'npm'
  | 'pytest'
  | 'unittest'
  | 'go'
  | 'cargo'
  | 'custom';

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
 */
export async function detectTestCommand(
  root: string,
  override?: string,
  options: DetectOptions = {},
): Promise<DetectedTestCommand> {
  if (override !== undefined && override.trim() !== '') {
    const command = override.trim();
    let framework = detectFramework(command);
    if (framework === 'npm') framework = await npmFramework(root);
    return { command, framework, source: 'config', marker: 'config' };
  }
  if (await exists(root, 'pom.xml')) return detected('mvn test', 'maven', 'pom.xml');
  for (const marker of ['build.gradle', 'build.gradle.kts']) {
    if (await exists(root, marker)) {
      const command = (await exists(root, 'gradlew')) ? './gradlew test' : 'gradle test';
      return detected(command, 'gradle', marker);
    }
  }
  const pkg = await readPackageJson(root);
  const script = pkg?.scripts?.test;
  if (pkg !== undefined && script !== undefined && script.trim() !== '' && !NPM_PLACEHOLDER.test(script)) {
    return detected('npm test', frameworkOfPackage(pkg), 'package.json');
  }
  for (const marker of PYTHON_MARKERS) {
    if (await exists(root, marker)) {
      const command = (await onPath('pytest', options.pathEnv ?? process.env.PATH ?? ''))
        ? 'pytest'
        : 'python3 -m pytest';
      return detected(command, 'pytest', marker);
    }
  }
  if (await exists(root, 'go.mod')) return detected('go test ./...', 'go', 'go.mod');
  if (await exists(root, 'Cargo.toml')) return detected('cargo test', 'cargo', 'Cargo.toml');
  throw new RatchetError('config', `No test command found in ${root}`, {
    hint: 'Set [test] command = "..." in .ratchet/config.toml',
    details: { root },
  });
}

/**
 * Guesses the framework a command line runs. `npm test` alone says nothing about the
 * framework and yields 'npm'; an unknown command yields 'custom'.
 */
export function detectFramework(command: string): Framework {
  const text = command.trim();
  if (/(?:^|[\s/])mvnw?(?:\s|$)/.test(text)) return 'maven';
  if (/(?:^|[\s/])gradlew?(?:\s|$)/.test(text)) return 'gradle';
  if (/\bvitest\b/.test(text)) return 'vitest';
  if (/\bjest\b/.test(text)) return 'jest';
  if (/\bmocha\b/.test(text)) return 'mocha';
  if (/(?:^|[\s/])node(?:\s+\S+)*?\s+--test\b/.test(text)) return 'node-test';
  if (/(?:^|[\s/])(?:py\.test|pytest)(?:\s|$)|-m\s+pytest\b/.test(text)) return 'pytest';
  if (/-m\s+unittest\b/.test(text)) return 'unittest';
  if (/(?:^|\s)go\s+test\b/.test(text)) return 'go';
  if (/(?:^|\s)cargo\s+(?:\+\S+\s+)?(?:test|nextest)\b/.test(text)) return 'cargo';
  if (/^(?:npm|pnpm|yarn)\s+(?:test|t|run\s+test|run-script\s+test)(?:\s|$)/.test(text)) return 'npm';
  return 'custom';
}

/** The `scripts.test` of `<root>/package.json`, when there is one. */
export async function readTestScript(root: string): Promise<string | undefined> {
  return (await readPackageJson(root))?.scripts?.test;
}

function frameworkOfPackage(pkg: PackageJson): Framework {
  const fromScript = detectFramework(pkg.scripts?.test ?? '');
  if (fromScript !== 'custom' && fromScript !== 'npm') return fromScript;
  const dependencies = { ...pkg.dependencies, ...pkg.devDependencies };
  for (const name of ['vitest', 'jest', 'mocha'] as const) if (name in dependencies) return name;
  return 'npm';
}

async function npmFramework(root: string): Promise<Framework> {
  const pkg = await readPackageJson(root);
  return pkg === undefined ? 'npm' : frameworkOfPackage(pkg);
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
