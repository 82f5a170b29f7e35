/**
 * Running the built CLI as root and as an ordinary user, for the security tests: a sandbox must
 * hold for both (root keeps every capability unless the sandbox drops them; an ordinary user
 * gets its namespaces from unprivileged user namespaces).
 *
 * The ordinary user is `nobody` (65534), switched to with `setpriv --reuid 65534 --regid 65534
 * --clear-groups`; the directories it works in (the repository, its HOME, `RATCHET_HOME`) are
 * handed to it first and taken back afterwards, so the test (root) can inspect them with git.
 * When the tests themselves do not run as root, they run as the current user only.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, linkSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { claudeBinary } from './claude-binary.js';
import { CLI, cliEnv, type CliResult } from './run-cli.js';

export type TestUser = 'root' | 'nobody' | 'the current user';

const NOBODY = '65534';

/** The users to run as: root and nobody when the tests run as root, else the current user. */
export function testUsers(): TestUser[] {
  return process.getuid?.() === 0 ? ['root', 'nobody'] : ['the current user'];
}

/** Gives `paths` (recursively) to `user`: nobody's when it is nobody, root's otherwise. */
export function handTo(user: TestUser, paths: readonly string[]): void {
  if (process.getuid?.() !== 0) return;
  const owner = user === 'nobody' ? `${NOBODY}:${NOBODY}` : '0:0';
  for (const path of paths) execFileSync('chown', ['-R', owner, path]);
}

/** The Node.js and `claude` executables `user` can run, and how to remove copies made for it. */
export interface UserTools {
  node: string;
  claude: string;
  cleanup(): void;
}

/**
 * The test's Node.js and the Claude Code CLI, for `user`. They are installed under root's HOME,
 * which nobody may not enter: for nobody, hard links to them (copies across file systems) in a
 * directory of its own.
 */
export function toolsFor(user: TestUser): UserTools {
  if (user !== 'nobody') return { node: process.execPath, claude: claudeBinary(), cleanup: () => undefined };
  const dir = mkdtempSync(join(tmpdir(), 'ratchet-user-tools-'));
  chmodSync(dir, 0o755);
  const place = (source: string, name: string): string => {
    const target = join(dir, name);
    try {
      linkSync(source, target);
    } catch {
      copyFileSync(source, target);
      chmodSync(target, 0o755);
    }
    return target;
  };
  return {
    node: place(process.execPath, 'node'),
    claude: place(claudeBinary(), 'claude'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Runs `node dist/bundle/main.js ...args` as `user`, with `tools.node` (first on its PATH); never
 * throws on a non-zero exit.
 */
export async function runCliAs(
  user: TestUser,
  tools: UserTools,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<CliResult> {
  const command = user === 'nobody' ? 'setpriv' : tools.node;
  const prefix = user === 'nobody' ? ['--reuid', NOBODY, '--regid', NOBODY, '--clear-groups', tools.node] : [];
  const timeout = options.timeoutMs ?? 240_000;
  const result = await execa(command, [...prefix, CLI, ...args], {
    cwd: options.cwd,
    env: cliEnv({ PATH: `${dirname(tools.node)}:${process.env.PATH ?? ''}`, ...options.env }),
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout,
    forceKillAfterDelay: 2_000,
  });
  if (result.timedOut) throw new Error(`ratchet ${args.join(' ')} as ${user} timed out after ${timeout} ms`);
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
}
