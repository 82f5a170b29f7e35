/**
 * For the suites that drive runs through the CLI but whose subject is not the sandbox (resume
 * after a kill, rollback, CLI basics, the interactive prompts): a run refuses to start without a
 * working bubblewrap unless the user opts out, so where bubblewrap is missing these suites opt out
 * as a user would (`[bash] sandbox = "off"`, or `--no-sandbox`) and still run. Where it works they
 * keep the default, so CI (which has it, and fails a missing one under
 * `RATCHET_TEST_REQUIRE_ALL=1`) runs them sandboxed. The end-of-run summary names the files that
 * ran without it. Suites about the sandbox itself use `toolchain('bwrap')` and skip instead.
 *
 *   const sandbox = sandboxForThisMachine();
 *   describe(`kill -9, then ratchet resume${sandbox.note}`, () => { ... });
 *   await repo.write({ '.ratchet/config.toml': sandbox.config('[lint]\ncommand = "npm run lint"\n') });
 */
import { toolchainOrInstead } from './toolchains.js';

export interface SandboxForThisMachine {
  /** True when bubblewrap cannot work here, so the runs opt out of the sandbox. */
  off: boolean;
  /** `''` when the runs are sandboxed, else a note for the describe name saying they are not. */
  note: string;
  /** The CLI flags that opt out: `['--no-sandbox']` when off, else none. */
  flags: readonly string[];
  /** The same for `loadConfig({ flags })` (the library): `{ noSandbox: true }` when off, else none. */
  configFlags: { noSandbox?: true };
  /** `toml` (a `.ratchet/config.toml`), with `sandbox = "off"` in its `[bash]` table when off. */
  config(toml?: string): string;
  /** A repository's files, their `.ratchet/config.toml` (made when there is none) opting out when off. */
  files(files: Readonly<Record<string, string>>): Record<string, string>;
}

const BASH_TABLE = /^\[bash\][ \t]*$/m;

/**
 * Call it at the top of the test file, for the describe's note; harnesses may call it again in a
 * test (bubblewrap is probed once per file). Under `RATCHET_TEST_REQUIRE_ALL=1` a missing
 * bubblewrap throws, as `toolchain()` does.
 */
export function sandboxForThisMachine(): SandboxForThisMachine {
  const check = toolchainOrInstead('bwrap', 'runs unsandboxed ([bash] sandbox = "off" or --no-sandbox)');
  if (!check.missing)
    return {
      off: false,
      note: '',
      flags: [],
      configFlags: {},
      config: (toml = '') => toml,
      files: (files) => ({ ...files }),
    };
  return {
    off: true,
    note: check.note,
    // The summary lists the file once a run of it opts out, not when a suite skipped for another tool asks.
    get flags() {
      check.ranInstead();
      return ['--no-sandbox'];
    },
    get configFlags() {
      check.ranInstead();
      return { noSandbox: true } as const;
    },
    config: (toml) => {
      check.ranInstead();
      return withSandboxOff(toml);
    },
    files: (files) => {
      check.ranInstead();
      return { ...files, '.ratchet/config.toml': withSandboxOff(files['.ratchet/config.toml']) };
    },
  };
}

/** `toml` with `sandbox = "off"` in its `[bash]` table (added when there is none). */
export function withSandboxOff(toml = ''): string {
  if (/^\s*sandbox\s*=/m.test(toml)) throw new Error(`the config already sets [bash] sandbox:\n${toml}`);
  if (BASH_TABLE.test(toml)) return toml.replace(BASH_TABLE, '[bash]\nsandbox = "off"');
  return `${toml}${toml === '' || toml.endsWith('\n') ? '' : '\n'}[bash]\nsandbox = "off"\n`;
}
