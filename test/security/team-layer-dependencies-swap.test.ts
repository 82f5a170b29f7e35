/**
 * `team worktrees merge` runs the layer's tests, lint and typecheck in the iteration's worktree,
 * which shares the checkout's `node_modules`; the sandbox puts the link back before every command
 * should the merged code have swapped it. The restore was silent. Here a task's tests (the agents'
 * code) replace the shared link with a folder of their own whenever they run: the lint after them
 * finds the link restored, the merge says so, and the checkout's
 * `node_modules` is as it was (built CLI).
 */
import { lstatSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeResult, runCli, type CliResult } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';
import { seedImplementationIteration, teamTask } from '../support/team-iteration.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

const RESTORED = 'replaced or changed node_modules';
const sandbox = sandboxForThisMachine();

const SWAPS = `import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { alpha } from '../src/alpha.js';
try {
  rmSync('node_modules', { recursive: true, force: true });
  mkdirSync('node_modules/.bin', { recursive: true });
  writeFileSync('node_modules/.bin/eslint', '#!/bin/sh\\nexit 0\\n', { mode: 0o755 });
} catch {}
test('alpha', () => assert.equal(alpha(), 'alpha'));
`;

describe(`team worktrees merge: a layer whose tests swap the shared node_modules (built CLI)${sandbox.note}`, () => {
  let repo: TempRepo;
  let modules: string;
  let merge: CliResult;
  let checkoutBefore: string;

  beforeAll(async () => {
    repo = await createTempRepo({
      files: {
        '.gitignore': 'node_modules/\n',
        'package.json': JSON.stringify({ name: 'calc', type: 'module', scripts: { test: 'node --test' } }),
        // A command after the tests: the restore happens before it.
        '.ratchet/config.toml': '[lint]\ncommand = "node -e 0"\n',
        'test/base.test.js': "import test from 'node:test';\ntest('base', () => {});\n",
      },
    });
    modules = join(repo.dir, 'node_modules');
    await mkdir(join(modules, 'x'), { recursive: true });
    await writeFile(join(modules, 'x', 'index.js'), 'export const x = 1;\n');
    const home = repo.path('ratchet-home');
    const env = { ...repo.env, RATCHET_HOME: home };
    await seedImplementationIteration({
      projectRoot: repo.dir,
      home,
      agents: 1,
      description: 'units',
      maxTurns: 2,
      tasks: [teamTask('alpha', 'agent-1')],
    });
    const cli = (args: string[]) => runCli(['team', 'worktrees', ...args], { cwd: repo.dir, env });
    const setup = await cli(['setup', '--json']);
    expect(setup.exitCode, describeResult(setup)).toBe(0);
    const { tasks } = z
      .object({ tasks: z.array(z.object({ id: z.string(), worktree: z.string() })) })
      .parse(JSON.parse(setup.stdout));
    const alpha = tasks[0]?.worktree ?? '';
    await mkdir(join(alpha, 'src'), { recursive: true });
    await writeFile(join(alpha, 'src/alpha.js'), "export const alpha = () => 'alpha';\n");
    await writeFile(join(alpha, 'test/alpha.test.js'), SWAPS);
    checkoutBefore = repo.run('status', '--porcelain');
    merge = await cli(['merge', ...sandbox.flags]);
  }, 180_000);

  afterAll(async () => {
    await repo?.cleanup();
  });

  it('merges the layer and says the shared folder was restored', () => {
    expect(merge.exitCode, describeResult(merge)).toBe(0);
    expect(merge.stdout).toMatch(/Merged alpha: All 2 tests pass/);
    expect(merge.stdout).toContain(RESTORED);
  });

  it("left the checkout's node_modules and the checkout as they were", () => {
    expect(lstatSync(modules).isDirectory()).toBe(true);
    expect(readdirSync(modules)).toEqual(['x']);
    expect(repo.run('status', '--porcelain')).toBe(checkoutBefore);
  });
});
