/**
 * Real mocha and ava for the tests that read their results, installed pinned outside the project
 * (as the Claude Code CLI is, see claude-binary.ts) by `.ci/run`:
 *
 *   npm install --prefix "$HOME/.cache/ratchet-tools/js-runners" --no-audit --no-fund mocha@12.0.3 ava@7.0.0
 *
 * A missing install is made on first use (the npm registry is reachable wherever the suite
 * runs); when that fails too, the tests fail loudly with the command: they never skip.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const PACKAGES = ['mocha@12.0.3', 'ava@7.0.0'];
const PREFIX = join(homedir(), '.cache', 'ratchet-tools', 'js-runners');
const INSTALL = `npm install --prefix "$HOME/.cache/ratchet-tools/js-runners" --no-audit --no-fund ${PACKAGES.join(' ')}`;

/** The `node_modules` directory holding mocha and ava (link it into a project as its own). */
export function jsRunnersNodeModules(): string {
  const modules = join(PREFIX, 'node_modules');
  const ready = (): boolean => ['mocha', 'ava'].every((name) => existsSync(join(modules, '.bin', name)));
  if (ready()) return modules;
  try {
    execFileSync('npm', ['install', '--prefix', PREFIX, '--no-audit', '--no-fund', '--loglevel=error', ...PACKAGES], {
      stdio: 'pipe',
      timeout: 300_000,
    });
  } catch (error) {
    throw new Error(`mocha and ava are not installed for the tests and could not be installed. Run:\n  ${INSTALL}`, {
      cause: error,
    });
  }
  if (!ready()) throw new Error(`mocha and ava are missing from ${modules} after installing them. Run:\n  ${INSTALL}`);
  return modules;
}
