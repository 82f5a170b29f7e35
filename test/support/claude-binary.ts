/**
 * Where the real Claude Code CLI is for the tests. It is installed pinned, outside the project
 * (so `npm ci` stays small), by `.ci/run`:
 *
 *   npm install --prefix "$HOME/.cache/ratchet-tools/claude-code" --no-audit --no-fund @anthropic-ai/claude-code@2.1.330
 *
 * `RATCHET_CLAUDE_BIN` overrides the location. Without it, the suites that need it are skipped
 * with this install command (`toolchain('claude')`, test/support/toolchains.ts), or fail under
 * `RATCHET_TEST_REQUIRE_ALL=1`, as in CI.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const CLAUDE_CODE_VERSION = '2.1.330';

const CLAUDE_INSTALL_PREFIX = join(homedir(), '.cache', 'ratchet-tools', 'claude-code');

export const CLAUDE_INSTALL_COMMAND = `npm install --prefix "$HOME/.cache/ratchet-tools/claude-code" --no-audit --no-fund @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`;

/** The package's postinstall copies the native binary over this stub (a few bytes otherwise). */
const WRAPPER_BINARY = join('node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');

/** A real native binary is hundreds of MB; the unreplaced stub is tiny. */
const MIN_NATIVE_SIZE = 1024 * 1024;

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function nativeCandidates(prefix: string): string[] {
  const libc = process.platform === 'linux' && isMusl() ? '-musl' : '';
  const platformPackage = `claude-code-${process.platform}-${process.arch}${libc}`;
  return [join(prefix, WRAPPER_BINARY), join(prefix, 'node_modules', '@anthropic-ai', platformPackage, 'claude')];
}

/** Node reports the glibc version it runs on; there is none on musl (Alpine). */
function isMusl(): boolean {
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
  return report.header?.glibcVersionRuntime === undefined;
}

/** Null when the real `claude` executable is there, else why not and how to install it. */
export function claudeBinaryProblem(): string | null {
  try {
    claudeBinary();
    return null;
  } catch (error) {
    return error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
  }
}

/** Path of the real `claude` executable; throws with the install command when it is missing. */
export function claudeBinary(): string {
  const override = process.env.RATCHET_CLAUDE_BIN;
  if (override !== undefined && override !== '') {
    if (isExecutable(override)) return override;
    throw new Error(`RATCHET_CLAUDE_BIN=${override} is not an executable file.`);
  }
  for (const candidate of nativeCandidates(CLAUDE_INSTALL_PREFIX)) {
    if (isExecutable(candidate) && statSync(candidate).size >= MIN_NATIVE_SIZE) return candidate;
  }
  throw new Error(
    `The Claude Code CLI ${CLAUDE_CODE_VERSION} is not installed for the tests (looked in ${CLAUDE_INSTALL_PREFIX}).\n` +
      `Install it with:\n  ${CLAUDE_INSTALL_COMMAND}\nor point RATCHET_CLAUDE_BIN at a claude executable.`,
  );
}
