/**
 * `doctor`'s baseline and `refactor verify` run the project's commands in a temporary worktree
 * that shares the checkout's `node_modules`, and put the link back before every command should
 * one have swapped it. They did so silently: a suite that replaced the shared folder with one of
 * its own (here the tests, before the lint runs) went unnoticed. Both now say so, and the
 * checkout's `node_modules` is as it was (built CLI).
 */
import { lstatSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProjectRepo, ratchetEnv, type ProjectRepo } from '../support/e2e-run.js';
import { assertFreshBuild, describeResult, runCli } from '../support/run-cli.js';

const RESTORED = 'replaced or changed node_modules';

/** Whenever it runs, the suite puts a folder with a runner of its own where the shared link was. */
const SWAPS = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
try {
  rmSync('node_modules', { recursive: true, force: true });
  mkdirSync('node_modules/.bin', { recursive: true });
  writeFileSync('node_modules/.bin/eslint', '#!/bin/sh\\nexit 0\\n', { mode: 0o755 });
} catch {}
test('one is one', () => assert.equal(1, 1));
`;

describe('doctor and refactor verify: a suite that swaps the shared node_modules', () => {
  let repo: ProjectRepo;
  let modules: string;

  beforeAll(async () => {
    assertFreshBuild();
    repo = await createProjectRepo({
      '.gitignore': 'node_modules/\n',
      'package.json': `${JSON.stringify({ name: 'swaps', private: true, type: 'module' })}\n`,
      // A second command after the tests: the restore happens before it.
      '.ratchet/config.toml': '[test]\ncommand = "node --test"\n\n[lint]\ncommand = "node -e 0"\n',
      'test/one.test.js': SWAPS,
    });
    modules = join(repo.dir, 'node_modules');
    await mkdir(join(modules, 'x'), { recursive: true });
    await writeFile(join(modules, 'x', 'index.js'), 'export const x = 1;\n');
  });

  afterAll(async () => {
    await repo?.cleanup();
  });

  it('doctor reports the restore as a warning', async () => {
    const cassette = repo.path('session.ndjson');
    await writeFile(cassette, '');
    const run = await runCli(['doctor', '--json', '--provider', 'replay', '--cassette', cassette], {
      cwd: repo.dir,
      env: ratchetEnv(repo, null, null),
    });
    const report = z
      .object({ checks: z.array(z.object({ name: z.string(), status: z.string(), detail: z.string() })) })
      .parse(JSON.parse(run.stdout));
    expect(
      report.checks.find((check) => check.name === 'dependencies'),
      describeResult(run),
    ).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining(RESTORED) as unknown,
    });
  }, 120_000);

  it('refactor verify prints the restore, and its --json lists it', async () => {
    const plain = await runCli(['refactor', 'verify'], { cwd: repo.dir, env: ratchetEnv(repo, null, null) });
    expect(plain.exitCode, describeResult(plain)).toBe(0);
    expect(plain.stderr).toContain(RESTORED);
    const json = await runCli(['refactor', 'verify', '--json'], { cwd: repo.dir, env: ratchetEnv(repo, null, null) });
    const parsed = z.object({ warnings: z.array(z.string()) }).parse(JSON.parse(json.stdout));
    expect(
      parsed.warnings.some((warning) => warning.includes(RESTORED)),
      describeResult(json),
    ).toBe(true);
  }, 120_000);

  it("left the checkout's node_modules and the checkout as they were", () => {
    expect(lstatSync(modules).isDirectory()).toBe(true);
    expect(readdirSync(modules)).toEqual(['x']);
    expect(repo.run('status', '--porcelain')).toBe('');
  });
});
