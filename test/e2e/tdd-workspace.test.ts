/**
 * End to end: a TDD cycle in an npm workspace (remark's shape: packages/* linked from the root
 * node_modules). The run's tests import the sibling package the run changed, not the one in
 * the user's checkout (which the sandbox hides).
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createProjectRepo, type ProjectRepo } from '../support/e2e-run.js';
import { oneCycleCassette } from '../support/one-cycle-cassette.js';
import { assertFreshBuild, describeResult, parseNdjson, runCli } from '../support/run-cli.js';
import { sandboxForThisMachine } from '../support/sandbox-for-this-machine.js';

const sandbox = sandboxForThisMachine();
const GREET = "import { shout } from 'words';\n\nexport function greet(name) {\n  return `Hello, ${shout(name)}`;\n}\n";
const GREET_TEST =
  "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { greet, greetQuietly } from '../index.js';\n\ntest('greets loudly', () => {\n  assert.equal(greet('ann'), 'Hello, ANN');\n});\n";
const QUIET_TEST = "\ntest('greets quietly', () => {\n  assert.equal(greetQuietly('ANN'), 'Hello, ann');\n});\n";

let repo: ProjectRepo | undefined;
beforeAll(() => assertFreshBuild());
afterEach(async () => {
  await repo?.cleanup();
});

describe(`a TDD cycle in an npm workspace (built CLI, replay)${sandbox.note}`, () => {
  it("tests the run's copy of a sibling package that GREEN changed", async () => {
    repo = await createProjectRepo({
      '.gitignore': 'node_modules/\n',
      'package.json': JSON.stringify({
        name: 'greetings',
        private: true,
        type: 'module',
        workspaces: ['packages/*'],
        scripts: { test: 'node --test' },
      }),
      'packages/words/package.json': JSON.stringify({ name: 'words', type: 'module', exports: './index.js' }),
      'packages/words/index.js': 'export function shout(text) {\n  return text.toUpperCase();\n}\n',
      'packages/greet/package.json': JSON.stringify({ name: 'greet', type: 'module', exports: './index.js' }),
      'packages/greet/index.js': `${GREET}\nexport function greetQuietly(name) {\n  return name;\n}\n`,
      'packages/greet/test/greet.test.js': GREET_TEST.replace(', greetQuietly', ''),
    });
    // What `npm install` makes of the workspaces: links from the root node_modules.
    mkdirSync(join(repo.dir, 'node_modules'));
    symlinkSync('../packages/words', join(repo.dir, 'node_modules', 'words'));
    symlinkSync('../packages/greet', join(repo.dir, 'node_modules', 'greet'));
    const cassette = repo.path('cycle.ndjson');
    writeFileSync(
      cassette,
      oneCycleCassette({
        item: 'greets quietly',
        testFile: 'packages/greet/test/greet.test.js',
        implFile: 'packages/greet/index.js',
        red: { 'packages/greet/test/greet.test.js': `${GREET_TEST}${QUIET_TEST}` },
        // The sibling package gains `whisper`, which greet imports through node_modules/words.
        green: {
          'packages/words/index.js':
            'export function shout(text) {\n  return text.toUpperCase();\n}\n\nexport function whisper(text) {\n  return text.toLowerCase();\n}\n',
          'packages/greet/index.js': `${GREET.replace('{ shout }', '{ shout, whisper }')}\nexport function greetQuietly(name) {\n  return \`Hello, \${whisper(name)}\`;\n}\n`,
        },
      }),
    );
    const run = await runCli(
      ['tdd', 'quiet greetings', '--provider', 'replay', '--cassette', cassette, '--json', ...sandbox.flags],
      { cwd: repo.dir, env: { ...repo.env, RATCHET_HOME: repo.home } },
    );
    expect(run.exitCode, describeResult(run)).toBe(0);
    const stages = parseNdjson(run.stdout).filter((event) => event.type === 'stage-end');
    expect(stages.filter((event) => event.stage === 'GREEN').map((event) => event.outcome)).toEqual(['accepted']);
    // The checkout's own packages and node_modules are as they were.
    expect(repo.run('status', '--porcelain')).toBe('');
  });
});
