/**
 * End to end: a project whose suite skips some tests (autocfg's ignored doc-tests; here
 * node:test's `{ skip: true }`) gets through a TDD cycle. A test RED's run skipped may stay
 * skipped in GREEN: it never ran, so GREEN cannot have stopped it running.
 */
import { writeFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertFreshBuild, describeResult, parseNdjson, runCli } from '../support/run-cli.js';
import { createProjectRepo, type ProjectRepo } from '../support/e2e-run.js';
import { oneCycleCassette } from '../support/one-cycle-cassette.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

const sandbox = sandboxForThisMachine();
const TEST_HEAD =
  "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { sign } from '../src/sign.js';\n";
const SKIPPED =
  "\ntest('handles NaN', { skip: 'not decided yet' }, () => {\n  assert.ok(Number.isNaN(sign(Number.NaN)));\n});\n";
const NEW_TEST = "\ntest('sign of a negative number is -1', () => {\n  assert.equal(sign(-3), -1);\n});\n";

let repo: ProjectRepo | undefined;
beforeAll(() => assertFreshBuild());
afterEach(async () => {
  await repo?.cleanup();
});

describe(`a TDD cycle on a suite with a skipped test (built CLI, replay)${sandbox.note}`, () => {
  it('accepts GREEN while the skipped test stays skipped', async () => {
    repo = await createProjectRepo({
      'package.json': JSON.stringify({ name: 'signs', type: 'module', scripts: { test: 'node --test' } }),
      'src/sign.js': 'export function sign(x) {\n  return x > 0 ? 1 : 0;\n}\n',
      'test/sign.test.js': `${TEST_HEAD}\ntest('sign of a positive number is 1', () => {\n  assert.equal(sign(2), 1);\n});\n${SKIPPED}`,
    });
    const cassette = repo.path('cycle.ndjson');
    writeFileSync(
      cassette,
      oneCycleCassette({
        item: 'sign of a negative number is -1',
        testFile: 'test/sign.test.js',
        implFile: 'src/sign.js',
        red: {
          'test/sign.test.js': `${TEST_HEAD}\ntest('sign of a positive number is 1', () => {\n  assert.equal(sign(2), 1);\n});\n${SKIPPED}${NEW_TEST}`,
        },
        green: { 'src/sign.js': 'export function sign(x) {\n  return x > 0 ? 1 : x < 0 ? -1 : 0;\n}\n' },
      }),
    );
    const run = await runCli(
      ['tdd', 'sign of negative numbers', '--provider', 'replay', '--cassette', cassette, '--json', ...sandbox.flags],
      { cwd: repo.dir, env: { ...repo.env, RATCHET_HOME: repo.home } },
    );
    expect(run.exitCode, describeResult(run)).toBe(0);
    const greens = parseNdjson(run.stdout).filter((event) => event.type === 'stage-end' && event.stage === 'GREEN');
    expect(greens.map((event) => [event.attempt, event.outcome])).toEqual([[1, 'accepted']]);
  });
});
