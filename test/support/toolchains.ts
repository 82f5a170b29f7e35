/**
 * The toolchains some suites drive for real (a Python with pytest, Go, Rust, a JDK with Maven,
 * bubblewrap, Chromium, util-linux `script`, Redis, tmux, the Claude Code CLI). The README asks only for
 * Node.js and git, so on a fresh machine a suite whose toolchain is missing is skipped, never
 * silently: its describe says why, and the run ends with one summary naming each missing tool and
 * the command that installs it (`test/support/toolchain-summary.ts`). `.ci/run` installs them all
 * and sets `RATCHET_TEST_REQUIRE_ALL=1`, under which a missing toolchain fails the suite instead.
 *
 *   const go = toolchain('go');
 *   describe.skipIf(go.missing)(`go test (real toolchain)${go.note}`, () => { ... });
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { CLAUDE_INSTALL_COMMAND, claudeBinaryProblem } from './claude-binary.js';

export type ToolchainName =
  | 'bwrap'
  | 'python3'
  | 'python3-pytest'
  | 'python3-venv'
  | 'pytest'
  | 'go'
  | 'cargo'
  | 'clippy'
  | 'chromium'
  | 'script'
  | 'claude'
  | 'redis'
  | 'cmake'
  | 'polyglot-jest'
  | 'tmux';

interface ToolchainSpec {
  /** What the suites need, in a few words. */
  what: string;
  /** The command that installs it on Debian or Ubuntu (what `.ci/run` does). */
  install: string;
  /** Null when the toolchain works here, else why not. */
  problem(): string | null;
}

/** Null when `file args` runs and exits 0, else the reason. */
function runs(file: string, args: readonly string[]): string | null {
  const result = spawnSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
  if (result.error)
    return `\`${file}\` cannot run (${(result.error as NodeJS.ErrnoException).code ?? result.error.message})`;
  if (result.status !== 0) {
    // The last line: where Python's traceback, for one, says what went wrong.
    const said = `${result.stderr}`.trim().split('\n').at(-1) ?? '';
    return `\`${[file, ...args].join(' ')}\` exited ${result.status ?? result.signal}${said ? `: ${said}` : ''}`;
  }
  return null;
}

/** What `.ci/run` installs for the JavaScript exercises (the benchmark's `JS_DEPENDENCIES`). */
const POLYGLOT_JS_PACKAGES = 'jest@29.7.0 babel-jest@29.7.0 @exercism/babel-preset-javascript@0.7.0';

const TOOLCHAINS: Record<ToolchainName, ToolchainSpec> = {
  bwrap: {
    what: 'bubblewrap, the sandbox of the agent Bash and the test commands',
    install: 'apt-get install -y bubblewrap',
    // Installed is not enough: it must be allowed to make its namespaces here.
    problem: () => runs('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-pid', '--', '/bin/true']),
  },
  python3: {
    what: 'the system Python (/usr/bin/python3)',
    install: 'apt-get install -y python3',
    problem: () => runs('/usr/bin/python3', ['-c', 'import unittest']),
  },
  'python3-pytest': {
    what: 'pytest for the system Python (/usr/bin/python3 -m pytest)',
    install: 'apt-get install -y python3 python3-pytest',
    problem: () => runs('/usr/bin/python3', ['-m', 'pytest', '--version']),
  },
  'python3-venv': {
    what: 'venv, pip, setuptools and wheel for the system Python (real editable installs, offline)',
    install: 'apt-get install -y python3-venv python3-setuptools python3-wheel',
    // ensurepip gives the venv its pip; setuptools and wheel build the install without PyPI. Names
    // from inside each: an empty directory of that name would import as a namespace package.
    problem: () =>
      runs('/usr/bin/python3', [
        '-c',
        'from ensurepip import version; version(); import venv, setuptools.build_meta; from wheel import __version__',
      ]),
  },
  pytest: {
    what: 'pytest on PATH',
    install: 'apt-get install -y python3-pytest',
    problem: () => runs('pytest', ['--version']),
  },
  go: { what: 'Go', install: 'apt-get install -y golang-go', problem: () => runs('go', ['version']) },
  cargo: {
    what: 'Rust with cargo',
    install: 'apt-get install -y cargo (or rustup)',
    problem: () => runs('cargo', ['--version']),
  },
  clippy: {
    what: "cargo clippy, Rust's linter",
    install: 'apt-get install -y rust-clippy (or rustup component add clippy)',
    problem: () => runs('cargo', ['clippy', '--version']),
  },
  chromium: {
    what: 'Chromium, to render the HTML report',
    install: 'apt-get install -y chromium',
    problem: () => runs('chromium', ['--version']),
  },
  script: {
    what: 'util-linux script, a pseudo-terminal for the interactive tests',
    install: 'apt-get install -y bsdutils',
    problem: () => runs('script', ['--version']),
  },
  redis: {
    what: 'redis-server, for the BullMQ queue (the tests start their own on loopback)',
    install: 'apt-get install -y redis-server',
    problem: () => runs('redis-server', ['--version']),
  },
  cmake: {
    what: 'CMake and a C++ compiler, for the C++ exercises of ratchet bench polyglot',
    install: 'apt-get install -y cmake g++ make',
    problem: () => runs('cmake', ['--version']) ?? runs('c++', ['--version']) ?? runs('make', ['--version']),
  },
  'polyglot-jest': {
    what: "jest with Exercism's Babel preset, shared by the JavaScript exercises of ratchet bench polyglot",
    install: `npm install --prefix "$HOME/.cache/ratchet-tools/polyglot-js" --no-audit --no-fund ${POLYGLOT_JS_PACKAGES}`,
    problem: () =>
      existsSync(join(homedir(), '.cache', 'ratchet-tools', 'polyglot-js', 'node_modules', '.bin', 'jest'))
        ? null
        : 'not installed in ~/.cache/ratchet-tools/polyglot-js',
  },
  tmux: {
    what: 'tmux, a terminal the TUI test drives (send-keys, capture-pane)',
    install: 'apt-get install -y tmux',
    problem: () => runs('tmux', ['-V']),
  },
  claude: {
    what: 'the Claude Code CLI (the real binary, pinned)',
    install: CLAUDE_INSTALL_COMMAND,
    problem: () => claudeBinaryProblem(),
  },
};

/** Set by `.ci/run`: every toolchain must be there, a missing one fails instead of skipping. */
export const REQUIRE_ALL = process.env.RATCHET_TEST_REQUIRE_ALL === '1';

/** Where the suites of this run note what they skipped (set by the global setup). */
export const TOOLCHAIN_LOG_VARIABLE = 'RATCHET_TEST_TOOLCHAIN_LOG';

const probed = new Map<ToolchainName, string | null>();

/** What `toolchain()` answers: whether to skip, and a note for the suite's name. */
export interface ToolchainCheck {
  missing: boolean;
  /** `''` when present, else ` [skipped: <tool> missing: <reason>; install: <command>]`. */
  note: string;
}

/** One line of the log the summary reads. */
export interface ToolchainLogEntry {
  name: ToolchainName;
  what: string;
  install: string;
  problem: string;
  suite: string;
  /** Set when the suite ran without the tool instead of skipping: how (`[bash] sandbox = "off"`). */
  instead?: string;
}

/** The test file running now, for the summary (vitest's, else from the stack). */
function callerFile(): string {
  const testPath = expect.getState().testPath;
  const relative = testPath?.match(/(test\/.+\.test\.ts)$/)?.[1];
  if (relative !== undefined) return relative;
  const stack = new Error().stack?.split('\n') ?? [];
  const frame = stack.find((line) => /\/test\/.*\.test\.ts/.test(line) && !line.includes('/test/support/'));
  const match = frame?.match(/(test\/[^\s:)]+\.test\.ts)/);
  return match?.[1] ?? 'a test file';
}

function missingOf(names: readonly ToolchainName[], instead?: string): ToolchainLogEntry[] {
  const missing: ToolchainLogEntry[] = [];
  const suite = callerFile();
  for (const name of names) {
    if (!probed.has(name)) probed.set(name, TOOLCHAINS[name].problem());
    const problem = probed.get(name) ?? null;
    const { what, install } = TOOLCHAINS[name];
    if (problem !== null)
      missing.push({ name, what, install, problem, suite, ...(instead === undefined ? {} : { instead }) });
  }
  return missing;
}

function reasonOf(missing: readonly ToolchainLogEntry[]): string {
  return missing.map((entry) => `${entry.name} missing: ${entry.problem}; install: ${entry.install}`).join('; ');
}

/** Under `RATCHET_TEST_REQUIRE_ALL=1` a missing toolchain fails. */
function requireUnlessAllowed(missing: readonly ToolchainLogEntry[]): void {
  if (REQUIRE_ALL) throw new Error(`RATCHET_TEST_REQUIRE_ALL=1 and a toolchain is missing: ${reasonOf(missing)}`);
}

/** Notes the entries for the end-of-run summary. */
function logForSummary(missing: readonly ToolchainLogEntry[]): void {
  const log = process.env[TOOLCHAIN_LOG_VARIABLE];
  if (log) appendFileSync(log, missing.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
}

/**
 * Checks the toolchains a suite needs (each probed once per test file). When one is missing:
 * under `RATCHET_TEST_REQUIRE_ALL=1` it throws (the file fails, naming the tool and its install
 * command); otherwise it notes the skip for the end-of-run summary and returns `missing: true`
 * for `describe.skipIf` / `it.skipIf`.
 */
export function toolchain(...names: ToolchainName[]): ToolchainCheck {
  const missing = missingOf(names);
  if (missing.length === 0) return { missing: false, note: '' };
  requireUnlessAllowed(missing);
  logForSummary(missing);
  return { missing: true, note: ` [skipped: ${reasonOf(missing)}]` };
}

/** What `toolchainOrInstead()` answers: `toolchain()`'s answer, and a way to say the suite did without. */
export interface ToolchainFallback extends ToolchainCheck {
  /** Notes for the summary that this file ran without the tool (call it where it does; once is enough). */
  ranInstead(): void;
}

/**
 * For a suite that can run without `name`, in a way `instead` names (a run with
 * `[bash] sandbox = "off"` where bubblewrap is missing): the same check as `toolchain()`, but
 * the note says so rather than "skipped", and the summary lists the file as having run `instead`
 * once it calls `ranInstead()` (a suite skipped for another tool never does).
 */
export function toolchainOrInstead(name: ToolchainName, instead: string): ToolchainFallback {
  const missing = missingOf([name], instead);
  if (missing.length === 0) return { missing: false, note: '', ranInstead: () => undefined };
  requireUnlessAllowed(missing);
  const suite = missing[0]?.suite;
  let logged = false;
  return {
    missing: true,
    note: ` [${name} missing, so it ${instead}: ${missing[0]?.problem ?? ''}]`,
    ranInstead: () => {
      if (logged) return;
      logged = true;
      // The file running now (a harness may call it from a test), else the one that asked.
      const current = callerFile();
      logForSummary(
        missing.map((entry) => ({ ...entry, suite: current === 'a test file' ? (suite ?? current) : current })),
      );
    },
  };
}
