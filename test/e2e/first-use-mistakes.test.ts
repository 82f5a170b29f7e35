/**
 * End to end: what a new user types on a first try, and what Ratchet answers (built CLI).
 */
import { existsSync } from 'node:fs';
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
