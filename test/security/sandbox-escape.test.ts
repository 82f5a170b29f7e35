/**
 * Issue 11 (findings 2, 3, 4, 14) and 18.1: what a hostile model tries from the agent's Bash —
 * plant code in the dependencies and caches, read the SSH key, the checkout's `.env` and
 * `$RATCHET_HOME`, reach a listener on the host or the SSH agent, read Ratchet's environment,
 * remount `/` as root, leave jobs running, fork-bomb, fill a file, the memory or the disk — is
 * refused or harmless, and nothing outside the run changes. The same attacks run as root (this
 * process) and as an ordinary user (a child under setpriv). Needs bwrap and util-linux.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, linkSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../support/run-cli.js';
import { runSandboxAttacks, type AttackResult } from './support/sandbox-attacks.js';
import { toolchain } from '../support/toolchains.js';

const ResultsSchema = z.array(z.object({ name: z.string(), contained: z.boolean(), evidence: z.string() }));

function expectContained(results: readonly AttackResult[]): void {
  expect(results.length).toBeGreaterThan(15);
  const escaped = results.filter((result) => !result.contained);
  expect(escaped.map((result) => `${result.name}\n${result.evidence}`)).toEqual([]);
}

const bwrap = toolchain('bwrap');

describe.skipIf(bwrap.missing)(`the tool sandbox, attacked as a model would${bwrap.note}`, () => {
  let scratch = '';
  let homes = '';
  // In a hook, not while collecting: a skipped suite makes (and removes) nothing.
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'ratchet-attack-user-'));
    // The throwaway homes live outside the host's /tmp (which the sandbox replaces anyway).
    homes = mkdtempSync(join(PACKAGE_ROOT, '.attack-homes-'));
  });
  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
    rmSync(homes, { recursive: true, force: true });
  });

  it.runIf(process.getuid?.() === 0)(
    'holds as root',
    async () => {
      expectContained(await runSandboxAttacks(homes));
    },
    240_000,
  );

  it('holds as an ordinary user', () => {
    // The ordinary user cannot reach a Node.js under root's home: a link to it (or a copy) here.
    chmodSync(scratch, 0o755);
    chmodSync(homes, 0o777);
    const node = join(scratch, 'node');
    try {
      linkSync(process.execPath, node);
    } catch {
      copyFileSync(process.execPath, node);
    }
    chmodSync(node, 0o755);
    const asUser =
      process.getuid?.() === 0 ? ['setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups'] : [];
    const child = spawnSync(
      asUser[0] ?? node,
      [
        ...asUser.slice(1),
        ...(asUser.length > 0 ? [node] : []),
        '--import',
        'tsx',
        'test/security/support/attack-child.ts',
      ],
      {
        cwd: PACKAGE_ROOT,
        encoding: 'utf8',
        timeout: 240_000,
        env: {
          PATH: `${scratch}:/usr/local/bin:/usr/bin:/bin`,
          HOME: scratch,
          TMPDIR: tmpdir(),
          ATTACK_HOME_PARENT: homes,
        },
      },
    );
    const last = child.stdout.trim().split('\n').pop() ?? '';
    expect(child.status, `${child.stderr}\n${child.stdout}`).toBe(0);
    expectContained(ResultsSchema.parse(JSON.parse(last)));
  }, 240_000);
});
