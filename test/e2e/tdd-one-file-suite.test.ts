/**
 * End to end: a TDD cycle on a package whose whole suite is one file run with plain node
 * (remark's `node --conditions development test.js`, a file of node:test tests). Its tests are
 * read per test, and RED writing that file, which the test command names, is not reported as a
 * change to how the tests run.
 */
import { writeFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createProjectRepo, type ProjectRepo } from '../support/e2e-run.js';
import { oneCycleCassette } from '../support/one-cycle-cassette.js';
import { assertFreshBuild, describeResult, parseNdjson, runCli } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

const sandbox = sandboxForThisMachine();
const SUITE =
  "import assert from 'node:assert/strict';\nimport test from 'node:test';\nimport { words } from './index.js';\n\ntest('counts words', () => {\n  assert.equal(words('a b'), 2);\n});\n";
const NEW_TEST = "\ntest('ignores surrounding space', () => {\n  assert.equal(words('  a b  '), 2);\n});\n";

let repo: ProjectRepo | undefined;
beforeAll(() => assertFreshBuild());
afterEach(async () => {
  await repo?.cleanup();
});

describe(`a TDD cycle on a one-file suite run with plain node (built CLI, replay)${sandbox.note}`, () => {
  it('reads its tests and does not warn about RED writing the suite file', async () => {
    repo = await createProjectRepo({
      'package.json': JSON.stringify({
        name: 'words',
        type: 'module',
        scripts: { test: 'npm run test-api', 'test-api': 'node --conditions development test.js' },
      }),
      'index.js': "export function words(text) {\n  return text.split(' ').length;\n}\n",
      'test.js': SUITE,
    });
    const cassette = repo.path('cycle.ndjson');
    writeFileSync(
      cassette,
      oneCycleCassette({
        item: 'ignores surrounding space',
        testFile: 'test.js',
        implFile: 'index.js',
        red: { 'test.js': `${SUITE}${NEW_TEST}` },
        green: { 'index.js': 'export function words(text) {\n  return text.trim().split(/\\s+/).length;\n}\n' },
      }),
    );
    const run = await runCli(
      ['tdd', 'word counts', '--provider', 'replay', '--cassette', cassette, '--json', ...sandbox.flags],
      { cwd: repo.dir, env: { ...repo.env, RATCHET_HOME: repo.home } },
    );
    expect(run.exitCode, describeResult(run)).toBe(0);
    const events = parseNdjson(run.stdout);
    const red = events.find((event) => event.type === 'stage-end' && event.stage === 'RED');
    expect(red?.reason).toBe('1 new failing test(s) by assertion: test.js::ignores surrounding space; 1 passing');
    const warnings = events.filter((event) => event.type === 'warning').map((event) => String(event.message));
    expect(warnings.filter((message) => message.includes('decide how the tests run'))).toEqual([]);
  });
});
