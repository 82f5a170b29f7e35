/**
 * End to end: what a new user types on a first try, and what Ratchet answers (built CLI).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertFreshBuild, describeResult, runCli } from '../support/run-cli.js';
import { createTempRepo, type TempRepo } from '../support/temp-repo.js';

let repo: TempRepo;

beforeAll(() => assertFreshBuild());
beforeEach(async () => {
  repo = await createTempRepo({ files: { 'package.json': '{"name":"p","scripts":{"test":"node --test"}}\n' } });
});
afterEach(async () => {
  await repo.cleanup();
});

describe('a refactoring goal written where the directory goes (`ratchet refactor plan "<goal>"`)', () => {
  it('is refused with a hint that names --goal, and nothing is written', async () => {
    const goal = 'make the name detection easier to follow';
    for (const verb of ['plan', 'run']) {
      const result = await runCli(['refactor', verb, goal], { cwd: repo.dir, env: repo.env });
      expect(result.exitCode, describeResult(result)).toBe(2);
      expect(result.stderr).toContain(
        `${goal} is no directory: \`ratchet refactor ${verb}\` takes the project's directory there`,
      );
      expect(result.stderr).toContain(`ratchet refactor ${verb} --goal "${goal}"`);
    }
    const index = await runCli(['index', 'nothere'], { cwd: repo.dir, env: repo.env });
    expect(index.exitCode, describeResult(index)).toBe(2);
    expect(index.stderr).toContain('nothere is no directory: `ratchet index`');
    expect(index.stderr).not.toContain('--goal');
    expect(existsSync(join(repo.dir, '.ratchet'))).toBe(false);
  });
});

describe("a Go repository with a module of its own below the root (golang-lru's arc/)", () => {
  it('init says that `go test ./...` leaves it untested, and how to test it', async () => {
    const go = await createTempRepo({
      files: {
        'go.mod': 'module example.com/cache/v2\n\ngo 1.19\n',
        'lru.go': 'package cache\n',
        'arc/go.mod': 'module example.com/cache/arc/v2\n\ngo 1.18\n',
        'arc/arc.go': 'package arc\n',
      },
    });
    try {
      const init = await runCli(['init'], { cwd: go.dir, env: go.env });
      expect(init.exitCode, describeResult(init)).toBe(0);
      expect(init.stdout).toContain('detected test command: go test ./... (from go.mod)');
      expect(init.stdout).toContain('note: arc/ is a Go module of its own, which `go test ./...` here does not test');
      // Without a go.work, each module from its own directory: a command that works pasted as it is.
      expect(init.stdout).toContain('[test] command = "go test ./... && (cd arc && go test ./...)"');
    } finally {
      await go.cleanup();
    }
  });
});

describe('a run refused on a dirty tree (a package-lock.json npm install left untracked)', () => {
  it('names the changes in its hint', async () => {
    writeFileSync(join(repo.dir, 'package-lock.json'), '{}\n');
    const cassette = repo.path('unused.ndjson');
    writeFileSync(cassette, '{"cassette":1}\n');
    const run = await runCli(['tdd', 'anything', '--provider', 'replay', '--cassette', cassette], {
      cwd: repo.dir,
      env: { ...repo.env, RATCHET_HOME: repo.path('home') },
    });
    expect(run.exitCode, describeResult(run)).not.toBe(0);
    expect(run.stderr).toContain('The working tree has 1 uncommitted change (1 untracked).');
    expect(run.stderr).toContain('Commit or stash them (package-lock.json), or pass --allow-dirty');
  });
});
