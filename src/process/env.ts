/**
 * The environment of every command Ratchet runs for a project or an agent: the agent's Bash, the
 * test, lint, typecheck and verifier commands, formatters (and, for `--provider claude-code`, the
 * Claude Code CLI). It is built from an allowlist, never inherited: a variable reaches a command
 * only when it is one of `COMMAND_VARIABLES` (or starts with `LC_`) or the user named it in
 * `[bash] env`. Everything else (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `NPM_CONFIG__AUTH`,
 * `PGPASSWORD`, provider keys, agent sockets, proxies) is withheld, and the values of those
 * that look like secrets are redacted wherever Ratchet stores, shows or sends text
 * (`secretsFromEnv`). Spawn with `extendEnv: false`.
 */

/**
 * Variables every command gets when Ratchet has them. Why each:
 * - `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`: finding programs and the user's toolchains
 *   (many live under `$HOME`: nvm, pyenv, rustup, sdkman); `TMPDIR`: where temporary files go;
 * - `LANG`, `LANGUAGE`, `LC_*`, `TZ`, `TERM`: text encoding, collation and time zone change test
 *   results (a suite that passes under UTF-8 may fail under `C`), `TERM` how output is written;
 * - `CI`: test runners behave as the user's CI would when Ratchet itself runs there;
 * - toolchain locations and settings, which say where a compiler, its caches and its installed
 *   packages are (no credentials): Go (`GOROOT`, `GOPATH`, `GOFLAGS`, `GOCACHE`, `GOMODCACHE`,
 *   `GOTOOLCHAIN`), Rust (`CARGO_HOME`, `RUSTUP_HOME`, `RUSTUP_TOOLCHAIN`), Python (`PYENV_ROOT`,
 *   `PYENV_VERSION`, `VIRTUAL_ENV`, `CONDA_PREFIX`), Java (`JAVA_HOME`, `GRADLE_USER_HOME`,
 *   `MAVEN_HOME`, `M2_HOME`), Node.js (`NVM_DIR`, `NVM_BIN`, `VOLTA_HOME`, `PNPM_HOME`,
 *   `COREPACK_HOME`), and the XDG base directories where tools keep their caches and settings.
 *
 * Left out on purpose, for `[bash] env` to add when a project needs them: `NODE_OPTIONS`,
 * `PYTHONPATH`, `LD_PRELOAD`/`LD_LIBRARY_PATH`, `JAVA_TOOL_OPTIONS`, `MAVEN_OPTS` (they load
 * code or point the tests at other files, such as the user's checkout instead of the worktree),
 * `CARGO_TARGET_DIR` (builds outside the worktree), proxies and registry settings (they carry
 * credentials, and commands have no network by default), `SSH_AUTH_SOCK` and other agent sockets.
 */
const COMMAND_VARIABLES: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TMPDIR',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TERM',
  'CI',
  'GOROOT',
  'GOPATH',
  'GOFLAGS',
  'GOCACHE',
  'GOMODCACHE',
  'GOTOOLCHAIN',
  'CARGO_HOME',
  'RUSTUP_HOME',
  'RUSTUP_TOOLCHAIN',
  'PYENV_ROOT',
  'PYENV_VERSION',
  'VIRTUAL_ENV',
  'CONDA_PREFIX',
  'JAVA_HOME',
  'GRADLE_USER_HOME',
  'MAVEN_HOME',
  'M2_HOME',
  'NVM_DIR',
  'NVM_BIN',
  'VOLTA_HOME',
  'PNPM_HOME',
  'COREPACK_HOME',
  'XDG_CACHE_HOME',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
];

/** Prefixes of variables every command gets too (`LC_ALL`, `LC_CTYPE`, ...). */
const COMMAND_VARIABLE_PREFIXES = ['LC_'];

/**
 * What every command gets besides: Python writes no `__pycache__` beside the code it imports. In
 * a project that does not ignore those folders, the caches a test run left in a worktree would
 * be committed with the next checkpoint (and accepted into the user's branch), and a tasks run's
 * merge of a task branch holding them would stop on the run worktree's own untracked copies.
 * `[bash] env` can pass Ratchet's own value instead.
 */
const COMMAND_DEFAULTS: Readonly<Record<string, string>> = { PYTHONDONTWRITEBYTECODE: '1' };

/**
 * The environment a command starts from: the variables of `source` (Ratchet's own environment)
 * that are in `COMMAND_VARIABLES`, start with `LC_`, or are named in `pass` (`[bash] env`), over
 * `COMMAND_DEFAULTS`, and nothing else. Pass it as `CommandSpec.env` with `extendEnv: false`,
 * with the command's own additions spread over it.
 */
export function commandEnvironment(
  source: Readonly<Record<string, string | undefined>>,
  pass: readonly string[] = [],
): Record<string, string> {
  const allowed = new Set([...COMMAND_VARIABLES, ...pass]);
  const env: Record<string, string> = { ...COMMAND_DEFAULTS };
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if (allowed.has(name) || COMMAND_VARIABLE_PREFIXES.some((prefix) => name.startsWith(prefix))) env[name] = value;
  }
  return env;
}

/**
 * `base` with `overlay` spread over it, where an `undefined` value in `overlay` removes the
 * variable: the complete environment for a spec with `extendEnv: false`.
 */
export function withEnvironment(
  base: Readonly<Record<string, string>>,
  overlay: Readonly<Record<string, string | undefined>> = {},
): Record<string, string> {
  const env: Record<string, string> = { ...base };
  for (const [name, value] of Object.entries(overlay)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}
