/**
 * A Rust crate had no lint command: `init` proposed none though clippy is Rust's linter. With
 * `cargo clippy` working, `init` proposes `cargo clippy --all-targets -- -D warnings`; without it
 * (rustup's proxy is there without the component: `cargo clippy --version` fails), `init` writes
 * none and `doctor` says how to add it (built CLI).
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProjectRepo, ratchetEnv, type ProjectRepo } from '../support/e2e-run.js';
import { assertFreshBuild, describeResult, runCli } from '../support/run-cli.js';
import { toolchain } from '../support/toolchains.js';

const CLIPPY = 'cargo clippy --all-targets -- -D warnings';
const CRATE = {
  'Cargo.toml': '[package]\nname = "lints"\nversion = "0.1.0"\nedition = "2021"\n',
  'src/lib.rs': 'pub fn one() -> i32 {\n    1\n}\n',
};
const clippy = toolchain('clippy');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function crate(): Promise<ProjectRepo> {
  assertFreshBuild();
  const repo = await createProjectRepo(CRATE);
  cleanups.push(() => repo.cleanup());
  return repo;
}

const Init = z.object({ lintCommand: z.string().nullable() });

describe('the lint command of a Rust crate', () => {
  it.skipIf(clippy.missing)(`init proposes clippy when cargo clippy works${clippy.note}`, async () => {
    const repo = await crate();
    // The user's home: rustup's cargo finds its toolchain there.
    const env = { ...ratchetEnv(repo, null, null), HOME: process.env.HOME ?? repo.path('home') };
    const init = await runCli(['init', '--json'], { cwd: repo.dir, env });
    expect(init.exitCode, describeResult(init)).toBe(0);
    expect(Init.parse(JSON.parse(init.stdout)).lintCommand).toBe(CLIPPY);
    expect(readFileSync(join(repo.dir, '.ratchet', 'config.toml'), 'utf8')).toContain(`command = "${CLIPPY}"`);
  });

  it('without clippy, init proposes none and doctor says how to add it', async () => {
    const repo = await crate();
    // A cargo whose clippy is not installed, as rustup's proxy answers without the component.
    const bin = repo.path('bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      join(bin, 'cargo'),
      '#!/bin/sh\nif [ "$1" = clippy ]; then echo "error: clippy is not installed" >&2; exit 1; fi\nexit 0\n',
    );
    chmodSync(join(bin, 'cargo'), 0o755);
    const base = ratchetEnv(repo, null, null);
    const env = { ...base, PATH: [bin, base.PATH ?? process.env.PATH ?? ''].join(delimiter) };
    const init = await runCli(['init', '--json'], { cwd: repo.dir, env });
    expect(init.exitCode, describeResult(init)).toBe(0);
    expect(Init.parse(JSON.parse(init.stdout)).lintCommand).toBeNull();

    const cassette = repo.path('session.ndjson');
    writeFileSync(cassette, '');
    const doctor = await runCli(['doctor', '--json', '--no-baseline', '--provider', 'replay', '--cassette', cassette], {
      cwd: repo.dir,
      env,
    });
    const { checks } = z
      .object({
        checks: z.array(
          z.object({ name: z.string(), status: z.string(), detail: z.string(), hint: z.string().optional() }),
        ),
      })
      .parse(JSON.parse(doctor.stdout));
    const lint = checks.find((check) => check.name === 'lint');
    expect(lint, describeResult(doctor)).toMatchObject({ status: 'warn' });
    expect(lint?.hint).toContain('rustup component add clippy');
    expect(lint?.hint).toContain(`[lint] command = "${CLIPPY}"`);
  });
});
