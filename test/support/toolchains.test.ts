/**
 * The test-suite plumbing a fresh machine relies on: the end-of-run summary of missing toolchains,
 * and the configuration with which suites opt out of the sandbox where bubblewrap is missing.
 */
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { withSandboxOff } from './sandbox-for-this-machine.js';
import { toolchainSummary } from './toolchain-summary.js';
import type { ToolchainLogEntry } from './toolchains.js';

const BWRAP = {
  name: 'bwrap',
  what: 'bubblewrap',
  install: 'apt-get install -y bubblewrap',
  problem: '`bwrap` cannot run (ENOENT)',
} as const;
const GO = {
  name: 'go',
  what: 'Go',
  install: 'apt-get install -y golang-go',
  problem: '`go` cannot run (ENOENT)',
} as const;

describe('the summary of missing toolchains', () => {
  it('says nothing when no suite missed a tool', () => {
    expect(toolchainSummary([])).toEqual([]);
  });

  it('names each tool once with its install command, the files it skipped and the files that ran without it', () => {
    const entries: ToolchainLogEntry[] = [
      { ...GO, suite: 'test/verify/cargo-go.test.ts' },
      { ...BWRAP, suite: 'test/engine/tool-sandbox.test.ts' },
      { ...BWRAP, suite: 'test/e2e/resume-kill.test.ts', instead: 'runs unsandboxed' },
      { ...BWRAP, suite: 'test/e2e/cli-basics.test.ts', instead: 'runs unsandboxed' },
      { ...BWRAP, suite: 'test/e2e/resume-kill.test.ts', instead: 'runs unsandboxed' },
      { ...GO, suite: 'test/security/sandbox-toolchains.test.ts' },
    ];
    expect(toolchainSummary(entries)).toEqual([
      '',
      'Missing toolchains (2); install them to run every test as CI does:',
      '  bwrap: bubblewrap (`bwrap` cannot run (ENOENT))',
      '    install: apt-get install -y bubblewrap',
      '    skipped in 1 file(s): test/engine/tool-sandbox.test.ts',
      '    runs unsandboxed in 2 file(s): test/e2e/cli-basics.test.ts, test/e2e/resume-kill.test.ts',
      '  go: Go (`go` cannot run (ENOENT))',
      '    install: apt-get install -y golang-go',
      '    skipped in 2 file(s): test/security/sandbox-toolchains.test.ts, test/verify/cargo-go.test.ts',
      'CI (.ci/run) installs them all and sets RATCHET_TEST_REQUIRE_ALL=1, under which a missing one fails.',
    ]);
  });
});

describe('the configuration of a suite that opts out of the sandbox', () => {
  const sandboxOf = (toml: string) => parseConfigText(toml, 'config.toml').config.bash.sandbox;

  it('turns the sandbox off in a new [bash] table, or in the one the config has, keeping its settings', () => {
    expect(sandboxOf(withSandboxOff())).toBe('off');
    const own = '[lint]\ncommand = "node lint.mjs"\n\n[bash]\nenv = ["LINT_RED"]\n\n[tdd]\nrefactor = "never"\n';
    const off = withSandboxOff(own);
    expect(sandboxOf(off)).toBe('off');
    expect(parseConfigText(off, 'config.toml').config).toMatchObject({
      lint: { command: 'node lint.mjs' },
      bash: { env: ['LINT_RED'] },
      tdd: { refactor: 'never' },
    });
    expect(sandboxOf(withSandboxOff('[tdd]\nrefactor = "always"'))).toBe('off');
  });

  it('refuses a config that already chooses a sandbox setting', () => {
    expect(() => withSandboxOff('[bash]\nsandbox = "auto"\n')).toThrow(/already sets \[bash\] sandbox/);
  });
});
