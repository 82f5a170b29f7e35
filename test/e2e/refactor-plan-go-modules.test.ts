/**
 * golang-lru's shape: the root module's `go test ./...` stops at `arc/`, a module of its own
 * (`arc/go.mod`), so a change there would pass every gate untested. `refactor plan` planned
 * batches there anyway; it leaves the nested module out now, says so with how to include it, and
 * plans there once the test command covers it (built CLI; the plan runs no Go).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProjectRepo, ratchetEnv, type ProjectRepo } from '../support/e2e-run.js';
import { assertFreshBuild, describeResult, runCli } from '../support/run-cli.js';

const CODE = (pkg: string) => `package ${pkg}

// Get returns the value.
func Get() int { return 1 }
`;

const GO_LRU = {
  'go.mod': 'module example.com/cache/v2\n\ngo 1.19\n',
  'lru.go': CODE('cache'),
  'arc/go.mod': 'module example.com/cache/arc/v2\n\ngo 1.18\n',
  'arc/arc.go': CODE('arc'),
};

const Plan = z.object({
  batches: z.array(z.object({ scope_globs: z.array(z.string()) })),
  untestedModules: z.array(z.string()),
});

describe('refactor plan in a repository with a nested Go module (built CLI)', () => {
  let repo: ProjectRepo;

  beforeAll(async () => {
    assertFreshBuild();
    repo = await createProjectRepo(GO_LRU);
  });
  afterAll(async () => {
    await repo?.cleanup();
  });

  // A goal about nothing the index checks plans a batch in every file of code it may.
  const plan = (args: string[] = []) =>
    runCli(['refactor', 'plan', '--goal', 'Use generics', ...args], {
      cwd: repo.dir,
      env: ratchetEnv(repo, null, null),
    });

  it('plans nothing in arc/, which `go test ./...` does not test, and says how to include it', async () => {
    const plain = await plan();
    expect(plain.exitCode, describeResult(plain)).toBe(0);
    expect(plain.stdout).toContain('Use generics (in lru.go)');
    expect(plain.stdout).not.toContain('arc/arc.go');
    expect(plain.stderr).toContain('No batch is planned in arc/');
    expect(plain.stderr).toContain('[test] command = "go test ./... && (cd arc && go test ./...)"');
    const json = Plan.parse(JSON.parse((await plan(['--json'])).stdout));
    expect(json.untestedModules).toEqual(['arc']);
    expect(json.batches.flatMap((batch) => batch.scope_globs)).toEqual(['lru.go']);
  });

  it('plans there once the test command covers the nested module', async () => {
    await repo.write({ '.ratchet/config.toml': '[test]\ncommand = "go test ./... ./arc/..."\n' });
    const json = Plan.parse(JSON.parse((await plan(['--json'])).stdout));
    expect(json.untestedModules).toEqual([]);
    expect(json.batches.flatMap((batch) => batch.scope_globs).sort()).toEqual(['arc/arc.go', 'lru.go']);
  });
});
