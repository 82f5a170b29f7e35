/**
 * End to end: `ratchet refactor plan --json`, `ratchet index --json` and `ratchet init` on
 * repositories shaped like the real projects where they once went wrong (issue 13, points 1-4;
 * fixtures in test/support/real-repo-fixtures.ts): Rust tests in a `#[cfg(test)]` module, private
 * Python modules tested under their public names, stubs / declaration files / types-only
 * modules / docs configuration planned like code, a goal planned in every file, and `mypy .`
 * overriding the files mypy's configuration names.
 */
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ATTRS, DEFU, FALLIBLE_ITERATOR, MORE_ITERTOOLS, SCOPEGUARD } from '../support/real-repo-fixtures.js';
import { describeResult, runCli } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

const PlanSchema = z.object({
  batches: z.array(
    z.object({
      id: z.string(),
      goal: z.string(),
      scope_globs: z.array(z.string()),
      allowed_operations: z.array(z.string()),
    }),
  ),
});
type Batch = z.infer<typeof PlanSchema>['batches'][number];

const repos: TempRepo[] = [];
afterAll(async () => {
  for (const repo of repos) await repo.cleanup();
});

async function repository(files: Record<string, string>): Promise<TempRepo> {
  const repo = await createTempRepo({ files });
  repos.push(repo);
  return repo;
}

const env = (repo: TempRepo): Record<string, string> => ({ RATCHET_HOME: repo.path('ratchet-home') });

async function plan(repo: TempRepo, goal?: string): Promise<Batch[]> {
  const args = ['refactor', 'plan', '--json', ...(goal === undefined ? [] : ['--goal', goal])];
  const result = await runCli(args, { cwd: repo.dir, env: env(repo) });
  expect(result.exitCode, describeResult(result)).toBe(0);
  return PlanSchema.parse(JSON.parse(result.stdout)).batches;
}

/** Every file any batch may change. */
const targets = (batches: Batch[]): string[] => batches.flatMap((batch) => batch.scope_globs);

describe('refactor plan on real project shapes (issue 13)', () => {
  it('fallible-iterator: src/test.rs is a test module, so no dead-code removal of #[test] functions and no tests for it', async () => {
    const repo = await repository(FALLIBLE_ITERATOR);
    const batches = await plan(repo);

    expect(targets(batches)).not.toContain('src/test.rs');
    expect(batches.map((batch) => batch.goal)).toEqual([]);
    const index = await runCli(['index', '--json'], { cwd: repo.dir, env: env(repo) });
    expect(index.exitCode, describeResult(index)).toBe(0);
    expect(JSON.parse(index.stdout)).toMatchObject({ sourceFiles: 2, testFiles: 1 });
  });

  it('scopeguard: a file with an inline #[cfg(test)] mod tests has tests, so a goal of adding tests plans nothing there', async () => {
    const repo = await repository(SCOPEGUARD);

    expect(await plan(repo)).toEqual([]);
    expect((await plan(repo, 'add tests')).map((batch) => batch.goal)).toEqual([]);
  });

  it('attrs: private modules covered by tests/test_<name>.py get no "Add tests"; stubs, docs/conf.py and typing_tests/ get nothing', async () => {
    const repo = await repository(ATTRS);
    const batches = await plan(repo);

    expect(batches.map((batch) => batch.goal)).toEqual(['Add tests for src/attr/_cmp.py']);
    expect(batches[0]?.scope_globs).toContain('**/test_cmp.py');
    expect(await plan(repo, 'split long functions')).toEqual([]);
  });

  it('more-itertools: no batch on more.pyi, __init__.pyi or docs/conf.py; "split long functions" only where one is', async () => {
    const repo = await repository(MORE_ITERTOOLS);

    expect((await plan(repo)).map((batch) => batch.goal)).toEqual(['Split long code in more_itertools/more.py']);
    const goal = await plan(repo, 'split long functions');
    expect(goal.map((batch) => [batch.goal, batch.scope_globs])).toEqual([
      ['split long functions (in more_itertools/more.py)', ['more_itertools/more.py']],
    ]);
  });

  it('defu: the types-only src/types.ts and the declaration file lib/defu.d.cts get no batch', async () => {
    const repo = await repository(DEFU);

    expect(await plan(repo)).toEqual([]);
    // A goal about none of the findings applies to every file of code, and only to code.
    const goal = await plan(repo, 'improve naming');
    expect(goal.map((batch) => batch.goal).sort()).toEqual([
      'improve naming (in lib/defu.cjs)',
      'improve naming (in src/_utils.ts)',
      'improve naming (in src/defu.ts)',
    ]);
  });
});

describe('init on a project configuring ruff and mypy (attrs)', () => {
  let repo: TempRepo;
  let path: string;

  beforeAll(async () => {
    repo = await repository(ATTRS);
    // mypy installed (a stand-in that does nothing), ruff not: no directory on PATH holds one.
    const bin = repo.path('bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, 'mypy'), '#!/bin/sh\nexit 0\n');
    await chmod(join(bin, 'mypy'), 0o755);
    const rest = (process.env.PATH ?? '')
      .split(delimiter)
      .filter((dir) => dir !== '' && !existsSync(join(dir, 'ruff')));
    path = [bin, ...rest].join(delimiter);
  });

  it('writes plain mypy (the configuration names its files) and says ruff is configured but not installed', async () => {
    const result = await runCli(['init'], { cwd: repo.dir, env: { ...env(repo), PATH: path } });
    expect(result.exitCode, describeResult(result)).toBe(0);

    expect(result.stdout).toContain('detected typecheck command: mypy (from pyproject.toml [tool.mypy])');
    expect(result.stdout).toContain(
      'ruff is configured in pyproject.toml [tool.ruff] but not installed (not on PATH): install it (pip install ruff) or set [lint] command = "..." to run another in VERIFY',
    );
    expect(result.stdout).not.toContain('no lint command detected');
    const config = readFileSync(join(repo.dir, '.ratchet', 'config.toml'), 'utf8');
    expect(config).toMatch(/^\[typecheck\]\n(?:#.*\n)*command = "mypy"$/m);
    expect(config).not.toContain('mypy .');
  });
});
